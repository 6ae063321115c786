"""Human view of an ExplainResult: the note's pseudo-code, one key per row, then the checks.

The short explanatory lines live in ``MESSAGES`` (en, ko), chosen by ``result.lang``.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from attnscope.render import Ctx, bar, view
from attnscope.render.trace import fmt
from attnscope.results.explain import ExplainResult

MESSAGES: dict[str, dict[str, Any]] = {
    "en": {
        "title": "layer {layer}, head {head}: query '{q}' = token {i}",
        "kv": "KV head {kv}, shared by query heads {shared}; head_dim d = {d}, scale 1/√d = {s:.4g}",
        "steps": "scores_j = q·k_j for j ≤ {i};  scaled = score ÷ √d;  weights = softmax(scaled);  out = Σ w_j v_j",
        "q": "q (post-RoPE)",
        "cols": ("j", "token", "k_j", "q·k_j", "÷√d", "weight", "", "captured"),
        "masked": "keys {keys}: after the query, masked to -inf before softmax → weight 0 (captured max {m})",
        "sum": "sum of weights {s:.6f}",
        "out": "out = Σ w_j v_j",
        "model_out": "model output, head {h}, before o_proj",
        "diff_w": "max |weights - captured weights| = {d}",
        "diff_o": "max |out - model output| = {d}",
        "rope": "q and k are used after RoPE: |q_proj(x) - q| = {qp}, |k_proj(x) - k| = {kp}; RoPE(q_proj(x)), RoPE(k_proj(x)) give them back (max |Δ| {qr}, {kr}).",
        "v": "v is not rotated: |v_proj(x) - v| = {v}.",
        "ok": "✓ matches the model",
        "bad": "✗ MISMATCH",
        "first": "The query is position 0: it sees only itself, so its weight is 1.",
    },
    "ko": {
        "title": "레이어 {layer}, 헤드 {head}: 쿼리 '{q}' = 토큰 {i}",
        "kv": "KV 헤드 {kv}(쿼리 헤드 {shared}가 같이 씀); head_dim d = {d}, 나누는 값 1/√d = {s:.4g}",
        "steps": "j ≤ {i}마다 점수 = q·k_j;  √d로 나눔;  softmax로 비율;  out = Σ 비율_j × v_j",
        "q": "q (RoPE 적용 후)",
        "cols": ("j", "토큰", "k_j", "q·k_j", "÷√d", "비율", "", "캡처 값"),
        "masked": "키 {keys}: 쿼리보다 뒤라서 softmax 전에 -inf로 지움 → 비율 0 (캡처 최댓값 {m})",
        "sum": "비율 합계 {s:.6f}",
        "out": "out = Σ 비율_j × v_j",
        "model_out": "모델 출력(헤드 {h}, o_proj 전)",
        "diff_w": "비율과 캡처 값의 최대 차이 = {d}",
        "diff_o": "out과 모델 출력의 최대 차이 = {d}",
        "rope": "q와 k는 RoPE를 거친 값이다: |q_proj(x) - q| = {qp}, |k_proj(x) - k| = {kp}; q_proj(x), k_proj(x)를 RoPE로 돌리면 q, k가 된다(최대 차이 {qr}, {kr}).",
        "v": "v는 회전하지 않는다: |v_proj(x) - v| = {v}.",
        "ok": "✓ 모델과 같다",
        "bad": "✗ 불일치",
        "first": "쿼리가 위치 0이다: 자기 자신만 보므로 비율이 1이다.",
    },
}


def _vec(values: list[float], n: int) -> str:
    more = " …" if len(values) > n else ""
    return "[" + " ".join(f"{x:+.3f}" for x in values[:n]) + more + "]"


def _ranges(values: list[int]) -> str:
    if not values:
        return "-"
    return f"{values[0]}" if len(values) == 1 else f"{values[0]}..{values[-1]}"


@view.register
def render(r: ExplainResult, ctx: Ctx) -> RenderableType:
    m = MESSAGES.get(r.lang, MESSAGES["en"])
    i = r.query.index
    head = Text()
    head.append(m["title"].format(layer=r.layer, head=r.head, q=r.query.text, i=i), style="bold")
    head.append(
        "\n" + m["kv"].format(kv=r.kv_head, shared=_ranges(r.shared_heads), d=r.head_dim, s=r.scaling), style="dim"
    )
    head.append("\n" + m["steps"].format(i=i), style="dim")
    head.append(f"\n{m['q']} {_vec(r.q, r.dims)}")

    cols = m["cols"]
    table = Table(box=None, pad_edge=False, padding=(0, 1), header_style="bold")
    for name, justify in zip(cols, ("right", "left", "left", "right", "right", "right", "left", "right"), strict=True):
        table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
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
    parts: list[RenderableType] = [head, Text(""), table]
    if r.masked:
        parts.append(Text(m["masked"].format(keys=_ranges(r.masked), m=fmt(r.masked_captured_max)), style="dim"))
    parts.append(Text(m["sum"].format(s=sum(r.weights)), style="dim"))
    parts.append(Text(""))
    vecs = Table(box=None, show_header=False, pad_edge=False, padding=(0, 1))
    vecs.add_column(no_wrap=True)
    vecs.add_column(no_wrap=True)
    vecs.add_row(m["out"], _vec(r.out, r.dims))
    vecs.add_row(m["model_out"].format(h=r.head), _vec(r.model_out, r.dims))
    parts.append(vecs)
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
            ),
            style="dim",
        )
    )
    parts.append(Text(m["v"].format(v=fmt(e.v_pre_vs_post)), style="dim"))
    if i == 0:
        parts.append(Text(m["first"], style="dim"))
    for note in r.notes:
        parts.append(Text(note, style="dim"))
    return Group(*parts)
