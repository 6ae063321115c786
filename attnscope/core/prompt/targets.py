"""The causal commands' shared inputs: the metric's tokens (a target, and a foil, each one
token, given as text or as an id), query positions, and the checks the CLI runs before the
weights load.

Pure Python over the tokenizer (no torch), so a bad target is answered after loading the
tokenizer alone. This module does not print.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from attnscope.core.prompt.spec import Indices, resolve, shown
from attnscope.core.prompt.tokens import readable
from attnscope.errors import AttnscopeError
from attnscope.results.common import Metric


def _label(tokenizer: Any, token_id: int) -> str:
    """The token's text (its leading space kept); a piece of a character's bytes as its raw token string."""
    text = str(tokenizer.decode([token_id]))
    return text if text and "\ufffd" not in text else str(tokenizer.convert_ids_to_tokens(token_id))


TokenSpec: TypeAlias = str | int
"""One token: its text (``" 사"``, which must be exactly one token) or its id in the vocabulary."""


@dataclass(frozen=True)
class Answer:
    """The tokens the causal metric reads at the last position: log P(``target``), or with a
    ``foil`` the logit difference logit(target) - logit(foil). Each is one token, given as text
    or as an id (:data:`TokenSpec`)."""

    target: TokenSpec
    foil: TokenSpec | None = None


def token_id(tokenizer: Any, token: TokenSpec | None, name: str) -> int | None:
    """The id of ``token`` (an id as given, or the one token a text is); an error that says how
    a text tokenizes when it is more (or less) than one token. ``name``: 'target' or 'foil'."""
    size = len(tokenizer)
    if isinstance(token, int):
        if isinstance(token, bool) or not 0 <= token < size:
            raise AttnscopeError("causal_id_range", arg=f"{name}_id", value=token, size=size, range=f"0-{size - 1}")
        return token
    if token is None:
        return None
    if token == "":
        raise AttnscopeError("is_empty", arg=name)
    ids = [int(i) for i in tokenizer(token, add_special_tokens=False)["input_ids"]]
    if len(ids) != 1:
        tokens, _ = readable(tokenizer, token, ids)
        shown = " + ".join(f"{tok.label!r} ({tok.id})" for tok in tokens) or "nothing"
        raise AttnscopeError(
            "causal_not_one_token", arg=name, text=repr(token), n=len(ids), shown=shown, other=f"{name}_id"
        )
    return ids[0]


def resolve_metric(tokenizer: Any, answer: Answer) -> Metric:
    """The metric for an answer's target (and its foil)."""
    if not isinstance(answer, Answer):
        raise AttnscopeError("answer_type", value=repr(answer))
    tid = token_id(tokenizer, answer.target, "target")
    fid = token_id(tokenizer, answer.foil, "foil")
    if tid is None:
        raise AttnscopeError("causal_no_target", arg="target", other="target_id")
    if fid == tid:
        raise AttnscopeError("causal_foil_same_id", arg="foil", other="target", id=tid)
    return Metric(
        kind="logprob" if fid is None else "logit_diff",
        target_id=tid,
        foil_id=fid,
        target=_label(tokenizer, tid),
        foil=None if fid is None else _label(tokenizer, fid),
    )


def positions(items: Indices | None, length: int, name: str = "pos") -> list[int]:
    """Token positions (negative counts from the end) in a prompt of ``length`` tokens; None: all."""
    try:
        return resolve(items, length, "position")
    except AttnscopeError:
        raise AttnscopeError(
            "causal_positions",
            arg=name,
            value=shown(items),
            n=length,
            range=f"0-{length - 1}",
            back=f"-1 to -{length}",
        ) from None


def check_mean(mode: str, n_tokens: int, mean_over: object | None) -> None:
    """The mean over one position is the head's own output: refuse it."""
    if mode == "mean" and mean_over is None and n_tokens < 2:
        raise AttnscopeError("causal_mean_one", arg="mode", other="mean_over")


def check_window(window: int | None, n_layers: int | None) -> None:
    """A knockout window of 1 to ``n_layers`` layers."""
    if window is None:
        return
    if isinstance(window, bool) or window < 1:
        raise AttnscopeError("causal_window_small", arg="window", window=window)
    if n_layers and window > n_layers:
        raise AttnscopeError("causal_window_big", arg="window", window=window, n=n_layers)


def check_lengths(clean: Sequence[int], corrupt: Sequence[int], align: bool) -> None:
    """Clean and corrupt token ids of one length; with ``align``, prompts that end in the same token
    (positions are then paired from the end)."""
    if len(clean) != len(corrupt) and not align:
        raise AttnscopeError("causal_lengths", arg="align", a=len(clean), b=len(corrupt))
    if align and len(clean) != len(corrupt) and clean[-1] != corrupt[-1]:
        raise AttnscopeError("causal_align_end", arg="align", a=clean[-1], b=corrupt[-1])
