"""Human view of a RopeResult: the rotation pairs, then the relative-position check.

The short explanatory lines live in ``MESSAGES`` (en, ko), chosen by ``result.lang``.
"""

from __future__ import annotations

import math

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from attnscope.render import Ctx
from attnscope.render.common import ranges
from attnscope.render.fit import FitColumns, Fitted
from attnscope.render.i18n import section, t
from attnscope.render.trace import fmt
from attnscope.results.rope import RopeResult


def view(r: RopeResult, ctx: Ctx) -> RenderableType:
    m = section(ctx.lang, "rope")
    head = Text()
    head.append(m["title"].format(model=r.model.id), style="bold")
    theta = _theta(r.rope_theta)
    head.append("\n" + m["theta"].format(t=theta, rt=r.rope_type, d=r.head_dim, n=len(r.pairs)))
    if len({(b.rope_theta, b.rope_type) for b in r.bases}) > 1:
        layer = r.relative_check.layer
        kind = next((b.layer_type for b in r.bases if layer in b.layers), "")
        listed = m["base_sep"].join(
            m["base"].format(kind=b.layer_type, layers=ranges(ctx.lang, b.layers), t=_theta(b.rope_theta))
            for b in r.bases
        )
        head.append("\n" + t(ctx.lang, "rope.bases", bases=listed, l=layer, kind=kind))
    head.append("\n" + m["pairs_note"], style="dim")
    cols = m["cols"].split("\t")
    table = Table(box=None, pad_edge=False, padding=(0, 1), header_style="bold")
    for name, justify in zip(cols, ("right", "left", "right", "right", "right"), strict=True):
        table.add_column(name.format(p=r.pos), justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for p in r.pairs:
        table.add_row(
            str(p.i),
            f"{p.dims[0]},{p.dims[1]}",
            f"{p.inv_freq:.4g}",
            f"{p.wavelength:,.1f}",
            f"{p.angle:.4g} rad ({math.degrees(p.angle):,.1f}°)",  # both unwrapped (angle_deg is mod 360)
        )
    parts: list[RenderableType] = [head, Text(""), FitColumns(table)]
    if r.inv_freq_max_rel_diff is not None:
        parts.append(Text(m["inv"].format(d=fmt(r.inv_freq_max_rel_diff)), style="dim"))
    rc = r.relative_check
    parts += [Text(""), Text(m["rel_title"], style="bold")]
    prompt = r.prompt if len(r.prompt) <= 60 else r.prompt[:57] + "…"
    parts.append(
        Text(
            m["rel_where"].format(
                l=rc.layer, h=rc.head, kv=rc.kv_head, m=rc.query_pos, tok=r.tokens[rc.query_pos].label, prompt=prompt
            ),
            style="dim",
        )
    )
    rel = Table(box=None, pad_edge=False, padding=(0, 1), header_style="bold")
    for name, justify in zip(m["rel_cols"].split("\t"), ("right", "right", "right"), strict=True):
        rel.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for d, diff, konly in zip(rc.deltas, rc.max_diff_per_delta, rc.k_only_max_diff, strict=True):
        rel.add_row(str(d), fmt(diff), f"{konly:.3g}")
    parts.append(FitColumns(rel))
    key = "rel_ok" if r.ok else "rel_bad"
    parts.append(
        Text(
            m[key].format(d=fmt(rc.max_diff), s=rc.max_abs_score, mv=fmt(rc.max_diff_vs_model)),
            style="green" if r.ok else "bold red",
        )
    )
    v = r.v_check
    kx = "k_norm(k_proj(x))" if r.qk_norm else "k_proj(x)"
    parts.append(Text(m["kv"].format(kp=f"{v.k_pre_vs_post:.3g}", kr=fmt(v.k_rotated_vs_post), kx=kx), style="dim"))
    parts.append(Text(m["v"].format(vp=fmt(v.v_pre_vs_post), vr=f"{v.v_rotated_vs_post:.3g}"), style="dim"))
    return Fitted(Group(*parts))


def _theta(theta: float) -> str:
    """A RoPE base as the view writes it: ``1,000,000``, or ``%g`` where it is no whole number."""
    return f"{theta:,.0f}" if theta == int(theta) else f"{theta:g}"
