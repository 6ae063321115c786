"""SVG figure of an AblateResult: the layers x heads grid of effects beside the grid of weights.

The left grid is the drop in the metric when each head is removed (the heat scale runs from 0
to the largest drop; a head whose removal raises the metric is green), the right grid the last
position's weight on the key (or on each head's top key). The first lines say which heads
matter and where the head that looks hardest at the key ranks, as the view does. The ranking
and the correlation come from ``results.derive``.
"""

from __future__ import annotations

from attnscope.render import Ctx
from attnscope.render.ablate import effect_text, metric_name, numbers, summary
from attnscope.render.figures.causal import OTHER, heat_grid
from attnscope.render.figures.common import MARGIN, ROW, header, model_line
from attnscope.render.figures.svg import DIM, Svg
from attnscope.render.i18n import t
from attnscope.results.ablate import AblateResult


def figure(r: AblateResult, ctx: Ctx) -> str:
    lang = ctx.lang
    metric = metric_name(lang, r.metric)
    derived = numbers(r)
    groups = r.model.num_attention_heads // max(1, r.model.num_key_value_heads)
    svg = Svg(title=f"attnscope ablate: {metric}")
    lines = summary(r, derived.ranking, lang).plain.split("\n")
    lines.append(t(lang, f"ablate.baseline_{r.metric.kind}", metric=metric, value=f"{r.baseline:.3f}"))
    if derived.rank_correlation is not None:
        lines.append(t(lang, "ablate.correlation", n=len(derived.ranking), rho=f"{derived.rank_correlation:+.2f}"))
    if r.estimated:
        lines.append(t(lang, "ablate.fig_estimated"))
    lines.append(model_line(ctx, r.model))
    y = header(svg, ctx, t(lang, "ablate.fig_title", metric=metric), lines)
    drop = max((max(0.0, -v) for row in r.effects for v in row), default=0.0) or 1.0
    top_w = max((v for row in r.attention for v in row), default=0.0) or 1.0
    columns = [str(h) for h in r.heads]
    rules = [j for j in range(1, len(r.heads)) if r.heads[j] // groups != r.heads[j - 1] // groups]

    def head(i: int, j: int) -> str:
        return t(lang, "figures.cell_head", layer=r.layers[i], head=r.heads[j], kv=r.heads[j] // groups)

    right, bottom = heat_grid(
        svg,
        MARGIN,
        y,
        t(lang, "ablate.fig_effect", metric=metric),
        r.layers,
        columns,
        frac=lambda i, j: -r.effects[i][j] / drop,
        label=lambda i, j: (
            f"{-r.effects[i][j]:.1f}"[-3:] if -r.effects[i][j] >= 0.1 * drop and -r.effects[i][j] >= 0.05 else ""
        ),
        tip=lambda i, j: f"{head(i, j)}: {effect_text(r.effects[i][j])}",
        other=lambda i, j: OTHER if r.effects[i][j] > 0.05 * drop else None,
        rules=rules,
    )
    key_title = (
        t(lang, "ablate.fig_weight_key", key=r.key.text) if r.key is not None else t(lang, "ablate.fig_weight_top")
    )

    def weight_tip(i: int, j: int) -> str:
        where = "" if r.top_key is None else f" ({r.tokens[r.top_key[i][j]].label})"
        return f"{head(i, j)}: {r.attention[i][j]:.3f}{where}"

    _, bottom2 = heat_grid(
        svg,
        right + 30,
        y,
        key_title,
        r.layers,
        columns,
        frac=lambda i, j: r.attention[i][j] / top_w,
        label=lambda i, j: _weight_label(r.attention[i][j]),
        tip=weight_tip,
        rules=rules,
    )
    y = max(bottom, bottom2) + 14
    y = svg.heat_legend(MARGIN + 26, y, drop, t(lang, "ablate.fig_scale_effect", top=f"{drop:.2f}"))
    y = svg.heat_legend(MARGIN + 26, y + 4, top_w, t(lang, "figures.scale", top=f"{top_w:.2f}"))
    svg.text(
        MARGIN + 26,
        y + ROW * 0.6,
        t(lang, "ablate.note_est" if r.estimated else "ablate.note_exact"),
        size=11,
        fill=DIM,
    )
    return svg.to_string()


def _weight_label(v: float) -> str:
    """A weight as the grid writes it: .57, or 1.0 once it rounds to 1; nothing under 0.1."""
    if v < 0.1:
        return ""
    shown = f"{v:.2f}"
    return "1.0" if shown == "1.00" else shown[1:]
