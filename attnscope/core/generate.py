"""Generate an answer through the KV cache and keep each new token's attention rows.

The decode loop is the one a model runs in use: one forward over the prompt, then one
forward per new token with the cache (transformers' ``cache``, formerly ``past_key_values``), greedy by default or
sampled at a temperature with a seed. The capturing attention function
(``attnscope.capture.engine``) sees, in each step, the post-RoPE query of the single new
position and the cached keys, and keeps that row: no second pass over the sequence.
Sampling applies the temperature alone (no top-k, top-p or repetition penalty), so
transformers' ``generate(do_sample=True, temperature=T, top_k=0)`` after
``torch.manual_seed(S)`` picks the same tokens.

This module does not load models and does not print; Ctrl-C surfaces as
:class:`Interrupted` carrying the tokens generated so far.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from attnscope.capture import anatomy, engine
from attnscope.core.common import as_array, attention_layers
from attnscope.core.prompt.precheck import check_settings
from attnscope.core.prompt.segments import prompt_segments, segmented
from attnscope.core.prompt.spec import ChatSpec, Selection
from attnscope.core.prompt.tokens import Encoded, encode_prompt, readable
from attnscope.errors import AttnscopeError
from attnscope.model import Loaded
from attnscope.results.common import Token, Word
from attnscope.results.derive import generate_keys, step_numbers
from attnscope.results.generate import GenerateResult, GenerateStep, StopReason
from attnscope.results.segments import Segment

LAYER_GROUPS = 3
DETAIL = 20  # answer tokens detailed by default


class Interrupted(Exception):
    """Ctrl-C during generation: ``ids`` are the tokens generated before it."""

    def __init__(self, ids: list[int]) -> None:
        super().__init__(f"interrupted after {len(ids)} new token(s)")
        self.ids = ids


@dataclass
class Decoded:
    """What the decode loop produced: new ids, their probabilities and, with capture,
    one (layer, head, key) fp32 row tensor per new token (keys 0..index-1)."""

    ids: list[int]
    probs: list[float]
    rows: list[torch.Tensor]
    stop: StopReason


def check_room(prompt_len: int, max_new_tokens: int, max_positions: int | None) -> None:
    """The prompt plus every new token must fit in the model's positions."""
    if max_positions and prompt_len + max_new_tokens > max_positions:
        raise AttnscopeError(
            "too_long_generate", n=prompt_len, k=max_new_tokens, total=prompt_len + max_new_tokens, limit=max_positions
        )


def stop_ids(model: Any, tokenizer: Any) -> list[int]:
    """Token ids that end the answer: the generation config's eos ids and the tokenizer's eos."""
    out: list[int] = []
    config = getattr(model, "generation_config", None)
    value = getattr(config, "eos_token_id", None)
    for v in value if isinstance(value, (list, tuple)) else [value]:
        if isinstance(v, int) and v not in out:
            out.append(v)
    eos = getattr(tokenizer, "eos_token_id", None)
    if isinstance(eos, int) and eos not in out:
        out.append(eos)
    return out


