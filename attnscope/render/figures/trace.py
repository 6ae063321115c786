"""SVG figure of a TraceResult: one row per stage (the embedding, then after each layer).

Each row gives the vector's norm as a bar, its cosine to the row before, and the logit
lens's top tokens with their probabilities. Layers are counted from 0, as in every
other figure: the row after ``n`` layers is "after layer n-1". Nothing here computes.
"""

from __future__ import annotations

from attnscope.render import Ctx
from attnscope.render.figures.common import MARGIN, ROW, header, model_line
from attnscope.render.figures.svg import BAR, DIM, Svg, text_width
from attnscope.render.i18n import t
from attnscope.results.trace import TraceResult

NORM_PX = 160.0


def figure(r: TraceResult, ctx: Ctx) -> str:
    svg = Svg(title="attnscope trace")
    title = t(ctx.lang, "figures.trace.title", pos=r.position, tok=r.token.label, id=r.token.id)
    y = header(svg, ctx, title, [model_line(ctx, r.model)])
    stages = [
        t(ctx.lang, "figures.trace.embedding")
        if row.layer == 0
        else t(ctx.lang, "figures.trace.after", n=row.layer - 1)
        for row in r.rows
    ]
    k = len(r.rows[0].top) if r.rows else 0
    stage_w = max([text_width(s) for s in stages] + [text_width(t(ctx.lang, "figures.trace.stage"))]) + 16
    norm_x = MARGIN + stage_w
    top_norm = max((row.norm for row in r.rows), default=1.0) or 1.0
    cos_x = norm_x + NORM_PX + 50 + max(text_width("0.000"), text_width(t(ctx.lang, "figures.trace.cos"), 11))
    lens_x = cos_x + 16
    y += ROW
    svg.text(MARGIN, y, t(ctx.lang, "figures.trace.stage"), size=11, fill=DIM)
    svg.text(norm_x, y, t(ctx.lang, "figures.trace.norm"), size=11, fill=DIM)
    svg.text(cos_x, y, t(ctx.lang, "figures.trace.cos"), size=11, fill=DIM, anchor="end")
    svg.text(lens_x, y, t(ctx.lang, "figures.trace.lens", k=k), size=11, fill=DIM)
    shown = [[f"'{tok.token}' {tok.prob:.2f}" for tok in row.top] for row in r.rows]
    col_w = [max((text_width(cells[i]) for cells in shown if i < len(cells)), default=0) + 18 for i in range(k)]
    for stage, row, cells in zip(stages, r.rows, shown, strict=True):
        y += ROW
        svg.text(MARGIN, y, stage)
        w = max(1.0, row.norm / top_norm * NORM_PX)
        svg.rect(norm_x, y - 10, w, 11, BAR)
        svg.text(norm_x + w + 6, y, f"{row.norm:.1f}", size=11, fill=DIM)
        svg.text(cos_x, y, "-" if row.cos_prev is None else f"{row.cos_prev:.3f}", anchor="end")
        x = lens_x
        for i, cell in enumerate(cells):
            svg.text(x, y, cell)
            x += col_w[i]
    return svg.to_string()
