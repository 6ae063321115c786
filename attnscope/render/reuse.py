"""Human view of a ReuseResult: K/V and rows per layer, the cache check, and the cost of doubling.

Its words are the ``reuse`` section of the catalogues, in the language of ``ctx.lang``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from attnscope.render import Ctx
from attnscope.render.fit import FitColumns, Fitted, Flow
from attnscope.render.i18n import section
from attnscope.render.trace import fmt
from attnscope.results.reuse import ReuseResult


def _timed_on(where: str, m: Mapping[str, str]) -> str:
    """Where the attention was timed (the result's ``cpu, 1 thread``) in the catalogue's words
    (``CPU, 스레드 1개`` in Korean); any other device name stays as it is."""
    found = re.fullmatch(r"cpu, (\d+) threads?", where)
    if found is None:
        return where
    n = int(found.group(1))
    return m["on_cpu_one" if n == 1 else "on_cpu_many"].format(n=n)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms"


def view(r: ReuseResult, ctx: Ctx) -> RenderableType:
    m = section(ctx.lang, "reuse")
    n_suffix = len(r.tokens) - r.prefix_tokens
    head = Text()
    head.append(m["title"].format(p=r.prefix, n=r.prefix_tokens, s=r.suffix, m=n_suffix), style="bold")
    head.append("\n" + m["claim"], style="dim")
    head.append("\n" + m["separate"], style="dim")
    if not r.boundary_same:
        head.append("\n" + m["boundary"], style="yellow")
    labels = [Text(t.label) for t in r.tokens]
    tokens = Flow([*labels[: r.prefix_tokens], Text("|"), *labels[r.prefix_tokens :]], sep="  ")

    table = Table(box=None, pad_edge=False, padding=(0, 1), header_style="bold")
    for name in m["cols"].split("\t"):
        table.add_column(name, justify="right", no_wrap=True)
    for d in r.per_layer:
        table.add_row(
            str(d.layer), fmt(d.max_diff_k), fmt(d.max_diff_v), fmt(d.max_diff_rows), fmt(d.max_future_weight)
        )
    parts: list[RenderableType] = [head, tokens, Text(""), Text(m["table_note"], style="dim"), FitColumns(table)]
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
    for name, justify in zip(m["cost_cols"].split("\t"), ("left", "right", "right", "right", "right"), strict=True):
        cost.add_column(name.format(l=cp.layers, h=cp.heads), justify=justify, no_wrap=True)  # type: ignore[arg-type]
    cost.add_row(m["prompt"], str(cp.tokens), f"{cp.per_head_per_layer:,}", f"{cp.total:,}", _ms(cp.seconds))
    cost.add_row(
        m["doubled"],
        str(cp.doubled_tokens),
        f"{cp.doubled_per_head_per_layer:,}",
        f"{cp.doubled_total:,}",
        _ms(cp.doubled_seconds),
    )
    parts.append(FitColumns(cost))
    parts.append(Text(m["ratio"].format(r=cp.ratio, t=cp.time_ratio, on=_timed_on(cp.timed_on, m))))
    if cp.tokens < 256:
        parts.append(Text(m["short"], style="dim"))
    return Fitted(Group(*parts))
