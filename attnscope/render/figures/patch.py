"""SVG figure of a PatchResult: the recovery grids, per layer and head (and KV head for K or V)
and per layer and position of the residual stream, on one 0..1 heat scale.

A recovery below 0 is drawn red, one above 1 at full heat; the first lines say what restores
the answer most, as the view does. The recoveries are derived by ``results.derive.recovery``.
"""

from __future__ import annotations

from collections.abc import Callable

from attnscope.render import Ctx
from attnscope.render.ablate import metric_name
from attnscope.render.figures.causal import BELOW, CW, heat_grid
from attnscope.render.figures.common import MARGIN, header, model_line
from attnscope.render.figures.svg import Svg, text_width
from attnscope.render.i18n import t
from attnscope.render.patch import recoveries, summary
from attnscope.results.patch import PatchResult


def figure(r: PatchResult, ctx: Ctx) -> str:
    lang = ctx.lang
    metric = metric_name(lang, r.metric)
    rec = recoveries(r)
    svg = Svg(title=f"attnscope patch: {metric}")
    lines = [p.plain for p in summary(r, rec, lang)]  # type: ignore[union-attr]
    lines += [
        t(lang, "patch.clean", text=r.clean_text, n=len(r.clean_tokens)),
        t(lang, "patch.corrupt", text=r.corrupt_text, n=len(r.corrupt_tokens)),
        t(lang, f"patch.{r.direction}"),
        t(lang, f"patch.values_{r.metric.kind}", metric=metric, clean=f"{r.clean:.3f}", corrupt=f"{r.corrupt:.3f}"),
        model_line(ctx, r.model),
    ]
    y = header(svg, ctx, t(lang, "patch.fig_title", metric=metric), lines)
    x, bottom = MARGIN, y
    into = r.corrupt_tokens if r.direction == "denoise" else r.clean_tokens
    for site, key in (("head", "patch.fig_heads"), ("k", "patch.fig_k"), ("v", "patch.fig_v")):
        values = rec[site]
        if values is not None:
            cell = "figures.cell_layer_head" if site == "head" else "figures.cell_kv"
            columns = [str(j) for j in range(len(values[0]))]

            def name(layer: int, j: int, cell: str = cell) -> str:
                return t(lang, cell, layer=layer, head=j, kv=j)

            x, bottom = _grid(svg, x, y, t(lang, key), r, values, columns, name)
            x += 30
    values = rec["resid"]
    if values is not None:
        y = bottom + 14 if x > MARGIN else y
        names = [into[p].label for p in r.positions]
        width = max(26.0, max(text_width(n, 10) for n in names) + 6)
        _, bottom = _grid(
            svg,
            MARGIN,
            y,
            t(lang, "patch.fig_resid"),
            r,
            values,
            names,
            lambda layer, j: t(lang, "figures.cell_position", layer=layer, pos=r.positions[j], token=names[j]),
            width,
        )
    y = bottom + 14
    svg.heat_legend(MARGIN + 26, y, 1.0, t(lang, "patch.fig_scale"))
    return svg.to_string()


def _grid(
    svg: Svg,
    x: float,
    y: float,
    title: str,
    r: PatchResult,
    grid: list[list[float]],
    names: list[str],
    what: Callable[[int, int], str],
    cell_w: float = CW,
) -> tuple[float, float]:
    def ok(v: float) -> bool:
        return v == v  # not NaN

    return heat_grid(
        svg,
        x,
        y,
        title,
        r.layers,
        names,
        frac=lambda i, j: grid[i][j] if ok(grid[i][j]) else 0.0,
        label=lambda i, j: f"{grid[i][j]:.1f}" if ok(grid[i][j]) and abs(grid[i][j]) >= 0.1 else "",
        tip=lambda i, j: f"{what(r.layers[i], j)}: {grid[i][j]:.3f}",
        other=lambda i, j: BELOW if grid[i][j] < -0.05 else None,
        cell_w=cell_w,
    )
