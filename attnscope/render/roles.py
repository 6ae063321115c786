"""Human view of a RolesResult: the top heads of each role, then a layers x heads grid per role.

Every word comes from the catalogue (``roles.*``). Grids are shaded on a 0~1 scale (all
four scores are shares of attention, so one scale fits all), two cells per head, as
many side by side as the width allows. Nothing here computes scores.
"""

from __future__ import annotations

from rich.columns import Columns
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from attnscope.render import Ctx, heat_style, shade
from attnscope.render.common import model_line
from attnscope.render.fit import FitColumns, Fitted
from attnscope.render.i18n import t
from attnscope.results.roles import ROLES, RankedHead, RolesResult


def header(r: RolesResult, ctx: Ctx) -> Text:
    m = r.model
    text = Text()
    if r.source == "random":
        key = "roles.source_random_bos" if r.bos else "roles.source_random"
        text.append(t(ctx.lang, key, length=r.length, total=len(r.tokens), seed=r.seed), style="bold")
    else:
        text.append(t(ctx.lang, "roles.source_prompt", total=len(r.tokens)), style="bold")
    text.append("\n")
    text.append_text(model_line(ctx.lang, m))
    return text


def _top_table(r: RolesResult, ctx: Ctx) -> Table:
    table = Table(box=None, pad_edge=False, padding=(0, 2), header_style="dim")
    table.add_column("#", justify="right", no_wrap=True)
    for role in ROLES:
        table.add_column(t(ctx.lang, f"roles.role.{role}"), no_wrap=True)
    columns: list[list[RankedHead]] = [getattr(r.top, role) for role in ROLES]
    for i in range(max(len(c) for c in columns)):
        cells = [f"L{c[i].layer} H{c[i].head}  {c[i].score:.2f}" if i < len(c) else "" for c in columns]
        table.add_row(str(i + 1), *cells)
    return table


def _grid(r: RolesResult, ctx: Ctx, role: str) -> Text:
    grid: list[list[float]] = getattr(r.scores, role)
    n_heads = len(grid[0]) if grid else 0
    width = len(str(max(len(grid) - 1, 0)))
    out = Text()
    out.append(t(ctx.lang, f"roles.role.{role}") + "\n", style="bold")
    out.append(" " * (width + 2))
    out.append("".join(f"{h % 10} " for h in range(n_heads)) + "\n", style="dim")
    for layer, values in enumerate(grid):
        out.append(f"L{layer:<{width}} ", style="dim")
        for value in values:
            out.append(shade(value) * 2, style=heat_style(value))
        out.append("\n")
    return out


def _sink_line(r: RolesResult, ctx: Ctx) -> Text:
    heads = sum(len(row) for row in r.scores.sink)
    over = sum(1 for row in r.scores.sink for v in row if v > r.sink_threshold)
    return Text(
        t(ctx.lang, "roles.sink_rate", over=over, heads=heads, rate=100 * r.sink_rate, eps=r.sink_threshold),
        style="dim",
    )


def view(r: RolesResult, ctx: Ctx) -> RenderableType:
    layout = Columns([_grid(r, ctx, role) for role in ROLES], padding=(0, 3))  # as many per row as fit
    parts: list[RenderableType] = [
        header(r, ctx),
        Text(""),
        Text(t(ctx.lang, "roles.top_title", top=len(r.top.induction)), style="italic"),
        FitColumns(_top_table(r, ctx)),
        Text(""),
        _sink_line(r, ctx),
        Text(t(ctx.lang, "roles.scores_note"), style="dim"),
        Text(""),
        Text(t(ctx.lang, "roles.grid_title"), style="bold"),
        layout,
    ]
    return Fitted(Group(*parts))
