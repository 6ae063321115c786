"""The note's mask grids, in pure Python: causal, padding, and the two combined.

``causal(n)`` is the rule ``key_pos <= query_pos``; ``combined(attention_mask)`` adds
the padding mask (a pad key gets weight 0); ``padded_rows`` are the query rows that are
pads themselves, drawn as ``-  -  -  -`` because their result is not used.
``illustration`` builds the result the note draws in its "causal mask와 padding mask"
section (N=4, one pad on the left by default).

This module imports neither torch nor transformers (the illustration must answer at
once), and it never reads a model: the real-mode check against the model's own mask
lives in ``attnscope.core.mask``.
"""

from __future__ import annotations

from attnscope.errors import AttnscopeError
from attnscope.results.mask import MaskResult, MaskSequence

SIDES = ("left", "right")
MAX_ILLUSTRATION = 256
DEFAULT_MAX_SIZE = 24

LEGEND_KO = "행: 계산하는 위치, 열: 참고하는 위치, 1 = 참고함, . = 비율 0"
CAUSAL_TITLE_KO = "causal mask만"
PAD_REMARK_KO = "빈칸 자리라 결과를 쓰지 않는다"

# The note's three sentences under the figure; the third depends on where the pads are.
LINE_CAUSAL_KO = "causal mask는 위치 관계만으로 정해져서 어떤 입력이든 모양이 같다."
LINE_PADDING_KO = "padding mask는 입력마다 빈칸이 어디에 몇 개 있는지에 따라 달라진다."
LINE_LEFT_KO = "빈칸이 앞쪽에 있으면 causal mask만으로는 빈칸을 가릴 수 없어서 둘을 함께 쓴다."
LINE_RIGHT_KO = "빈칸이 뒤쪽에 있으면 진짜 토큰의 행은 causal mask만으로도 빈칸을 보지 않는다."
LINE_RIGHT_2_KO = "padding mask는 빈칸 행만 바꾸고, 그 행의 결과는 쓰지 않는다."
LINE_NONE_KO = "빈칸이 없으면 padding mask는 아무것도 지우지 않아 causal mask와 같다."


def causal(n: int) -> list[list[int]]:
    """[query_pos][key_pos]: 1 where key_pos <= query_pos."""
    return [[1 if j <= i else 0 for j in range(n)] for i in range(n)]


def combined(attention_mask: list[int]) -> list[list[int]]:
    """[query_pos][key_pos]: the causal grid with every pad key (attention_mask 0) set to 0."""
    n = len(attention_mask)
    return [[1 if j <= i and attention_mask[j] else 0 for j in range(n)] for i in range(n)]


def padded_rows(attention_mask: list[int]) -> list[int]:
    return [i for i, m in enumerate(attention_mask) if not m]


def side_mask(size: int, pad: int, side: str) -> list[int]:
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


def condensed_note_ko(n: int, max_size: int) -> str:
    head = max_size // 2
    return f"격자를 줄였다: {n}개 위치 중 처음 {head}개와 마지막 {max_size - head}개만 그린다 (--max-size로 바꾼다)."


def check_max_size(max_size: int) -> None:
    if max_size < 4:
        raise AttnscopeError(f"--max-size {max_size}: use 4 or more")


def _subject(n: int) -> str:
    """``n`` with the Korean subject particle its reading takes (0 영이, 2 이가, 3 삼이, 4 사가...)."""
    return f"{n}{'가' if n % 10 in (2, 4, 5, 9) else '이'}"


def pad_title_ko(pads: list[int]) -> str:
    """The heading of the combined grid, as the note writes it: 위치 0이 빈칸일 때 (padding mask 추가)."""
    if not pads:
        where = "빈칸이 없을 때"
    elif len(pads) == 1:
        where = f"위치 {_subject(pads[0])} 빈칸일 때"
    elif len(pads) == 2:
        where = f"위치 {pads[0]}, {_subject(pads[1])} 빈칸일 때"
    else:
        where = f"위치 {pads[0]}~{_subject(pads[-1])} 빈칸일 때"
    return f"{where} (padding mask 추가)"


def closing_lines_ko(side: str, pad: int) -> list[str]:
    """The lines under the figure: what each mask depends on, and why left padding needs both."""
    if pad == 0:
        return [LINE_CAUSAL_KO, LINE_PADDING_KO, LINE_NONE_KO]
    if side == "left":
        return [LINE_CAUSAL_KO, LINE_PADDING_KO, LINE_LEFT_KO]
    return [LINE_CAUSAL_KO, LINE_PADDING_KO, LINE_RIGHT_KO, LINE_RIGHT_2_KO]


def illustration(size: int = 4, pad: int = 1, side: str = "left", max_size: int = DEFAULT_MAX_SIZE) -> MaskResult:
    """The note's figure for a sequence of ``size`` positions with ``pad`` pads on ``side``."""
    if side not in SIDES:
        raise AttnscopeError(f"--side {side!r}: use left or right")
    if not 1 <= size <= MAX_ILLUSTRATION:
        raise AttnscopeError(f"--size {size}: use 1..{MAX_ILLUSTRATION}")
    if pad < 0:
        raise AttnscopeError(f"--pad {pad}: it cannot be negative")
    if pad >= size:
        raise AttnscopeError(f"--pad {pad} must be smaller than --size {size}: at least one position must be a token")
    check_max_size(max_size)
    attention_mask = side_mask(size, pad, side)
    pads = padded_rows(attention_mask)
    seq = MaskSequence(
        tokens=[str(i) for i in range(size)],
        attention_mask=attention_mask,
        causal=causal(size),
        combined=combined(attention_mask),
        padded_rows=pads,
        title=pad_title_ko(pads),
    )
    notes = closing_lines_ko(side, pad)
    if size > max_size:
        notes.append(condensed_note_ko(size, max_size))
    return MaskResult(
        mode="illustration",
        side=side,
        sequences=[seq],
        shown_positions=shown_positions(size, max_size),
        max_size=max_size,
        legend=LEGEND_KO,
        causal_title=CAUSAL_TITLE_KO,
        pad_remark=PAD_REMARK_KO,
        notes=notes,
    )
