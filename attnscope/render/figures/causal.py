"""A layers x columns heat grid, the piece the ``ablate``, ``knockout`` and ``patch`` figures share.

Cells are filled on the heat scale from a value already scaled to 0..1 (the caller says what
1 means); a cell the caller marks ``other`` (an effect of the wrong sign, a recovery below 0)
is drawn in its own colour. Nothing here computes the values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from attnscope.render.figures.common import ROW
from attnscope.render.figures.svg import DIM, INK, Svg, heat, ink_on, text_width

CW, CH = 26.0, 18.0
OTHER = "#7fbf7f"  # an effect of the other sign
BELOW = "#e07070"  # a recovery below 0


def heat_grid(
    svg: Svg,
    x: float,
    y: float,
    title: str,
    rows: Sequence[int],
    columns: Sequence[str],
    frac: Callable[[int, int], float],
    label: Callable[[int, int], str],
    tip: Callable[[int, int], str],
    *,
    other: Callable[[int, int], str | None] = lambda i, j: None,
    rules: Sequence[int] = (),
    cell_w: float = CW,
) -> tuple[float, float]:
    """Draw the grid with its top-left corner at (x, y); returns (right edge, bottom)."""
    svg.text(x, y + 12, title, size=12, bold=True)
    y += ROW + 4
    left = x + 26
    for j, name in enumerate(columns):
        svg.text(left + j * cell_w + cell_w / 2, y + 10, name, anchor="middle", size=10, fill=DIM)
    y += 14
    top = y
    for i, row in enumerate(rows):
        svg.text(left - 5, y + CH - 5, str(row), anchor="end", size=10, fill=DIM)
        for j in range(len(columns)):
            value = max(0.0, min(1.0, frac(i, j)))
            fill = other(i, j) or heat(value)
            svg.rect(left + j * cell_w, y, cell_w, CH, fill, title=tip(i, j))
            text = label(i, j)
            if text:
                svg.text(
                    left + j * cell_w + cell_w / 2,
                    y + CH - 5,
                    text,
                    anchor="middle",
                    size=8.5,
                    fill=INK if other(i, j) else ink_on(value),
                )
        y += CH
    for j in rules:
        svg.line(left + j * cell_w, top - 2, left + j * cell_w, y + 2, stroke=INK, width=1.5)
    return max(left + len(columns) * cell_w, x + text_width(title, 12)), y
