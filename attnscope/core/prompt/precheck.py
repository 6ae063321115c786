"""Checks that need no weights: run before torch is imported and before the model loads.

A typo in the layers, heads, query text or the prompt should be answered in well
under a second, not after a model load. These checks take the counts read from the
config (``attnscope.model.model_shape``) and the raw prompt text, and raise the same errors the
core raises later, with the same words. :func:`precheck` runs them all before a load:
it reads the config, and the tokenizer alone only for a text that just the chat template
could hold. The other functions are pure Python: no torch, no tokenizer, no disk.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from attnscope.core.prompt.spec import Selection
from attnscope.errors import AttnscopeError

_NAMES = {"query": ("query", "occurrence"), "key": ("key", "key_occurrence")}


def check_selection(
    selection: Selection | None, num_hidden_layers: int | None, num_attention_heads: int | None
) -> None:
    """The selected layers and heads against the config's counts (skipped where a count is unknown)."""
    if selection is None:
        return
    if num_hidden_layers:
        selection.layer_indices(num_hidden_layers)
    if num_attention_heads:
        selection.head_indices(num_attention_heads)


def _occurrences(text: str, needle: str) -> int:
    count, at = 0, text.find(needle)
    while at >= 0:
        count += 1
        at = text.find(needle, at + 1)
    return count


def _token_name(text: str) -> bool:
    """``text`` could be the name of a special token the tokenizer adds on its own (``<bos>``, ``<s>``)."""
    name = text.strip()
    return len(name) > 2 and name.startswith("<") and name.endswith(">")


def check_query_text(
    prompts: Sequence[str],
    query: str | None,
    occurrence: int | None = None,
    *,
    chat: bool = False,
    system: str | None = None,
    role: Literal["query", "key"] = "query",
) -> bool:
    """Whether ``query`` is settled by the prompts' characters; raise when it is wrong.

    Without a chat template the text the model reads is the prompt itself, so a query that is not
    in it (or an ``occurrence`` beyond its count) is an error here, worded as the core words
    it; the words listed are the prompt's whitespace-separated words, as the core lists them.
    With ``chat`` the template adds text of its own: a query found in the prompt or the
    system message is settled, one not found is returned as unsettled (False) for the caller
    to check after loading the tokenizer alone. ``role`` says whether the text is the query
    or the key, and so what the errors call it.
    """
    opt, occ_opt = _NAMES[role]
    if query is None:
        return True
    if not query.strip():
        raise AttnscopeError("is_empty", arg=opt)
    for prompt in prompts:
        hits = _occurrences(prompt, query)
        if chat:
            hits += _occurrences(system or "", query)
            if hits == 0:
                return False
            continue  # the template may repeat text; the count is the core's to check
        if hits == 0 and _token_name(query):
            return False  # a special token the tokenizer prepends (<bos>) is found by its name
        if hits == 0:
            words = prompt.split()
            shown = ", ".join(words[:30] + (["…"] if len(words) > 30 else []))
            raise AttnscopeError("not_in_prompt", arg=opt, text=repr(query), words=shown)
        if occurrence is not None and not 1 <= occurrence <= hits:
            raise AttnscopeError("occurrence_range", arg=occ_opt, n=occurrence, text=repr(query), count=hits)
    return True


def precheck(
    model: str | None,
    revision: str | None,
    *,
    selection: Selection | None = None,
    prompts: Sequence[str] = (),
    find: Sequence[tuple[Literal["query", "key"], str | None, int | None]] = (),
    chat: bool = False,
    system: str | None = None,
    messages: Sequence[Any] | None = None,
    shape_checks: Sequence[Callable[[Any], None]] = (),
    tokenizer_checks: Sequence[Callable[[Any], object]] = (),
    progress: Callable[[Any], None] = lambda message: None,
) -> Any:
    """Everything about a run that can be checked before its model loads; the tokenizer when one
    was loaded for the checks (the model load then reuses it), else None.

    The model reference and the ``selection`` against the config's counts, then each ``find``
    entry (query or key, text, occurrence) against the ``prompts``' characters; a text that only
    the chat template could hold is checked after loading the tokenizer alone (``progress``
    reports that load). With ``messages`` (a conversation; ``prompts`` then holds at most its
    last user turn) a text is always checked in the rendered conversation, since any message
    may hold it. Then each of ``shape_checks`` gets the config's counts (``ModelShape``) and
    each of ``tokenizer_checks`` the tokenizer, loaded alone (no weights, no torch).
    """
    from attnscope.model import load_tokenizer, model_shape

    shape = model_shape(model, revision)
    check_selection(selection, shape.num_hidden_layers, shape.num_attention_heads)
    for check in shape_checks:
        check(shape)
    unsettled = [
        (role, text, occ)
        for role, text, occ in find
        if (messages is not None and text is not None)
        or not check_query_text(prompts, text, occ, chat=chat, system=system, role=role)
    ]
    if not unsettled and not tokenizer_checks:
        return None
    from attnscope.core.prompt.tokens import encode, find_span

    tokenizer = load_tokenizer(model, revision, progress)
    for asked in tokenizer_checks:
        asked(tokenizer)
    if not unsettled:
        return tokenizer
    if not chat and messages is None:  # a token's name: the core's own search finds it or words the error
        for role, text, occ in unsettled:
            for prompt in prompts:
                find_span(encode(tokenizer, prompt), text or "", occ, role=role)
        return tokenizer
    if messages is not None:
        conversation = prompts[0] if prompts else None
        templated = [encode(tokenizer, conversation, system=system, messages=messages).text]
    else:
        templated = [encode(tokenizer, prompt, chat=True, system=system).text for prompt in prompts]
    for role, text, occ in unsettled:
        check_query_text(templated, text, occ, role=role)
    return tokenizer


def check_settings(max_new_tokens: int, temperature: float | None, seed: int | None) -> None:
    """``generate``'s decoding settings: at least one new token, a positive temperature, a seed
    only with a temperature."""
    if max_new_tokens <= 0:
        raise AttnscopeError("at_least", arg="max_new_tokens", k="1", value=max_new_tokens)
    if temperature is not None and not temperature > 0:
        raise AttnscopeError("temperature", arg="temperature", value=temperature)
    if seed is not None and temperature is None:
        raise AttnscopeError("seed_needs_temperature", arg="seed")