def decode(
    model: Any,
    ids: Sequence[int],
    *,
    max_new_tokens: int,
    stop: Sequence[int] = (),
    temperature: float | None = None,
    seed: int | None = None,
    layers: Sequence[int] | None = None,
    heads: Sequence[int] | None = None,
    keep_rows: bool = True,
    on_token: Callable[[list[int]], None] | None = None,
    on_rows: Callable[[torch.Tensor], None] | None = None,
) -> Decoded:
    """Generate up to ``max_new_tokens`` after ``ids`` with the KV cache, one forward per token.

    With ``keep_rows`` each step keeps the new token's rows for ``layers`` (default all)
    and ``heads`` (default all), captured inside that step's own forward. ``on_token`` is
    called with the new ids after each step, ``on_rows`` before it with that step's rows (layer, head,
    keys) when they are kept. KeyboardInterrupt, from Ctrl-C or raised by either callback to stop,
    becomes :class:`Interrupted`.
    """
    engine.prepare(model)
    n_layers = anatomy.of(model).n_layers
    request = engine.Request(
        positions=None,
        layers=frozenset(range(n_layers) if layers is None else layers),
        stop=False,
        heads=None if heads is None else frozenset(heads),
    )
    device = next(model.parameters()).device
    generator = None
    if temperature is not None:
        generator = torch.Generator(device=device)
        generator.manual_seed(seed if seed is not None else torch.seed())
    stop_set = set(stop)
    new: list[int] = []
    probs: list[float] = []
    rows: list[torch.Tensor] = []
    reason: StopReason = "max_new_tokens"
    step_input = torch.tensor([list(ids)], device=device)  # (1, T) the prompt, then (1, 1) per step
    past: Any = None
    try:
        with torch.inference_mode():
            for _ in range(max_new_tokens):
                with engine.session(request) if keep_rows else contextlib.nullcontext() as captured:
                    out = model(input_ids=step_input, cache=past, use_cache=True, logits_to_keep=1)
                past = out.cache
                logits = out.logits[0, -1].float()  # (vocab,)
                if temperature is None:
                    dist = torch.softmax(logits, dim=-1)
                    token = int(torch.argmax(logits))
                else:
                    dist = torch.softmax(logits / temperature, dim=-1)
                    token = int(torch.multinomial(dist[None], num_samples=1, generator=generator)[0, 0])
                if captured is not None:
                    order = sorted(request.layers)
                    keys = len(ids) + len(new)  # every key so far, the new token's own included
                    rows.append(torch.stack([_every_key(captured.rows[layer][0, :, 0, :], keys) for layer in order]))
                    if on_rows is not None:
                        on_rows(rows[-1])
                new.append(token)
                probs.append(float(dist[token]))
                if on_token is not None:
                    on_token(new)
                if token in stop_set:
                    reason = "eos"
                    break
                step_input = torch.tensor([[token]], device=device)  # (1, 1)
    except KeyboardInterrupt:
        raise Interrupted(new) from None
    order = sorted(request.layers)
    heads_kept = None if request.heads is None else sorted(request.heads)
    for step_rows in rows:  # (L, H, keys): the layer and head are named only when a value is not finite
        if not engine.all_finite(step_rows):
            engine.check_finite({layer: step_rows[i][None, :, None, :] for i, layer in enumerate(order)}, heads_kept)
    return Decoded(ids=new, probs=probs, rows=rows, stop=reason)


def _every_key(row: torch.Tensor, keys: int) -> torch.Tensor:
    """(H, kv_len) -> (H, keys). A sliding-window layer's cache holds only the last kv_len keys, so
    its row covers those; the keys it no longer holds get weight 0 (they are outside the window)."""
    missing = keys - row.shape[-1]
    return row if missing <= 0 else torch.nn.functional.pad(row, (missing, 0))  # (H, keys)


def answer_tokens(tokenizer: Any, enc: Encoded, new_ids: Sequence[int]) -> tuple[str, list[Token], list[Word]]:
    """The text, tokens and words of prompt + answer. The prompt's tokens keep their
    records; a token that holds part of a character the answer never finished (the
    answer stopped mid-character) is labelled from its own bytes."""
    from attnscope.core.prompt.tokens import _token_bytes

    ids = list(enc.ids) + list(new_ids)
    pieces = _token_bytes(tokenizer, list(new_ids))
    if pieces is not None:
        try:
            text = enc.text + b"".join(pieces).decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            tokens, words = readable(tokenizer, text, ids)
            return text, tokens, words
    # Fallback: each answer token decoded alone, one word each.
    tokens = list(enc.tokens)
    words = list(enc.words)
    text = enc.text
    for offset, tid in enumerate(new_ids):
        piece = str(tokenizer.decode([tid]))
        index = len(enc.ids) + offset
        word = len(words)
        tokens.append(
            Token(
                index=index,
                id=int(tid),
                text=piece,
                start=len(text),
                end=len(text) + len(piece),
                word=word,
                label=piece.strip() or "␣",
            )
        )
        words.append(Word(index=word, text=piece.strip() or "␣", tokens=[index]))
        text += piece
    return text, tokens, words


def pick_detail(steps: list[int] | None, n: int) -> list[int]:
    """The steps to detail: the chosen ones that exist, or by default the first DETAIL."""
    if steps is None:
        return list(range(min(n, DETAIL)))
    return [s for s in steps if s < n]


