"""The note's mask figure as the note prints it, and the grid lines of a printed figure (tests of
`mask` in every tier). The view draws the note's grids and headings; its sentences are its own."""

from __future__ import annotations

import re

# The note's figure ("causal mask와 padding mask" section), copied as it is printed there.
NOTE_FIGURE = """\
행: 계산하는 위치, 열: 참고하는 위치, 1 = 참고함, . = 비율 0

causal mask만               위치 0이 빈칸일 때 (padding mask 추가)
     0  1  2  3                  0  1  2  3
0    1  .  .  .             0    -  -  -  -   빈칸 자리라 결과를 쓰지 않는다
1    1  1  .  .             1    .  1  .  .
2    1  1  1  .             2    .  1  1  .
3    1  1  1  1             3    .  1  1  1
"""

# The headings over the two grids, the same in the note and in the Korean view.
NOTE_TITLES = "causal mask만               위치 0이 빈칸일 때 (padding mask 추가)"

_GRID = re.compile(r"^ *\d+(?: +[\d.\-]+)+")


def lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines()]


def grids(text: str) -> list[str]:
    """The grid lines of ``text`` (column numbers, then each row's ``1 . -`` cells), without the
    words beside a row."""
    return [m.group().rstrip() for line in text.splitlines() if (m := _GRID.match(line))]
