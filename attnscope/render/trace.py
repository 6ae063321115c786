"""Human view of a TraceResult: the note's layer-stack diagram, one row per stage.

The short explanatory lines live in ``MESSAGES`` (en, ko), chosen by ``result.lang``.
"""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from attnscope.render import Ctx, view
from attnscope.results.trace import TopToken, TraceResult

MESSAGES: dict[str, dict[str, Any]] = {
    "en": {
        "title": "trace of position {pos} '{tok}' (token id {id})",
        "intro": "The embedding depends on the token id only; each layer mixes in earlier positions and reworks the vector.",
        "stage": "stage",
        "dims": "first {n} dims",
        "norm": "norm",
        "cos": "cos prev",
        "lens": "logit lens top-{k}",
        "vs": "cos vs {p}",
        "lens_note": "logit lens: the row read through the final norm and lm_head, as if it were the last layer.",
        "check_ok": "next token: full forward {model}, last row's top-1 {lens}: same ✓ (max |Δlogit| {diff})",
        "check_bad": "MISMATCH ✗: full forward {model}, last row's top-1 {lens} (max |Δlogit| {diff})",
        "normed": "hidden_states[-1] is already final-normed (max |Δ| {diff}); the last row is the layer's raw output.",
        "same_id": "position {p} '{tok}' has the same token id: embedding identical (max |Δ| {e}), cos {c} after layer 1.",
        "other_id": "position {p} '{tok}' has a different token id ({id}); its embedding differs too.",
        "no_compare": "No other position holds this token id; pass --compare-pos N to compare with one.",
        "embedding": "embedding",
        "layer": "layer {n}",
    },
    "ko": {
        "title": "위치 {pos} '{tok}' (토큰 ID {id})의 벡터",
        "intro": "임베딩은 토큰 ID만으로 정해진다. 레이어마다 앞 위치들을 섞고 벡터를 다시 가공한다.",
        "stage": "단계",
        "dims": "앞 {n}칸",
        "norm": "크기",
        "cos": "이전과 cos",
        "lens": "로짓 렌즈 상위 {k}",
        "vs": "cos(위치 {p})",
        "lens_note": "로짓 렌즈: 이 행을 마지막 레이어인 것처럼 final norm과 lm_head에 통과시켜 읽은 값.",
        "check_ok": "다음 토큰: 전체 계산 {model}, 마지막 행 1위 {lens}: 같다 ✓ (로짓 최대 차이 {diff})",
        "check_bad": "불일치 ✗: 전체 계산 {model}, 마지막 행 1위 {lens} (로짓 최대 차이 {diff})",
        "normed": "hidden_states[-1]은 이미 final norm을 거친 값이다(최대 차이 {diff}). 마지막 행은 레이어의 원래 출력이다.",
        "same_id": "위치 {p}('{tok}')도 토큰 ID가 같다: 임베딩은 똑같고(최대 차이 {e}), 레이어 1 뒤 cos는 {c}.",
        "other_id": "위치 {p}('{tok}')는 토큰 ID가 다르다({id}). 임베딩부터 다르다.",
        "no_compare": "같은 토큰 ID가 다른 위치에 없다. 비교하려면 --compare-pos N을 준다.",
        "embedding": "임베딩",
        "layer": "레이어 {n} 뒤",
    },
}


def fmt(x: float) -> str:
    """Differences: 0 stays 0, the rest in 2 significant digits."""
    return "0" if x == 0 else f"{x:.2g}"


def tok(t: TopToken, prob: bool = True) -> str:
    shown = f"'{t.token}'"
    return f"{shown} {t.prob:.2f}" if prob else shown


@view.register
def render(r: TraceResult, ctx: Ctx) -> RenderableType:
    m = MESSAGES.get(r.lang, MESSAGES["en"])
    k = len(r.rows[0].top) if r.rows else 0
    head = Text()
    head.append(m["title"].format(pos=r.position, tok=r.token.label, id=r.token.id), style="bold")
    head.append(
        f"\nmodel {r.model.id}  {r.model.num_hidden_layers} layers, {r.model.dtype} on {r.model.device}", style="dim"
    )
    head.append("\n" + m["intro"], style="dim")

    table = Table(box=None, pad_edge=False, padding=(0, 1), header_style="bold")
    # Fixed columns keep their width; only the logit-lens column is cut (with …) on a narrow terminal.
    fixed = [
        (m["stage"], "left", 9),
        (m["dims"].format(n=r.dims), "left", 1 + 7 * r.dims),
        (m["norm"], "right", 6),
        (m["cos"], "right", 5),
    ]
    cmp = r.compare
    if cmp is not None:
        fixed.append((m["vs"].format(p=cmp.position), "right", 6))
    for name, justify, width in fixed:
        table.add_column(name, justify=justify, no_wrap=True, min_width=max(width, cell_len(name)))  # type: ignore[arg-type]
    table.add_column(m["lens"].format(k=k), no_wrap=True, overflow="ellipsis")
    for i, row in enumerate(r.rows):
        dims = "[" + " ".join(f"{x:+.3f}" for x in row.head_dims) + "]"
        cells: list[Text | str] = [
            Text(
                m["embedding"] if row.layer == 0 else m["layer"].format(n=row.layer),
                style="bold" if i in (0, len(r.rows) - 1) else "",
            ),
            dims,
            f"{row.norm:.2f}",
            "-" if row.cos_prev is None else f"{row.cos_prev:.3f}",
        ]
        if cmp is not None:
            crow = cmp.rows[i]
            cells.append(Text(f"{crow.cos:.4f}", style="green" if crow.max_abs_diff == 0 else ""))
        cells.append("  ".join(tok(t) for t in row.top))
        table.add_row(*cells)

    parts: list[RenderableType] = [head, Text(""), table, Text(""), Text(m["lens_note"], style="dim")]
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
    for note in r.notes:
        parts.append(Text(note, style="dim"))
    return Group(*parts)
