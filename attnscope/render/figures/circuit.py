"""SVG figure of a CircuitResult: the faithfulness curves with their bands, and the circuit as a
layered graph.

The curves: one line per method over MIB's ten edge fractions (evenly spaced, labelled with the
fraction; CPR and CMD are still the linear-axis areas), each point's 95% bootstrap interval as
a band. The circuit: the first method's curve point the view names (the smallest with
faithfulness at least 0.8, else the last below 100%), chosen and pruned again
(``results.derive.circuit_nodes``); ``input`` at the bottom, one row per layer (its heads, its KV
inputs' heads and its MLP), ``logits`` at the top; an edge's width follows |score|, its colour its
sign, and its dash the input it enters by (Q solid, K dashed, V dotted, MLP and logits solid grey
ends). At most ``MAX_DRAWN`` edges are drawn, the largest by |score|.
"""

from __future__ import annotations

import math

from attnscope.render import Ctx
from attnscope.render.circuit import SHOWN_AT, node_label
from attnscope.render.figures.common import MARGIN, ROW, header, model_line
from attnscope.render.figures.svg import DIM, GRID, INK, Svg, num
from attnscope.render.i18n import t
from attnscope.results import derive as d
from attnscope.results.circuit import CircuitResult, MethodRun
from attnscope.results.graph import Graph

COLOURS = ("#3b6fb6", "#d08c2d", "#4f9a5a", "#9b59b6")  # one per method
POSITIVE, NEGATIVE = "#3b6fb6", "#d0453a"
DASH = {"q": "", "k": "6 3", "v": "2 3", "mlp": "", "logits": ""}
MAX_DRAWN = 150
PLOT_W, PLOT_H = 520.0, 220.0
ROW_H = 34.0  # one layer's row in the graph
NODE_W = 30.0


def _runs(r: CircuitResult) -> list[MethodRun]:
    if r.method is None:
        return []
    return [MethodRun(r.method, r.edges, r.curve, r.cpr or 0.0, r.cmd or 0.0, r.cpr_ci, r.cmd_ci), *r.compare]


def _path(
    svg: Svg, points: list[tuple[float, float]], colour: str, width: float, dash: str = "", fill: str = ""
) -> None:
    d_attr = " ".join(f"{'M' if i == 0 else 'L'}{num(x)} {num(y)}" for i, (x, y) in enumerate(points))
    if fill:
        d_attr += " Z"
    attrs = (
        f'd="{d_attr}" fill="{fill or "none"}" stroke="{colour if not fill else "none"}" stroke-width="{num(width)}"'
    )
    if dash:
        attrs += f' stroke-dasharray="{dash}"'
    if fill:
        attrs += ' fill-opacity="0.15"'
    for x, y in points:
        svg.width, svg.height = max(svg.width, x), max(svg.height, y)
    svg.parts.append(f"<path {attrs}/>")


def figure(r: CircuitResult, ctx: Ctx) -> str:
    lang = ctx.lang
    runs = _runs(r)
    svg = Svg(title=f"attnscope circuit: {r.pairs.path}")
    lines = [
        t(lang, "circuit.means", clean=f"{r.clean:.3f}", corrupt=f"{r.corrupt:.3f}"),
        t(lang, f"circuit.graph_{r.graph}", edges=f"{r.n_edges:,}"),
        model_line(ctx, r.model),
    ]
    y = header(svg, ctx, t(lang, "circuit.fig_title", n=len(r.pairs.used), path=r.pairs.path), lines)
    if not runs:
        return svg.to_string()
    weights = d.poisson_weights(r.seed, r.pairs.used, r.bootstrap)
    numbers = [
        d.curve_numbers(
            r.pair_clean, r.pair_corrupt, [p.pair_metric for p in run.curve], [p.fraction for p in run.curve], weights
        )
        for run in runs
    ]
    y = _curves(svg, ctx, runs, numbers, y)
    _graph(svg, ctx, r, runs[0], numbers[0], y + ROW)
    return svg.to_string()


TICK_Y = 22  # the fraction labels sit below the lowest level's label (which ends at the axis)


