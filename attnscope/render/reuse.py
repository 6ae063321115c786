"""Human view of a ReuseResult: K/V and rows per layer, the cache check, and the cost of doubling.

The short explanatory lines live in ``MESSAGES`` (en, ko), chosen by ``result.lang``.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from attnscope.render import Ctx, view
from attnscope.render.trace import fmt
from attnscope.results.reuse import ReuseResult

MESSAGES: dict[str, dict[str, Any]] = {
    "en": {
        "title": "prefix {p!r} ({n} tokens) + suffix {s!r} ({m} tokens)",
        "claim": "Earlier K and V do not change when tokens are appended, so they can be kept (a KV cache).",
        "cols": ("layer", "max |ΔK|", "max |ΔV|", "max |Δ rows|", "weight on suffix"),
        "table_note": "prefix positions: alone vs inside prefix+suffix (differences are float rounding)",
        "kv_ok": "K, V and the prefix rows are unchanged at every layer ✓ (max |ΔK| {k}, |ΔV| {v}, |Δrows| {r})",
        "kv_bad": "✗ prefix K/V or rows changed: max |ΔK| {k}, |ΔV| {v}, |Δrows| {r}",
        "cache": "cache: the suffix run on a copy of the prefix's cache ({a} → {b} tokens; the original stays {c}) predicts {x}; one full pass predicts {y}",
        "logits": "max |Δ next-token logits| = {d} {mark}; the cache holds the captured K exactly (max |Δ| {ck})",
        "cost_title": "cost: each query is compared with itself and every earlier key: T(T+1)/2 per head per layer",
        "cost_cols": ("", "tokens T", "per head per layer", "all {l} layers × {h} heads", "attention time (1 layer)"),
        "prompt": "prompt",
        "doubled": "doubled",
        "ratio": "× {r:.2f} comparisons; measured time × {t:.2f} ({on})",
        "short": "At a few dozen tokens fixed overhead dominates the time; --repeat 64 shows the growth.",
        "separate": "Prefix and suffix are tokenized separately and their ids joined, so the prefix tokens are the same in both runs.",
        "boundary": "Tokenizing prefix+suffix as one text would give other tokens at the boundary; this check uses the separately tokenized ids.",
    },
    "ko": {
        "title": "앞부분 {p!r} (토큰 {n}개) + 뒷부분 {s!r} (토큰 {m}개)",
        "claim": "앞 토큰의 K와 V는 뒤에 토큰이 붙어도 바뀌지 않는다. 그래서 저장해 두고 다시 쓸 수 있다(KV 캐시).",
        "cols": ("레이어", "K 최대 차이", "V 최대 차이", "비율 행 최대 차이", "뒷부분에 준 비율"),
        "table_note": "앞부분 위치: 혼자 계산 vs 뒷부분을 붙여 계산 (차이는 부동소수점 반올림)",
        "kv_ok": "모든 레이어에서 K, V, 앞부분의 비율 행이 그대로다 ✓ (K {k}, V {v}, 행 {r})",
        "kv_bad": "✗ 앞부분의 K/V나 비율 행이 바뀌었다: K {k}, V {v}, 행 {r}",
        "cache": "캐시: 앞부분 캐시의 복사본({a} → {b}토큰, 원본은 {c}토큰 그대로)에 뒷부분만 돌린 다음 토큰 {x}, 한 번에 전부 돌린 다음 토큰 {y}",
        "logits": "다음 토큰 로짓 최대 차이 = {d} {mark}; 캐시에 든 K는 캡처한 K와 같다 (최대 차이 {ck})",
        "cost_title": "비용: 쿼리마다 자기와 앞 키 전부와 비교한다. 헤드 하나, 레이어 하나에 T(T+1)/2번",
        "cost_cols": ("", "토큰 수 T", "헤드·레이어당", "레이어 {l}개 × 헤드 {h}개", "어텐션 시간(레이어 1개)"),
        "prompt": "입력",
        "doubled": "두 배",
        "ratio": "비교 횟수 × {r:.2f}; 잰 시간 × {t:.2f} ({on})",
        "short": "수십 토큰에서는 고정 비용이 시간을 좌우한다. --repeat 64로 늘려 보면 증가가 보인다.",
        "separate": "앞부분과 뒷부분을 따로 토큰화해 ID를 이어 붙였다. 그래서 두 계산에서 앞부분 토큰이 같다.",
        "boundary": "이어 붙인 글을 한 번에 토큰화하면 경계의 토큰이 달라진다. 이 확인은 따로 토큰화한 ID를 쓴다.",
    },
}


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms"


@view.register
def render(r: ReuseResult, ctx: Ctx) -> RenderableType:
    m = MESSAGES.get(r.lang, MESSAGES["en"])
    n_suffix = len(r.tokens) - r.prefix_tokens
    head = Text()
    head.append(m["title"].format(p=r.prefix, n=r.prefix_tokens, s=r.suffix, m=n_suffix), style="bold")
    head.append("\n" + m["claim"], style="dim")
    head.append("\n" + m["separate"], style="dim")
    if not r.boundary_same:
        head.append("\n" + m["boundary"], style="yellow")
    labels = [t.label for t in r.tokens]
    head.append("\n" + " ".join(labels[: r.prefix_tokens]) + " | " + " ".join(labels[r.prefix_tokens :]))

    table = Table(box=None, pad_edge=False, padding=(0, 1), header_style="bold")
    for name in m["cols"]:
        table.add_column(name, justify="right", no_wrap=True)
    for d in r.per_layer:
        table.add_row(
            str(d.layer), fmt(d.max_diff_k), fmt(d.max_diff_v), fmt(d.max_diff_rows), fmt(d.max_future_weight)
        )
    parts: list[RenderableType] = [head, Text(""), Text(m["table_note"], style="dim"), table]
    kv_ok = r.kv_ok
    parts.append(
        Text(
            m["kv_ok" if kv_ok else "kv_bad"].format(k=fmt(r.max_diff_k), v=fmt(r.max_diff_v), r=fmt(r.max_diff_rows)),
            style="green" if kv_ok else "bold red",
        )
    )
    c = r.cache
    parts.append(Text(""))
    parts.append(
        Text(
            m["cache"].format(
                a=c.prefix_len,
                b=c.copy_len,
                c=c.original_len_after,
                x=f"'{c.cached.token}' (p={c.cached.prob:.3f})",
                y=f"'{c.full.token}' (p={c.full.prob:.3f})",
            )
        )
    )
    mark = "✓" if r.cache_ok else "✗"
    parts.append(
        Text(
            m["logits"].format(d=fmt(r.max_diff_logits), mark=mark, ck=fmt(c.max_diff_cache_k)),
            style="green" if r.cache_ok else "bold red",
        )
    )
    cp = r.comparisons
    parts += [Text(""), Text(m["cost_title"], style="bold")]
    cost = Table(box=None, pad_edge=False, padding=(0, 1), header_style="bold")
    for name, justify in zip(m["cost_cols"], ("left", "right", "right", "right", "right"), strict=True):
        cost.add_column(name.format(l=cp.layers, h=cp.heads), justify=justify, no_wrap=True)  # type: ignore[arg-type]
    cost.add_row(m["prompt"], str(cp.tokens), f"{cp.per_head_per_layer:,}", f"{cp.total:,}", _ms(cp.seconds))
    cost.add_row(
        m["doubled"],
        str(cp.doubled_tokens),
        f"{cp.doubled_per_head_per_layer:,}",
        f"{cp.doubled_total:,}",
        _ms(cp.doubled_seconds),
    )
    parts.append(cost)
    parts.append(Text(m["ratio"].format(r=cp.ratio, t=cp.time_ratio, on=cp.timed_on)))
    if cp.tokens < 256:
        parts.append(Text(m["short"], style="dim"))
    for note in r.notes:
        parts.append(Text(note, style="dim"))
    return Group(*parts)
