"""Human view of a KnockoutResult: the effect of blocking query -> key edges, window by window.

The effects are derived again from each window's raw metric by ``results.derive.knockout_effects``.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from attnscope.render import Ctx, bar
from attnscope.render.ablate import effect_text, metric_name
from attnscope.render.common import model_line, ranges
from attnscope.render.fit import FitColumns, Fitted
from attnscope.render.i18n import t
from attnscope.results import derive as d
from attnscope.results.knockout import KnockoutResult


def view(r: KnockoutResult, ctx: Ctx) -> RenderableType:
    lang = ctx.lang
    metric = metric_name(lang, r.metric)
    effects = d.knockout_effects(r.baseline, [w.metric for w in r.windows])
    worst = min(range(len(effects)), key=lambda i: (effects[i], i)) if effects else None
    if worst is not None and effects[worst] < 0:
        line = t(
            lang,
            "knockout.summary",
            query=r.query.text,
            key=r.key.text,
            layers=ranges(lang, r.windows[worst].layers),
            metric=metric,
            effect=effect_text(effects[worst]),
        )
    else:
        biggest = max((abs(e) for e in effects), default=0.0)
        line = t(
            lang, "knockout.summary_none", query=r.query.text, key=r.key.text, metric=metric, effect=f"{biggest:.2g}"
        )
    parts: list[RenderableType] = [Text(line, style="bold"), Text("")]
    parts.append(Text(t(lang, f"knockout.baseline_{r.metric.kind}", metric=metric, value=f"{r.baseline:.3f}")))
    edges = t(
        lang,
        "knockout.edges",
        queries=ranges(lang, r.query.span),
        keys=ranges(lang, r.key.span),
        heads=ranges(lang, r.heads),
    )
    parts += [Text(edges, style="dim"), model_line(lang, r.model), Text("")]
    title = t(lang, "knockout.windows_title", w=r.window) if r.window else t(lang, "knockout.windows_title_range")
    parts.append(Text(title, style="dim"))
    table = Table(box=None, pad_edge=False, padding=(0, 1), header_style="dim")
    table.add_column(t(lang, "knockout.col.layers"), justify="right", no_wrap=True)
    table.add_column(t(lang, "knockout.col.effect"), justify="right", no_wrap=True)
    table.add_column("", no_wrap=True)
    scale = max((-e for e in effects), default=0.0) or 1.0
    for w, e in zip(r.windows, effects, strict=True):
        drawn = (
            Text(bar(max(0.0, -e) / scale, 24), style="cyan") if e < 0 else Text("+" if e > 0 else "", style="green")
        )
        table.add_row(ranges(lang, w.layers), effect_text(e), drawn)
    parts += [FitColumns(table, [[2]]), Text(""), Text(t(lang, "knockout.note"), style="dim")]
    return Fitted(Group(*parts))
