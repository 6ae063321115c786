"""SVG figure of a StatsResult: the corpus header, the top heads per role with their intervals,
then one layers x heads heat grid per statistic (each cell's title holds the mean, the
interval and n). The same numbers as the terminal view; nothing here computes statistics.
"""

from __future__ import annotations

from attnscope.render import Ctx
from attnscope.render.common import ranges
from attnscope.render.figures.common import MARGIN, ROW, header, model_line
from attnscope.render.figures.svg import DIM, Svg, heat, text_width
from attnscope.render.i18n import t
from attnscope.render.stats import UNBOUNDED, positions_line, stat_label
from attnscope.results.derive import massive_first_layers, stats_top
from attnscope.results.stats import ROLE_STATS, StatsResult

CELL = 9.0
GAP = 28.0
HEAD_ROW = 10.0  # the row of head numbers above each grid
PER_ROW = 4  # grids side by side


def figure(r: StatsResult, ctx: Ctx) -> str:
    c = r.corpus
    svg = Svg(title=f"attnscope stats: {c.path}")
    lines = [
        positions_line(r, ctx),
        t(ctx.lang, "stats.bootstrap", b=r.options.bootstrap, seed=r.options.seed),
        model_line(ctx, r.model),
    ]
    first = massive_first_layers(r.massive)
    if r.massive:
        lines.append(
            t(ctx.lang, "stats.massive.first", n=len(first), total=len(r.massive), layers=ranges(ctx.lang, first))
            if first
            else t(ctx.lang, "stats.massive.not_first", total=len(r.massive))
        )
    title = t(ctx.lang, "stats.corpus", used=c.used, path=c.path, sha=c.sha256[:12], lines=c.lines, tokens=c.tokens)
    y = header(svg, ctx, title, lines)
    y += ROW * 0.5
    svg.text(MARGIN, y, t(ctx.lang, "stats.top_title", top=5), bold=True)
    roles = [name for name in ROLE_STATS if name in r.stats]
    col = 250.0
    y += ROW
    for i, name in enumerate(roles):
        svg.text(MARGIN + i * col, y, stat_label(ctx, name), fill=DIM)
    for rank in range(5):
        y += ROW
        for i, name in enumerate(roles):
            heads = stats_top(r.stats[name], 5)
            if rank < len(heads):
                h = heads[rank]
                svg.text(MARGIN + i * col, y, f"L{h.layer} H{h.head}  {h.mean:.2f} [{h.ci_low:.2f}~{h.ci_high:.2f}]")
    y += ROW * 1.5
    names = list(r.stats)
    n_layers = len(r.stats[names[0]].mean) if names else 0
    n_heads = len(r.stats[names[0]].mean[0]) if n_layers else 0
    label_w = text_width("L00", 10) + 4
    grid_w = label_w + n_heads * CELL
    width = max(grid_w, max((text_width(stat_label(ctx, n), 12) for n in names), default=0.0))
    for start in range(0, len(names), PER_ROW):
        row_names = names[start : start + PER_ROW]
        for i, name in enumerate(row_names):
            _grid(svg, r, ctx, name, MARGIN + i * (width + GAP), y, label_w)
        y += ROW * 2 + HEAD_ROW + n_layers * CELL + ROW
    svg.text(MARGIN, y, t(ctx.lang, "stats.grid_title"), size=11, fill=DIM)
    return svg.to_string()


def _grid(svg: Svg, r: StatsResult, ctx: Ctx, name: str, x: float, y: float, label_w: float) -> None:
    stat = r.stats[name]
    values = [v for row in stat.mean for v in row if v is not None]
    top = max(values, default=0.0) if name in UNBOUNDED else 1.0
    svg.text(x, y, stat_label(ctx, name), size=12, bold=True)
    svg.text(x, y + ROW * 0.9, t(ctx.lang, "stats.scale", top=f"{top:.3g}"), size=10, fill=DIM)
    y0 = y + ROW * 1.3 + HEAD_ROW
    n_heads = len(stat.mean[0]) if stat.mean else 0
    svg.text(x + label_w - 2, y0 - 2, "H", size=8, fill=DIM, anchor="end")  # clear of the layer labels below it
    step = 2 if n_heads <= 16 else 4 if n_heads <= 32 else 8
    for head in range(0, n_heads, step):
        svg.text(x + label_w + head * CELL + CELL * 0.5, y0 - 2, str(head), size=7, fill=DIM, anchor="middle")
    for layer, row in enumerate(stat.mean):
        if layer % 4 == 0:
            svg.text(x, y0 + layer * CELL + CELL * 0.85, f"L{layer}", size=8, fill=DIM)
        for head, value in enumerate(row):
            frac = 0.0 if value is None or top <= 0 else max(0.0, min(1.0, value / top))
            tip = (
                f"L{layer} H{head}: {value:.4f} [{stat.ci_low[layer][head]:.4f}~{stat.ci_high[layer][head]:.4f}], "
                f"n {stat.n[layer][head]}"
                if value is not None
                else f"L{layer} H{head}: n 0"
            )
            svg.rect(x + label_w + head * CELL, y0 + layer * CELL, CELL, CELL, heat(frac), title=tip)
