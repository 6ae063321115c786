"""SVG figure of a KnockoutResult: the metric's change per window of layers, one bar per window.

A bar to the left is a drop, to the right a rise, on a scale set by the largest change; the
first line says where blocking matters most, as the view does. The effects are derived by
``results.derive.knockout_effects``.
"""

from __future__ import annotations

from attnscope.render import Ctx
from attnscope.render.ablate import effect_text, metric_name
from attnscope.render.common import ranges
from attnscope.render.figures.causal import OTHER
from attnscope.render.figures.common import MARGIN, ROW, header, model_line
from attnscope.render.figures.svg import DIM, INK, Svg, heat, text_width
from attnscope.render.i18n import t
from attnscope.results import derive as d
from attnscope.results.knockout import KnockoutResult

HALF = 220.0  # the bar of the largest change


def figure(r: KnockoutResult, ctx: Ctx) -> str:
    lang = ctx.lang
    metric = metric_name(lang, r.metric)
    effects = d.knockout_effects(r.baseline, [w.metric for w in r.windows])

    svg = Svg(title=f"attnscope knockout: {r.query.text} -> {r.key.text}")
    lines = [
        t(lang, f"knockout.baseline_{r.metric.kind}", metric=metric, value=f"{r.baseline:.3f}"),
        t(
            lang,
            "knockout.edges",
            queries=ranges(lang, r.query.span),
            keys=ranges(lang, r.key.span),
            heads=ranges(lang, r.heads),
        ),
        model_line(ctx, r.model),
    ]
    y = header(svg, ctx, t(lang, "knockout.fig_title", query=r.query.text, key=r.key.text, metric=metric), lines)
    svg.text(MARGIN, y + 12, t(lang, "knockout.fig_axis", metric=metric), size=12, bold=True)
    y += ROW + 8
    labels = [ranges(lang, w.layers) for w in r.windows]
    left = MARGIN + max(text_width(x, 11) for x in labels) + 10
    zero = left + HALF
    scale = max((abs(e) for e in effects), default=0.0) or 1.0
    top = y
    for label, e in zip(labels, effects, strict=True):
        svg.text(left - 6, y + 12, label, anchor="end", size=11, fill=DIM)
        width = abs(e) / scale * HALF
        x = zero - width if e < 0 else zero
        svg.rect(
            x, y + 2, max(width, 0.5), 12, heat(abs(e) / scale) if e < 0 else OTHER, title=f"{label}: {effect_text(e)}"
        )
        svg.text(zero + HALF + 8, y + 12, effect_text(e), size=11)
        y += 16
    svg.line(zero, top - 2, zero, y + 2, stroke=INK, width=1.0)
    svg.text(zero - HALF, y + 14, f"-{scale:.2g}", size=10, fill=DIM)
    svg.text(zero, y + 14, "0", size=10, anchor="middle", fill=DIM)
    svg.text(zero + HALF, y + 14, f"+{scale:.2g}", size=10, anchor="end", fill=DIM)
    svg.text(MARGIN, y + 14 + ROW, t(lang, "knockout.note"), size=11, fill=DIM)
    return svg.to_string()
