"""The SVG of a result that has no picture of its own (info, tokens, explain, rope, reuse).

The terminal view is laid out as plain text at the given width, and each
whitespace-separated run is drawn as its own ``<text>`` at the column where the terminal
would put it, with a wide character (Hangul, CJK) counted as two columns. So the words
sit where the terminal puts them, however the viewer's font measures Hangul.
"""

from __future__ import annotations

import re
import unicodedata

from rich.console import RenderableType

from attnscope.render.figures.svg import FONT_SIZE, Svg

COL = FONT_SIZE * 0.62  # one terminal column
ROW_H = FONT_SIZE * 1.6


def _cells(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


def text_figure(view: RenderableType, width: int, title: str) -> str:
    from attnscope.render import to_text

    svg = Svg(title=title)
    lines = to_text(view, width=width).rstrip("\n").split("\n")
    for row, line in enumerate(lines):
        y = 14 + FONT_SIZE + row * ROW_H
        for m in re.finditer(r"\S+(?: \S+)*", line):
            # a run of words separated by single spaces stays one <text>; wider gaps are columns
            run = m.group(0)
            col = _cells(line[: m.start()])
            if all(_cells(ch) == 1 for ch in run):
                svg.text(14 + col * COL, y, run)
                continue
            for w in re.finditer(r"\S+", run):
                svg.text(14 + (col + _cells(run[: w.start()])) * COL, y, w.group(0))
        svg._grow(14, y + ROW_H * 0.3)
    return svg.to_string()
