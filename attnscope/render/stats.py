"""Human view of a StatsResult: the corpus, the top heads per role with intervals, massive
activations, then one layers x heads grid per statistic.

Every word comes from the catalogue (``stats.*``). Shares are shaded on 0~1; entropy and
distance on 0 to their largest mean. Rankings come from ``results.derive``; nothing here
computes statistics.
"""

from __future__ import annotations

from rich.columns import Columns
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from attnscope.render import Ctx, heat_style, shade
from attnscope.render.common import model_line, ranges
from attnscope.render.fit import FitColumns, Fitted
from attnscope.render.i18n import t
from attnscope.results.derive import StatHead, massive_first_layers, stats_top
from attnscope.results.stats import ROLE_STATS, StatsResult

UNBOUNDED = ("entropy", "distance")  # shaded on 0 to their largest mean, not 0~1


def stat_label(ctx: Ctx, name: str) -> str:
    if name.startswith("segment."):
        return t(ctx.lang, "stats.stat.segment", kind=t(ctx.lang, f"stats.kind.{name.split('.', 1)[1]}"))
    return t(ctx.lang, f"stats.stat.{name}")


def positions_line(r: StatsResult, ctx: Ctx) -> str:
    """How many query positions were counted, and which (``--pos``)."""
    pos = r.options.pos
    key = {"all": "stats.positions_all", "last": "stats.positions_last"}.get(pos, "stats.positions_at")
    return t(ctx.lang, key, positions=r.corpus.positions, pos=pos)


def header(r: StatsResult, ctx: Ctx) -> Text:
    c, m, o = r.corpus, r.model, r.options
    text = Text()
    text.append(
        t(ctx.lang, "stats.corpus", used=c.used, path=c.path, sha=c.sha256[:12], lines=c.lines, tokens=c.tokens),
        style="bold",
    )
    text.append("\n")
    text.append(positions_line(r, ctx))
    text.append(" ")
    if o.max_tokens is None:
        text.append(t(ctx.lang, "stats.skipped", skipped=len(c.skipped)))
    else:
        text.append(
            t(ctx.lang, "stats.skipped_cut", skipped=len(c.skipped), truncated=c.truncated, max_tokens=o.max_tokens)
        )
    text.append("\n")
    text.append_text(model_line(ctx.lang, m))
    text.append("\n")
    text.append(t(ctx.lang, "stats.bootstrap", b=o.bootstrap, seed=o.seed), style="dim")
    return text


def _cell(h: StatHead) -> str:
    return f"L{h.layer} H{h.head}  {h.mean:.2f} [{h.ci_low:.2f}~{h.ci_high:.2f}]"


def _top_table(r: StatsResult, ctx: Ctx, top: int) -> Table:
    table = Table(box=None, pad_edge=False, padding=(0, 2), header_style="dim")
    table.add_column("#", justify="right", no_wrap=True)
    roles = [name for name in ROLE_STATS if name in r.stats]
    columns = [stats_top(r.stats[name], top) for name in roles]
    for name in roles:
        table.add_column(stat_label(ctx, name), no_wrap=True)
    for i in range(max((len(c) for c in columns), default=0)):
        table.add_row(str(i + 1), *[_cell(c[i]) if i < len(c) else "" for c in columns])
    counts = [r.stats[name].n[0][0] if r.stats[name].n else 0 for name in roles]
    table.add_row("n", *[str(n) for n in counts], style="dim")
    return table


def _massive(r: StatsResult, ctx: Ctx) -> list[RenderableType]:
    if not r.massive:
        return []
    table = Table(box=None, pad_edge=False, padding=(0, 2), header_style="dim")
    for key in ("layer", "value", "dim", "position", "line", "ratio", "first", "first_ratio", "rest_ratio"):
        table.add_column(t(ctx.lang, f"stats.massive.col.{key}"), justify="right", no_wrap=True)
    for m in r.massive:
        table.add_row(
            f"L{m.layer}",
            f"{m.value:.4g}",
            str(m.dim),
            str(m.position),
            str(m.line),
            f"{m.ratio:.0f}",
            f"{m.at_first}/{m.prompts}",
            f"{m.first_ratio:.0f}",
            f"{m.rest_ratio:.0f}",
        )
    first = massive_first_layers(r.massive)
    if first:
        listed = ranges(ctx.lang, first)
        verdict = t(ctx.lang, "stats.massive.first", n=len(first), total=len(r.massive), layers=listed)
    else:
        verdict = t(ctx.lang, "stats.massive.not_first", total=len(r.massive))
    return [
        Text(t(ctx.lang, "stats.massive.title"), style="italic"),
        FitColumns(table),
        Text(verdict),
    ]


def _grid(r: StatsResult, ctx: Ctx, name: str) -> Text:
    grid = r.stats[name].mean
    values = [v for row in grid for v in row if v is not None]
    top = max(values, default=0.0) if name in UNBOUNDED else 1.0
    n_heads = len(grid[0]) if grid else 0
    width = len(str(max(len(grid) - 1, 0)))
    out = Text()
    scale = t(ctx.lang, "stats.scale", top=f"{top:.3g}")
    out.append(f"{stat_label(ctx, name)}  ", style="bold")
    out.append(scale + "\n", style="dim")
    out.append(" " * (width + 2))
    out.append("".join(f"{h % 10} " for h in range(n_heads)) + "\n", style="dim")
    for layer, row in enumerate(grid):
        out.append(f"L{layer:<{width}} ", style="dim")
        for value in row:
            v = 0.0 if value is None else value
            out.append(shade(v, top) * 2, style=heat_style(v, top))
        out.append("\n")
    return out


def view(r: StatsResult, ctx: Ctx, top: int = 5) -> RenderableType:
    parts: list[RenderableType] = [
        header(r, ctx),
        Text(""),
        Text(t(ctx.lang, "stats.top_title", top=top), style="italic"),
        FitColumns(_top_table(r, ctx, top)),
        Text(t(ctx.lang, "stats.top_note"), style="dim"),
        Text(""),
        *_massive(r, ctx),
        Text(""),
        Text(t(ctx.lang, "stats.grid_title"), style="bold"),
        Columns([_grid(r, ctx, name) for name in r.stats], padding=(0, 3)),
    ]
    return Fitted(Group(*parts))