def _curves(svg: Svg, ctx: Ctx, runs: list[MethodRun], numbers: list[d.CurveNumbers], y: float) -> float:
    lang = ctx.lang
    svg.text(MARGIN, y + 12, t(lang, "circuit.fig_curve"), size=12, bold=True)
    top = y + ROW + 6
    left = MARGIN + 40
    fractions = [p.fraction for p in runs[0].curve]
    finite = [v for n in numbers for pair in n.ci for v in pair if math.isfinite(v)] + [0.0, 1.0]
    low, high = max(min(finite), -1.0), min(max(finite), 2.0)
    span = (high - low) or 1.0

    def at(i: int, f: float) -> tuple[float, float]:
        x = left + PLOT_W * i / max(1, len(fractions) - 1)
        return x, top + PLOT_H * (1 - (min(max(f, low), high) - low) / span)

    for level in sorted({0.0, 1.0, low, high}):
        _, yy = at(0, level)
        svg.line(left, yy, left + PLOT_W, yy, stroke=GRID)
        svg.text(left - 6, yy + 4, f"{level:.2g}", size=10, anchor="end", fill=DIM)
    for i, f in enumerate(fractions):
        x, _ = at(i, low)
        svg.text(x, top + PLOT_H + TICK_Y, f"{f * 100:g}%", size=10, anchor="middle", fill=DIM)
    for k, (run, n) in enumerate(zip(runs, numbers, strict=True)):
        colour = COLOURS[k % len(COLOURS)]
        band = [at(i, lo) for i, (lo, _) in enumerate(n.ci) if math.isfinite(lo)]
        band += [at(i, hi) for i, (_, hi) in reversed(list(enumerate(n.ci))) if math.isfinite(hi)]
        if len(band) > 2:
            _path(svg, band, colour, 0, fill=colour)
        line = [at(i, f) for i, f in enumerate(n.faithfulness) if math.isfinite(f)]
        _path(svg, line, colour, 2.0)
        legend_y = top + 4 + k * ROW
        svg.line(left + PLOT_W + 16, legend_y, left + PLOT_W + 36, legend_y, stroke=colour, width=2.0)
        svg.text(
            left + PLOT_W + 42,
            legend_y + 4,
            t(lang, "circuit.fig_legend", method=run.method, cmd=f"{n.cmd:.3f}", cpr=f"{n.cpr:.3f}"),
            size=11,
        )
    svg.text(left, top + PLOT_H + TICK_Y + ROW, t(lang, "circuit.fig_axis"), size=11, fill=DIM)
    return top + PLOT_H + TICK_Y + ROW


def _graph(svg: Svg, ctx: Ctx, r: CircuitResult, run: MethodRun, numbers: d.CurveNumbers, y: float) -> None:
    lang = ctx.lang
    m = r.model
    points = [i for i, f in enumerate(numbers.faithfulness) if math.isfinite(f) and f >= SHOWN_AT]
    i = points[0] if points else max(0, len(run.curve) - 2)
    if not run.curve:
        return
    graph = Graph(r.graph, m.num_hidden_layers, m.num_attention_heads, m.num_key_value_heads)
    chosen = run.curve[i].chosen
    n_kept, _ = d.circuit_nodes(graph, [e.score for e in run.edges], chosen)
    kept = d.circuit_edges(graph, [e.score for e in run.edges], chosen)
    drawn = sorted(kept, key=lambda e: (-abs(run.edges[e].score), e))[:MAX_DRAWN]
    title = t(
        lang,
        "circuit.fig_graph",
        fraction=f"{run.curve[i].fraction * 100:g}%",
        edges=n_kept,
        drawn=len(drawn),
        faith=f"{numbers.faithfulness[i]:.3f}",
    )
    svg.text(MARGIN, y + 12, title, size=12, bold=True)
    y += ROW + 8
    per_row = m.num_attention_heads + 1
    left = MARGIN + 70
    gap = NODE_W + 8
    bottom = y + ROW_H * (m.num_hidden_layers + 1)

    def where(node: str) -> tuple[float, float]:
        """A node's centre: input at the bottom, logits at the top, layer l's heads then its MLP."""
        if node == "input":
            return left + gap * per_row / 2, bottom
        if node == "logits":
            return left + gap * per_row / 2, y - 4
        head, _, part = node.partition(".")
        layer = int(head[1:])
        row_y = bottom - ROW_H * (layer + 1)
        if head.startswith("m"):
            return left + gap * m.num_attention_heads, row_y
        if part.startswith("kv"):  # a KV input: between the heads of its group
            g = int(part[2:])
            groups = m.num_attention_heads // m.num_key_value_heads
            return left + gap * (g * groups + (groups - 1) / 2), row_y + 8
        return left + gap * int(part[1:]), row_y

    top_score = max((abs(run.edges[e].score) for e in drawn), default=0.0) or 1.0
    for e in reversed(drawn):  # the largest drawn last, on top
        edge = run.edges[e]
        (x1, y1), (x2, y2) = where(edge.from_), where(edge.to)
        colour = POSITIVE if edge.score >= 0 else NEGATIVE
        width = 0.6 + 3.4 * abs(edge.score) / top_score
        _path(svg, [(x1, y1 - 6), (x2, y2 + 6)], colour, width, DASH[edge.input])
    for layer in range(m.num_hidden_layers):
        row_y = bottom - ROW_H * (layer + 1)
        svg.text(MARGIN, row_y + 4, t(lang, "circuit.fig_layer", layer=layer), size=10, fill=DIM)
        for h in range(m.num_attention_heads):
            svg.rect(
                left + gap * h - NODE_W / 2,
                row_y - 6,
                NODE_W,
                12,
                "#eef2f7",
                stroke=GRID,
                title=node_label(lang, f"a{layer}.h{h}"),
            )
        svg.rect(
            left + gap * m.num_attention_heads - NODE_W / 2,
            row_y - 6,
            NODE_W,
            12,
            "#f3efe6",
            stroke=GRID,
            title=f"m{layer}",
        )
    for node in ("input", "logits"):
        x, yy = where(node)
        svg.rect(x - 30, yy - 6, 60, 12, "#e6e6e6", stroke=GRID, title=node)
    svg.text(left + gap * per_row / 2, bottom + 20, "input", size=10, anchor="middle", fill=INK)
    svg.text(left + gap * per_row / 2 + 40, y + 0, "logits", size=10, fill=INK)
    svg.text(MARGIN, bottom + 20 + ROW, t(lang, "circuit.fig_graph_note"), size=11, fill=DIM)
