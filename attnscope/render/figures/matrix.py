"""SVG figure of a MatrixResult: one head's query × key heat map with the causal triangle.

Rows are query positions (or words, or blocks), columns key positions in the same
order; a cell above the diagonal (the key comes after the query) is drawn grey. Row and
column labels are thinned to every k-th so that no two labels overlap. Nothing here
computes a weight.
"""

from __future__ import annotations

import math

from attnscope.render import Ctx
from attnscope.render.figures.common import MARGIN, ROW, header, model_line, notes
from attnscope.render.figures.svg import GRID, Svg, clip, heat, text_width
from attnscope.render.i18n import t
from attnscope.results.matrix import MatrixResult

MASKED = "#eceff2"
LABEL_SIZE = 11.0
LABEL_GAP = LABEL_SIZE * 1.6  # labels closer than this would overlap


def figure(r: MatrixResult, ctx: Ctx) -> str:
    v = r.view
    n = len(v.groups)
    cell = max(4.0, min(22.0, 560.0 / max(n, 1)))
    every = max(1, math.ceil(LABEL_GAP / cell))
    nums = list(range(n)) if v.by == "word" else [g[0] for g in v.groups]
    labels = [f"{nums[i]} {clip(v.labels[i], 110, LABEL_SIZE)}" for i in range(n)]
    svg = Svg(title=f"attnscope matrix: layer {r.layer} head {r.head}")
    y = header(
        svg,
        ctx,
        t(ctx.lang, "figures.matrix.title", layer=r.layer, head=r.head, kv=r.kv_head),
        [t(ctx.lang, "figures.matrix.rows"), model_line(ctx, r.model)]
        + ([t(ctx.lang, "matrix.measure_norm")] if r.measure == "norm" else []),
    )
    shown = list(range(0, n, every))
    label_w = max((text_width(labels[i], LABEL_SIZE) for i in shown), default=0) + 8
    left = MARGIN + label_w
    grid_x = left + (cell + 6 if r.window[0] > 0 else 0)
    y += label_w
    for i in shown:  # column labels, rotated to read upwards
        svg.text(grid_x + i * cell + cell / 2 + LABEL_SIZE * 0.35, y - 4, labels[i], size=LABEL_SIZE, rotate=-90)
    top_y = y
    for row in range(n):
        ry = top_y + row * cell
        if row in shown:
            svg.text(left - 4, ry + cell / 2 + LABEL_SIZE * 0.35, labels[row], size=LABEL_SIZE, anchor="end")
        _row_cells(svg, r, row, x=(left, grid_x), y=ry, cell=cell)
    bottom = top_y + n * cell
    svg.line(grid_x, bottom, grid_x + n * cell, bottom, stroke=GRID)
    y = svg.heat_legend(grid_x, bottom + 12, 1.0, t(ctx.lang, "figures.scale", top="1"))
    notes(svg, y - ROW * 0.4, _notes(r, ctx))
    return svg.to_string()


def _row_cells(svg: Svg, r: MatrixResult, row: int, *, x: tuple[float, float], y: float, cell: float) -> None:
    """One row of the map at height ``y``: the weight before the window (at ``x[0]``, when the
    window starts after 0), then a cell per key from ``x[1]``, grey where the key comes after
    the row's last query."""
    v = r.view
    before_x, grid_x = x
    if r.window[0] > 0:
        b = v.before[row]
        svg.rect(before_x, y, cell, cell, heat(b), title=f"<{r.window[0]}: {b:.3f}")
    last_query = v.groups[row][-1]
    for c, group in enumerate(v.groups):
        if group[0] > last_query:
            svg.rect(grid_x + c * cell, y, cell, cell, MASKED)
        else:
            value = v.cells[row][c]
            title = f"{v.labels[row]} → {v.labels[c]}: {value:.3f}"
            svg.rect(grid_x + c * cell, y, cell, cell, heat(value), title=title)


def _notes(r: MatrixResult, ctx: Ctx) -> list[str]:
    """The lines under the map: what grey means, the column before the window, how rows are grouped."""
    out = [t(ctx.lang, "figures.matrix.masked")]
    if r.window[0] > 0:
        out.append(t(ctx.lang, "figures.matrix.before", start=r.window[0], last=r.window[0] - 1))
    if r.view.by in _GROUPED:
        out.append(t(ctx.lang, _GROUPED[r.view.by]))
    return out


# The note saying what a row is, for the views that group positions.
_GROUPED = {"word": "figures.matrix.by_word", "block": "figures.matrix.by_block"}
