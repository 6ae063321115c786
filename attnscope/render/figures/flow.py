"""SVG figure of a FlowResult: the routes as a graph, layers as rows and positions as columns.

Each layer has two rows of nodes, its input (the residual stream before it) and its middle (after
the attention block); the top row is the last layer's output, the bottom row the input tokens,
labelled under it. An attention edge runs from a source's node in the layer's input row to the
target's node in the middle row; residual edges run straight up; an MLP edge runs beside the
residual from the middle row to the next input row. A line's width is proportional to the
part's importance. Prompts of more than ``ALL_COLUMNS`` positions show only the positions the
routes touch. Nothing here computes an importance.
"""

from __future__ import annotations

from collections.abc import Callable

from attnscope.render import Ctx
from attnscope.render.figures.common import MARGIN, ROW, header, model_line, notes
from attnscope.render.figures.svg import DIM, Svg, clip, text_width
from attnscope.render.flow import completeness, quoted, summary
from attnscope.render.i18n import t
from attnscope.results import derive as d
from attnscope.results.flow import Edge, FlowResult

ALL_COLUMNS = 48  # up to this many positions, every position is a column
COL = 26.0
HALF_ROW = 11.0  # from a layer's input row to its middle row
WIDEST = 10.0  # the line of importance 1
LABEL_SIZE = 11.0
COLOURS = {"attention": "#1f5fa8", "residual": "#d3d8de", "mlp": "#f0b070"}


def _columns(r: FlowResult) -> list[int]:
    if r.pos + 1 <= ALL_COLUMNS:
        return list(range(r.pos + 1))
    touched = {r.pos} | {e.to for e in r.edges} | {e.from_ for e in r.edges if e.from_ is not None}
    return sorted(touched)


def figure(r: FlowResult, ctx: Ctx) -> str:
    lang = ctx.lang
    routes = d.flow_routes(r.edges, r.layers, r.tolerance, r.pos)
    n_layers = len(r.layers)
    svg = Svg(title=f"attnscope flow: position {r.pos}")
    lines = [summary(r, routes, lang), completeness(r, routes, lang).plain, model_line(ctx, r.model)]
    y = header(svg, ctx, t(lang, "flow.fig_title", prediction=quoted(r.prediction_text), pos=r.pos), lines)
    svg.text(MARGIN, y + 12, t(lang, "flow.fig_axis"), size=12, bold=True)
    y += ROW + 12
    columns = _columns(r)
    col_of = {p: c for c, p in enumerate(columns)}
    layer_labels = [t(lang, "flow.fig_layer", layer=layer) for layer in range(n_layers)]
    left = MARGIN + max(text_width(x, LABEL_SIZE) for x in layer_labels) + 12
    top = y + 6

    def at(row: int, pos: int) -> tuple[float, float]:
        """row 0: the first layer's input; row 2l + 1: layer l's middle; row 2L: the last layer's output."""
        return left + col_of[pos] * COL + COL / 2, top + (2 * n_layers - row) * HALF_ROW

    right = left + len(columns) * COL
    for layer in range(n_layers):
        _, ly = at(2 * layer, columns[0])
        svg.line(left, ly, right, ly, stroke="#eef0f3")
        svg.text(left - 6, ly + LABEL_SIZE * 0.35, layer_labels[layer], anchor="end", size=LABEL_SIZE, fill=DIM)
    drawn = sorted(r.edges, key=lambda e: (e.kind == "attention", e.importance))
    for e in drawn:
        _edge(svg, e, at, col_of)
    _, bottom = at(0, columns[0])
    for p in columns:  # token labels, rotated to read upwards
        x, _ = at(0, p)
        label = f"{p} {clip(r.tokens[p].label, 110, LABEL_SIZE)}"
        svg.text(
            x + LABEL_SIZE * 0.35, bottom + 8, label, size=LABEL_SIZE, rotate=90, fill="#000" if p == r.pos else DIM
        )
    label_h = max(text_width(f"{p} {clip(r.tokens[p].label, 110, LABEL_SIZE)}", LABEL_SIZE) for p in columns)
    notes(svg, bottom + label_h + 12, [t(lang, "flow.fig_legend"), t(lang, "flow.note")])
    return svg.to_string()


def _edge(svg: Svg, e: Edge, at: Callable[[int, int], tuple[float, float]], col_of: dict[int, int]) -> None:
    """One part as a line: attention from the layer's input row to its middle row, residual and MLP straight up."""
    if e.kind == "bias" or e.from_ is None or e.from_ not in col_of or e.to not in col_of:
        return
    width = max(0.6, e.importance * WIDEST)
    if e.block == "attention":
        x1, y1 = at(2 * e.layer, e.from_)
        x2, y2 = at(2 * e.layer + 1, e.to)
    else:
        x1, y1 = at(2 * e.layer + 1, e.to)
        x2, y2 = at(2 * e.layer + 2, e.to)
        if e.kind == "mlp":
            x1 += 4
            x2 += 4
    svg.line(x1, y1, x2, y2, stroke=COLOURS[e.kind], width=width)
