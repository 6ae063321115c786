"""Human view of a RopeResult: the rotation pairs, then the relative-position check.

The short explanatory lines live in ``MESSAGES`` (en, ko), chosen by ``result.lang``.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from attnscope.render import Ctx, view
from attnscope.render.trace import fmt
from attnscope.results.rope import RopeResult

MESSAGES: dict[str, dict[str, Any]] = {
    "en": {
        "title": "RoPE of {model}",
        "theta": "rope_theta = {t} (config.rope_parameters, rope_type {rt}); head_dim {d}: {n} pairs",
        "pairs_note": "Each pair of dims turns by pos × θ_i; θ_i = rope_theta^(-2i/d). Hugging Face pairs dim i with i + d/2.",
        "inv": "θ_i against the model's rotary_emb.inv_freq: max relative difference {d}",
        "cols": ("i", "dims", "θ_i (rad/token)", "wavelength (tokens)", "angle at pos {p}"),
        "rel_title": "score(m, n) = rot(q, m)·rot(k_n, n) depends only on n - m",
        "rel_where": "layer {l}, head {h} (KV head {kv}); q at m = {m} '{tok}', keys n = 0..{m}; prompt: {prompt}",
        "rel_cols": ("Δ", "max |score(m+Δ, n+Δ) - score(m, n)|", "shift k only: max |Δscore|"),
        "rel_ok": "the same for every Δ ✓ (max |Δscore| {d}; scores reach {s:.4g}); score(m, n) vs the forward's own q·k: {mv}",
        "rel_bad": "✗ scores change with Δ by up to {d} (scores reach {s:.4g})",
        "kv": "k is rotated: |k_proj(x) - k| = {kp}, |RoPE(k_proj(x)) - k| = {kr}.",
        "v": "v is not rotated: |v_proj(x) - v| = {vp} (rotating it would change it by {vr}).",
    },
    "ko": {
        "title": "{model}의 RoPE",
        "theta": "rope_theta = {t} (config.rope_parameters, rope_type {rt}); head_dim {d}: 짝 {n}개",
        "pairs_note": "두 칸씩 짝지어 위치 × θ_i만큼 돌린다. θ_i = rope_theta^(-2i/d). Hugging Face는 i칸과 i + d/2칸을 짝짓는다.",
        "inv": "모델 rotary_emb.inv_freq와 θ_i의 최대 상대 차이 {d}",
        "cols": ("i", "칸", "θ_i (라디안/토큰)", "한 바퀴 (토큰)", "위치 {p}의 각도"),
        "rel_title": "점수(m, n) = rot(q, m)·rot(k_n, n)는 n - m에만 달려 있다",
        "rel_where": "레이어 {l}, 헤드 {h} (KV 헤드 {kv}); q는 m = {m} '{tok}', 키 n = 0..{m}; 문장: {prompt}",
        "rel_cols": ("Δ", "|점수(m+Δ, n+Δ) - 점수(m, n)| 최대", "k만 옮길 때 최대 차이"),
        "rel_ok": "모든 Δ에서 같다 ✓ (최대 차이 {d}, 점수 크기 최대 {s:.4g}); 모델의 q·k와 점수(m, n)의 차이 {mv}",
        "rel_bad": "✗ Δ에 따라 점수가 최대 {d} 바뀐다 (점수 크기 최대 {s:.4g})",
        "kv": "k는 회전한다: |k_proj(x) - k| = {kp}, |RoPE(k_proj(x)) - k| = {kr}.",
        "v": "v는 회전하지 않는다: |v_proj(x) - v| = {vp} (돌리면 {vr}만큼 바뀐다).",
    },
}


@view.register
def render(r: RopeResult, ctx: Ctx) -> RenderableType:
    m = MESSAGES.get(r.lang, MESSAGES["en"])
    head = Text()
    head.append(m["title"].format(model=r.model.id), style="bold")
    theta = f"{r.rope_theta:,.0f}" if r.rope_theta == int(r.rope_theta) else f"{r.rope_theta:g}"
    head.append("\n" + m["theta"].format(t=theta, rt=r.rope_type, d=r.head_dim, n=len(r.pairs)))
    head.append("\n" + m["pairs_note"], style="dim")
    cols = m["cols"]
    table = Table(box=None, pad_edge=False, padding=(0, 1), header_style="bold")
    for name, justify in zip(cols, ("right", "left", "right", "right", "right"), strict=True):
        table.add_column(name.format(p=r.pos), justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for p in r.pairs:
        table.add_row(
            str(p.i),
            f"{p.dims[0]},{p.dims[1]}",
            f"{p.inv_freq:.4g}",
            f"{p.wavelength:,.1f}",
            f"{p.angle:.4g} rad ({p.angle_deg:.1f}°)",
        )
    parts: list[RenderableType] = [head, Text(""), table]
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
    for name, justify in zip(m["rel_cols"], ("right", "right", "right"), strict=True):
        rel.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for d, diff, konly in zip(rc.deltas, rc.max_diff_per_delta, rc.k_only_max_diff, strict=True):
        rel.add_row(str(d), fmt(diff), f"{konly:.3g}")
    parts.append(rel)
    key = "rel_ok" if r.ok else "rel_bad"
    parts.append(
        Text(
            m[key].format(d=fmt(rc.max_diff), s=rc.max_abs_score, mv=fmt(rc.max_diff_vs_model)),
            style="green" if r.ok else "bold red",
        )
    )
    v = r.v_check
    parts.append(Text(m["kv"].format(kp=f"{v.k_pre_vs_post:.3g}", kr=fmt(v.k_rotated_vs_post)), style="dim"))
    parts.append(Text(m["v"].format(vp=fmt(v.v_pre_vs_post), vr=f"{v.v_rotated_vs_post:.3g}"), style="dim"))
    for note in r.notes:
        parts.append(Text(note, style="dim"))
    return Group(*parts)