def layer_groups(layers: Sequence[int], n: int = LAYER_GROUPS) -> list[list[int]]:
    """Up to ``n`` runs of consecutive selected layers of (nearly) equal size."""
    n = min(n, len(layers))
    return [list(layers[i * len(layers) // n : (i + 1) * len(layers) // n]) for i in range(n)]


def _segments_of(enc: Encoded, n_new: int) -> list[Segment]:
    """The prompt's segments (one "prompt" segment for a plain prompt), then the answer's."""
    n_prompt = len(enc.ids)
    segments = prompt_segments(enc.segments, n_prompt)
    return [*segments, Segment(index=len(segments), kind="answer", tokens=list(range(n_prompt, n_prompt + n_new)))]


def build_result(
    loaded: Loaded,
    enc: Encoded,
    decoded: Decoded,
    layers: list[int],
    heads: list[int],
    max_new_tokens: int,
    temperature: float | None,
    seed: int | None,
    detail: list[int] | None = None,
) -> GenerateResult:
    """The result: tokens of prompt + answer with segments, and per step the raw rows and what they add up to."""
    info = loaded.info
    groups_per_kv = anatomy.of(loaded.model).groups
    n_prompt, n_new = len(enc.ids), len(decoded.ids)
    text, plain, words = answer_tokens(loaded.tokenizer, enc, decoded.ids)
    segments = _segments_of(enc, n_new)
    tokens = segmented(plain, segments)
    groups = layer_groups(layers)
    keys = generate_keys(tokens, segments, len(words), n_prompt, layers, groups)
    steps = []
    for step, (tid, prob, rows) in enumerate(zip(decoded.ids, decoded.probs, decoded.rows, strict=True)):
        index = n_prompt + step  # rows: (L, H, keys) with keys == index
        step_rows = as_array(rows)  # (L, H, keys) fp32, kept as it is: to_json writes it out
        numbers = step_numbers(step_rows, keys, layers, heads)
        steps.append(
            GenerateStep(
                index=index,
                id=tid,
                text=tokens[index].text,
                prob=prob,
                weights=step_rows,
                segments=numbers.segments,
                group_segments=numbers.group_segments,
                top_words=numbers.top_words,
                prompt_heads=numbers.prompt_heads,
            )
        )
    return GenerateResult(
        model=info,
        text=text,
        chat=enc.chat,
        tokens=tokens,
        words=words,
        segments=segments,
        template=enc.template,
        prompt_len=n_prompt,
        layers=list(layers),
        heads=list(heads),
        kv_heads=[h // groups_per_kv for h in heads],
        layer_groups=groups,
        max_new_tokens=max_new_tokens,
        temperature=temperature,
        seed=seed,
        stop=decoded.stop,
        steps=steps,
        detail=pick_detail(detail, len(steps)),
    )


def generate(
    loaded: Loaded,
    prompt: str | None,
    *,
    chat: ChatSpec | None = None,
    max_new_tokens: int = 20,
    temperature: float | None = None,
    seed: int | None = None,
    selection: Selection | None = None,
    steps: Sequence[int] | None = None,
    on_token: Callable[[list[int]], None] | None = None,
) -> GenerateResult:
    """The model's answer through its KV cache, with each new token's attention rows from the same
    cached step. ``prompt``: the text, or with ``chat.messages`` the last user turn; greedy unless
    ``temperature`` is given; ``steps``: answer tokens (from 0) the view details (None: the first 20);
    ``on_token`` is called with the answer's ids after each new token."""
    check_settings(max_new_tokens, temperature, seed)
    enc = encode_prompt(loaded.tokenizer, prompt, chat)
    selection = selection or Selection()
    info = loaded.info
    layers = attention_layers(info, selection.layer_indices(info.num_hidden_layers))
    heads = selection.head_indices(info.num_attention_heads)
    check_room(len(enc.ids), max_new_tokens, anatomy.of(loaded.model).max_positions)
    decoded = decode(
        loaded.model,
        enc.ids,
        max_new_tokens=max_new_tokens,
        stop=stop_ids(loaded.model, loaded.tokenizer),
        temperature=temperature,
        seed=seed,
        layers=layers,
        heads=heads,
        on_token=on_token,
    )
    detail = None if steps is None else list(steps)
    return build_result(loaded, enc, decoded, layers, heads, max_new_tokens, temperature, seed, detail)
