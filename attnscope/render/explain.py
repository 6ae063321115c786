"""Human view of an ExplainResult: the note's pseudo-code, one key per row, then the checks.

The short explanatory lines live in ``MESSAGES`` (en, ko), chosen by ``result.lang``.
"""

from __future__ import annotations

import math

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from attnscope.render import Ctx, bar
from attnscope.render.common import ranges
from attnscope.render.fit import FitColumns, Fitted, glue
from attnscope.render.i18n import section, t
from attnscope.render.trace import fmt
from attnscope.results.explain import ExplainResult


def _vec(values: list[float], n: int) -> str:
    more = " …" if len(values) > n else ""
    return "[" + " ".join(f"{x:+.3f}" for x in values[:n]) + more + "]"


def view(r: ExplainResult, ctx: Ctx) -> RenderableType:
    m = section(ctx.lang, "explain")
    i = r.query.index
    head = Text()
    head.append(m["title"].format(layer=r.layer, head=r.head, q=glue(r.query.text), i=i), style="bold")
    shared = ranges(ctx.lang, r.shared_heads)
    own = abs(r.scaling * math.sqrt(r.head_dim) - 1.0) > 1e-6  # a scaling of its own, not 1/sqrt(d) (Gemma, Granite)
    if own:
        kv = t(
            ctx.lang,
            "explain.kv_scaled",
            kv=r.kv_head,
            shared=shared,
            d=r.head_dim,
            s=f"{r.scaling:.4g}",
            inv=f"{r.head_dim**-0.5:.4g}",
        )
    else:
        kv = t(
            ctx.lang,
            "explain.kv",
            kv=r.kv_head,
            shared=shared,
            d=r.head_dim,
            root=f"{math.sqrt(r.head_dim):.4g}",
            s=r.scaling,
        )
    head.append("\n" + kv, style="dim")
    suffix = "_scaled" if own else ""
    head.append("\n" + m["steps" + suffix].format(i=i), style="dim")
    head.append(f"\n{m['q']} {_vec(r.q, r.dims)}")

    cols = m["cols" + suffix].split("\t")
    table = Table(box=None, pad_edge=False, padding=(0, 1), header_style="bold")
    half = len(_vec(r.q, r.dims)) // 2 + 1  # a vector wraps between its numbers, onto two lines at most
    for n, (name, justify) in enumerate(
        zip(cols, ("right", "left", "left", "right", "right", "right", "left", "right"), strict=True)
    ):
        table.add_column(name, justify=justify, no_wrap=n != 2, min_width=half if n == 2 else None)  # type: ignore[arg-type]
    top = max(r.weights) if r.weights else 1.0
    for n, j in enumerate(r.keys):
        style = "bold" if j == i else ""
        table.add_row(
            str(j),
            Text(r.tokens[j].label, style=style),
            _vec(r.k[n], r.dims),
            f"{r.scores[n]:.2f}",
            f"{r.scaled[n]:.3f}",
            Text(f"{r.weights[n]:.4f}", style=style),
            Text(bar(r.weights[n] / top if top > 0 else 0.0, 20), style="cyan"),
            f"{r.captured[n]:.4f}",
        )
    parts: list[RenderableType] = [head, Text(""), FitColumns(table, [[6]], keys=[0, 1])]  # narrow: no bar
    if r.masked:
        parts.append(
            Text(m["masked"].format(keys=ranges(ctx.lang, r.masked), m=fmt(r.masked_captured_max)), style="dim")
        )
    parts.append(Text(m["sum"].format(s=sum(r.weights)), style="dim"))
    parts.append(Text(""))
    vecs = Table(box=None, show_header=False, pad_edge=False, padding=(0, 1))
    vecs.add_column()  # a label that wraps between its words on a narrow screen
    vecs.add_column(min_width=half)
    vecs.add_row(m["out"], _vec(r.out, r.dims))
    vecs.add_row(m["model_out"].format(h=r.head), _vec(r.model_out, r.dims))
    parts.append(FitColumns(vecs))
    verdict = m["ok"] if r.ok else m["bad"]
    style = "green" if r.ok else "bold red"
    parts.append(
        Text(
            m["diff_w"].format(d=fmt(r.max_diff_weights))
            + "   "
            + m["diff_o"].format(d=fmt(r.max_diff_out))
            + "   "
            + verdict,
            style=style,
        )
    )
    e = r.rope
    parts.append(
        Text(
            m["rope"].format(
                qp=f"{e.q_pre_vs_post:.3g}",
                kp=f"{e.k_pre_vs_post:.3g}",
                qr=fmt(e.q_rotated_vs_post),
                kr=fmt(e.k_rotated_vs_post),
                qx="q_norm(q_proj(x))" if r.qk_norm else "q_proj(x)",
                kx="k_norm(k_proj(x))" if r.qk_norm else "k_proj(x)",
            ),
            style="dim",
        )
    )
    parts.append(Text(m["v"].format(v=fmt(e.v_pre_vs_post)), style="dim"))
    if i == 0:
        parts.append(Text(m["first"], style="dim"))
    return Fitted(Group(*parts))
