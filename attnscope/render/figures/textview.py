"""The SVG of a result that has no picture of its own (info, tokens, explain, rope, reuse, generate).

The terminal view is laid out as plain text at the given width and cut into cells: a cell is a
run of words that the terminal separates from its neighbours by two or more spaces (a sentence
is one cell, a table cell is one cell). Each cell is drawn as ONE ``<text>``, so the viewer's
font lays out its letters and a Korean sentence stays whole.

Where cells go: the terminal's columns become x positions measured with the figure's own text
widths (East Asian wide characters count as an em, see ``svg.char_em``). A cell that starts at
terminal column c starts at the x of column c, and that x is far enough right that no cell
before it, on any line, runs into it; so cells that share a column in the terminal share it in
the figure. A number the terminal right-aligns is anchored at its right end instead, so a
column of numbers keeps its right edge.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rich.console import RenderableType

from attnscope.render.figures.svg import FONT_SIZE, Svg, text_width

ROW_H = FONT_SIZE * 1.6
LEFT = 14.0
GAP = FONT_SIZE * 0.9  # the least room between two cells, about two terminal spaces
_CELL = re.compile(r"\S+(?: \S+)*")
_NUMBER = re.compile(r"[-+]?[\d,]*\.?\d+(?:e[-+]?\d+)?%?")


@dataclass(frozen=True)
class Cell:
    row: int
    start: int  # terminal columns, wide characters counted as two
    end: int
    text: str
    right_aligned: bool = False  # a number, or a word in a column of right-aligned numbers

    @property
    def key(self) -> tuple[int, str]:
        """The terminal column the cell is anchored at: its end for a number, else its start."""
        return (self.end, "end") if self.right_aligned else (self.start, "start")


def _cols(text: str) -> int:
    from rich.cells import cell_len

    return cell_len(text)


def cells(lines: list[str]) -> list[list[Cell]]:
    """Each line's cells, with the terminal columns they take. A number is right-aligned, and
    so is a short word that ends where numbers end (``false`` among counts) but starts where
    no other word does."""
    out = []
    for row, line in enumerate(lines):
        found = []
        for m in _CELL.finditer(line):
            start = _cols(line[: m.start()])
            found.append(Cell(row, start, start + _cols(m.group(0)), m.group(0)))
        out.append(found)
    every = [c for row in out for c in row]
    number_ends = {c.end for c in every if _NUMBER.fullmatch(c.text)}
    starts = [c.start for c in every if not _NUMBER.fullmatch(c.text)]

    def right(c: Cell) -> bool:
        if _NUMBER.fullmatch(c.text):
            return True
        return c.end in number_ends and starts.count(c.start) == 1 and _cols(c.text) <= 12

    return [[Cell(c.row, c.start, c.end, c.text, right(c)) for c in row] for row in out]


def positions(rows: list[list[Cell]]) -> dict[tuple[int, str], float]:
    """The x of every anchor column: far enough right for every cell before it on its line."""
    wants: dict[tuple[int, str], list[tuple[Cell | None, Cell]]] = {}
    for row in rows:
        for before, cell in zip([None, *row], row, strict=False):
            wants.setdefault(cell.key, []).append((before, cell))
    x: dict[tuple[int, str], float] = {}
    for key in sorted(wants, key=lambda k: (k[0], k[1] == "end")):
        least = LEFT
        for before, cell in wants[key]:
            left = LEFT
            if before is not None:
                bx = x[before.key]
                right = bx if before.right_aligned else bx + text_width(before.text)
                left = right + GAP
            least = max(least, left + (text_width(cell.text) if cell.right_aligned else 0.0))
        x[key] = least
    return x


def text_figure(view: RenderableType, width: int, title: str) -> str:
    from attnscope.render import to_text

    svg = Svg(title=title)
    lines = to_text(view, width=width).rstrip("\n").split("\n")
    rows = cells(lines)
    x = positions(rows)
    for n, row in enumerate(rows):
        y = 14 + FONT_SIZE + n * ROW_H
        for cell in row:
            svg.text(x[cell.key], y, cell.text, anchor="end" if cell.right_aligned else "start")
        svg._grow(LEFT, y + ROW_H * 0.3)
    return svg.to_string()
