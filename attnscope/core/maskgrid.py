"""The note's mask grids, in pure Python: causal, padding, and the two combined.

``causal(n)`` is the rule ``key_pos <= query_pos``; ``combined(attention_mask)`` adds
the padding mask (a pad key gets weight 0); ``padded_rows`` are the query rows that are
pads themselves, drawn as ``-  -  -  -`` because their result is not used.
``illustration`` builds the result the note draws in its "causal mask와 padding mask"
section (N=4, one pad on the left by default); its words come from the view.

This module imports neither torch nor transformers (the illustration must answer at
once), and it never reads a model: the real-mode check against the model's own mask
lives in ``attnscope.core.mask``.
"""

from __future__ import annotations

from attnscope.core.prompt.spec import one_of
from attnscope.errors import AttnscopeError
from attnscope.results.common import PADDING_SIDES, PaddingSide
from attnscope.results.mask import MaskResult, MaskSequence

Side = PaddingSide
SIDES: tuple[Side, ...] = PADDING_SIDES
MAX_ILLUSTRATION = 256
DEFAULT_MAX_SIZE = 24


def causal(n: int) -> list[list[int]]:
    """[query_pos][key_pos]: 1 where key_pos <= query_pos."""
    return [[1 if j <= i else 0 for j in range(n)] for i in range(n)]


def combined(attention_mask: list[int]) -> list[list[int]]:
    """[query_pos][key_pos]: the causal grid with every pad key (attention_mask 0) set to 0."""
    n = len(attention_mask)
    return [[1 if j <= i and attention_mask[j] else 0 for j in range(n)] for i in range(n)]


def windowed(grid: list[list[int]], window: int) -> list[list[int]]:
    """``grid`` as a sliding-window layer sees it: a key ``window`` or more positions before the
    query set to 0 too (a key k is read when k > q - window, transformers' sliding-window mask)."""
    return [[v if i - j < window else 0 for j, v in enumerate(row)] for i, row in enumerate(grid)]


def padded_rows(attention_mask: list[int]) -> list[int]:
    return [i for i, m in enumerate(attention_mask) if not m]


def side_mask(size: int, pad: int, side: Side) -> list[int]:
    """The 2D attention_mask row of one sequence of ``size`` positions with ``pad`` pads."""
    real = size - pad
    return [0] * pad + [1] * real if side == "left" else [1] * real + [0] * pad


def shown_positions(n: int, max_size: int) -> list[int]:
    """All positions, or the first max_size//2 and the last max_size - max_size//2."""
    if n <= max_size:
        return list(range(n))
    head = max_size // 2
    tail = max_size - head
    return list(range(head)) + list(range(n - tail, n))


def check_max_size(max_size: int) -> None:
    if max_size < 4:
        raise AttnscopeError("use_or_more", arg="max_size", value=max_size, k="4")


def illustration(size: int = 4, pad: int = 1, side: Side = "left", max_size: int = DEFAULT_MAX_SIZE) -> MaskResult:
    """The note's figure for a sequence of ``size`` positions with ``pad`` pads on ``side``."""
    where = one_of(side, SIDES, "side")
    if not 1 <= size <= MAX_ILLUSTRATION:
        raise AttnscopeError("use_range", arg="size", value=size, a="1", b=MAX_ILLUSTRATION)
    if pad < 0:
        raise AttnscopeError("pad_negative", arg="pad", value=pad)
    if pad >= size:
        raise AttnscopeError("pad_size", arg="pad", other="size", pad=pad, size=size)
    check_max_size(max_size)
    attention_mask = side_mask(size, pad, where)
    pads = padded_rows(attention_mask)
    seq = MaskSequence(
        tokens=[str(i) for i in range(size)],
        attention_mask=attention_mask,
        causal=causal(size),
        combined=combined(attention_mask),
        padded_rows=pads,
    )
    return MaskResult(
        mode="illustration",
        side=where,
        sequences=[seq],
        shown_positions=shown_positions(size, max_size),
        max_size=max_size,
    )
