"""Human view of a TraceResult: the note's layer-stack diagram, one row per stage.

The short explanatory lines live in ``MESSAGES`` (en, ko), chosen by ``result.lang``.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from attnscope.render import Ctx
from attnscope.render.common import model_line
from attnscope.render.fit import FitColumns, Fitted, Flow, glue
from attnscope.render.i18n import section
from attnscope.results.trace import TopToken, TraceResult


def fmt(x: float) -> str:
    """Differences: 0 stays 0, the rest in 2 significant digits."""
    return "0" if x == 0 else f"{x:.2g}"


def tok(t: TopToken, prob: bool = True) -> str:
    shown = f"'{t.token}'"
    return f"{shown} {t.prob:.2f}" if prob else shown


def view(r: TraceResult, ctx: Ctx) -> RenderableType:
    m = section(ctx.lang, "trace")
    k = len(r.rows[0].top) if r.rows else 0
    head = Text()
    head.append(m["title"].format(pos=r.position, tok=glue(r.token.label), id=r.token.id), style="bold")
    head.append("\n")
    head.append_text(model_line(ctx.lang, r.model))
    head.append("\n" + m["intro"], style="dim")

    table = Table(box=None, pad_edge=False, padding=(0, 1), header_style="bold")
    # Each stage stays one line: the vector is never broken, and what does not fit beside it
    # (the logit lens first) goes to a second block that repeats the stage.
    # hidden_states[n] is the output of layer n - 1: layers are counted from 0 in every view.
    stages = [m["embedding"] if row.layer == 0 else m["layer"].format(n=row.layer - 1) for row in r.rows]
    fixed = [
        (m["stage"], "left", max(cell_len(x) for x in stages)),
        (m["dims"].format(n=r.dims), "left", 1),
        (m["norm"], "right", 6),
        (m["cos"], "right", 5),
    ]
    cmp = r.compare
    if cmp is not None:
        fixed.append((m["vs"].format(p=cmp.position), "right", 6))
    for name, justify, width in fixed:
        table.add_column(name, justify=justify, no_wrap=True, min_width=max(width, cell_len(name)))  # type: ignore[arg-type]
    table.add_column(m["lens"].format(k=k))
    for i, row in enumerate(r.rows):
        dims = glue("[" + " ".join(f"{x:+.3f}" for x in row.head_dims) + "]")
        cells: list[Text | str | Flow] = [
            Text(
                stages[i],
                style="bold" if i in (0, len(r.rows) - 1) else "",
            ),
            dims,
            f"{row.norm:.2f}",
            "-" if row.cos_prev is None else f"{row.cos_prev:.3f}",
        ]
        if cmp is not None:
            crow = cmp.rows[i]
            cells.append(Text(f"{crow.cos:.4f}", style="green" if crow.max_abs_diff == 0 else ""))
        cells.append(Flow([Text(tok(t)) for t in row.top], "  "))
        table.add_row(*cells)

    parts: list[RenderableType] = [
        head,
        Text(""),
        FitColumns(table, whole_rows=True),
        Text(""),
        Text(m["lens_note"], style="dim"),
    ]
    c = r.check
    line = m["check_ok" if c.ok else "check_bad"].format(
        model=tok(c.model, prob=False) + f" (p={c.model.prob:.2f})",
        lens=tok(c.lens, prob=False),
        diff=fmt(c.max_diff_logits),
    )
    parts.append(Text(line, style="green" if c.ok else "bold red"))
    parts.append(Text(m["normed"].format(diff=fmt(c.hidden_states_last_normed)), style="dim"))
    if cmp is not None:
        if cmp.same_id:
            after1 = cmp.rows[1].cos if len(cmp.rows) > 1 else 1.0
            parts.append(
                Text(
                    m["same_id"].format(
                        p=cmp.position, tok=cmp.token.label, e=fmt(cmp.rows[0].max_abs_diff), c=f"{after1:.4f}"
                    )
                )
            )
        else:
            parts.append(Text(m["other_id"].format(p=cmp.position, tok=cmp.token.label, id=cmp.token.id)))
    else:
        parts.append(Text(m["no_compare"], style="dim"))
    return Fitted(Group(*parts))
