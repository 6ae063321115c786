"""The note's mask figure and its closing lines, as the note prints them (tests of `mask` in every tier)."""

from __future__ import annotations

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


NOTE_LINES = [
    "causal mask는 위치 관계만으로 정해져서 어떤 입력이든 모양이 같다.",
    "padding mask는 입력마다 빈칸이 어디에 몇 개 있는지에 따라 달라진다.",
    "빈칸이 앞쪽에 있으면 causal mask만으로는 빈칸을 가릴 수 없어서 둘을 함께 쓴다.",
]


def lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines()]
