"""SVG figure of a HeadsResult: the layers × heads grid of the weight the query puts on the key.

One filled cell per (layer, head) on the heat scale, the value written in cells that are
large enough to matter, vertical rules between KV groups, each layer's best head at the
right, a legend, and the top heads listed under the grid. Nothing here ranks heads: the grid
is ``results.derive.heads_grid``.
"""

from __future__ import annotations

from attnscope.render import Ctx
from attnscope.render.figures.common import MARGIN, ROW, header, model_line
from attnscope.render.figures.svg import DIM, INK, Svg, heat, ink_on, text_width
from attnscope.render.i18n import t
from attnscope.results.derive import heads_grid
from attnscope.results.heads import HeadsResult

CW, CH = 30.0, 20.0


def figure(r: HeadsResult, ctx: Ctx) -> str:
    m = r.model
    n_heads = m.num_attention_heads
    laid = heads_grid(r.ranking, m.num_hidden_layers, n_heads)
    grid, kv_of = laid.scores, laid.kv_of
    top = laid.top or 1.0
    above = laid.strong
    svg = Svg(title=f"attnscope heads: {r.query.text} -> {r.key.text}")
    lines = [
        t(ctx.lang, "figures.heads.above", n=above, total=len(r.ranking)),
        model_line(ctx, m),
    ]
    if r.measure == "norm":  # the cells are each key's share of the norm, not the raw weight
        lines.insert(0, t(ctx.lang, "weights.chart_title_norm"))
    y = header(svg, ctx, t(ctx.lang, "figures.heads.title", query=r.query.text, key=r.key.text), lines)
    layer_word = t(ctx.lang, "figures.layer")
    left = MARGIN + max(text_width(layer_word, 11), text_width("00")) + 10
    y += ROW
    svg.text(left + n_heads * CW / 2, y, t(ctx.lang, "figures.head"), anchor="middle", size=11, fill=DIM)
    y += ROW
    svg.text(left - 6, y, layer_word, anchor="end", size=11, fill=DIM)
    for h in range(n_heads):
        svg.text(left + h * CW + CW / 2, y, str(h), anchor="middle", size=11, fill=DIM)
    best_x = left + n_heads * CW + 10
    svg.text(best_x, y, t(ctx.lang, "figures.heads.best"), size=11, fill=DIM)
    y += 6
    y0 = y
    for layer, row in enumerate(grid):
        _layer_row(svg, ctx, layer, row, kv_of, best=laid.best[layer], x=(left, best_x), y=y, top=top)
        y += CH
    for h in range(1, n_heads):
        if kv_of[h] != kv_of[h - 1]:
            svg.line(left + h * CW, y0 - 2, left + h * CW, y + 2, stroke=INK, width=1.5)
    y += 12
    y = svg.heat_legend(left, y, top, t(ctx.lang, "figures.scale", top=f"{top:.2f}"))
    y += ROW * 0.5
    svg.text(left, y, t(ctx.lang, "figures.heads.kv", kv=m.num_key_value_heads), size=11, fill=DIM)
    y += ROW * 0.6
    for i, top_head in enumerate(r.top[:5], start=1):
        y += ROW
        name = t(ctx.lang, "figures.cell_head", layer=top_head.layer, head=top_head.head, kv=top_head.kv_head)
        svg.text(left, y, f"{i}. {name}  {top_head.score:.2f}")
    return svg.to_string()


def _layer_row(
    svg: Svg,
    ctx: Ctx,
    layer: int,
    row: list[float],
    kv_of: list[int],
    *,
    best: int,
    x: tuple[float, float],
    y: float,
    top: float,
) -> None:
    """One layer at height ``y``: its number, a cell per head from ``x[0]`` (shaded against
    ``top``, its value written when it is 0.1 or more), and its best head at ``x[1]``."""
    left, best_x = x
    svg.text(left - 6, y + CH - 6, str(layer), anchor="end", size=11, fill=DIM)
    for h, v in enumerate(row):
        frac = v / top
        name = t(ctx.lang, "figures.cell_head", layer=layer, head=h, kv=kv_of[h])
        svg.rect(left + h * CW, y, CW, CH, heat(frac), title=f"{name}: {v:.3f}")
        if v >= 0.1:
            value = f"{v:.2f}"[1:] if v < 1 else "1.0"
            svg.text(left + h * CW + CW / 2, y + CH - 6, value, anchor="middle", size=9.5, fill=ink_on(frac))
    svg.text(best_x, y + CH - 6, f"H{best} {row[best]:.2f}", size=11, fill=DIM)
