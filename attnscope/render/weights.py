"""Human view of a WeightsResult: the note's chart, the keys x layers strip, per-head charts."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from attnscope.render import Ctx, bar, heat_style, shade, view
from attnscope.results.weights import Chart, Strip, WeightsResult


def _ranges(values: list[int]) -> str:
    if not values:
        return "-"
    parts = []
    start = prev = values[0]
    for v in values[1:] + [None]:  # type: ignore[list-item]
        if v is not None and v == prev + 1:
            prev = v
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if v is not None:
            start = prev = v
    return ",".join(parts)


def header(r: WeightsResult) -> Text:
    q = r.query
    tok = r.tokens[q.index]
    text = Text()
    text.append("query ", style="dim")
    text.append(q.text, style="bold")
    text.append(f"  (token {q.index} '{tok.label}')", style="dim")
    text.append(
        f"\nmodel {r.model.id}  {r.model.num_hidden_layers} layers, {r.model.num_attention_heads} heads "
        f"/ {r.model.num_key_value_heads} KV heads, {r.model.dtype} on {r.model.device}",
        style="dim",
    )
    text.append(f"\nlayers {_ranges(r.layers)}  heads {_ranges(r.heads)}", style="dim")
    return text


def chart_table(chart: Chart, title: str | None = None, width: int = 30) -> Table:
    table = Table(box=None, show_header=False, pad_edge=False, padding=(0, 1), title=title, title_justify="left")
    table.add_column("key", no_wrap=True)
    table.add_column("weight", justify="right", no_wrap=True)
    table.add_column("bar", no_wrap=True)
    table.add_column("mark", no_wrap=True, style="dim")
    for b in chart.bars:
        mark = "<- self" if b.is_query else ("excluded (sink)" if b.excluded else "")
        style = "bold" if b.is_query else ""
        table.add_row(
            Text(b.label, style=style),
            "-" if b.excluded else f"{b.weight:.2f}",
            Text(bar(b.weight, width), style="cyan"),
            mark,
        )
    table.add_row("", "-----", "", "")
    table.add_row("sum", f"{chart.total:.2f}", "", "")
    return table


def strip_table(strip: Strip, query_key: int | None = None) -> Table:
    top = max((max(row) for row in strip.values if row), default=1.0) or 1.0
    table = Table(box=None, pad_edge=False, padding=(0, 0), show_header=True, header_style="dim")
    table.add_column("", no_wrap=True)
    table.add_column(" ", no_wrap=True)
    for layer in strip.layers:
        table.add_column(str(layer % 10) if len(strip.layers) > 10 else str(layer), no_wrap=True, justify="center")
    for ki, (key, row) in enumerate(zip(strip.keys, strip.values, strict=True)):
        cells = [
            Text(shade(v, top) * 2 if len(strip.layers) <= 10 else shade(v, top), style=heat_style(v, top)) for v in row
        ]
        table.add_row(Text(key, style="bold" if ki == query_key else ""), " ", *cells)
    return table


def strip_caption(strip: Strip) -> Text:
    top = max((max(row) for row in strip.values if row), default=1.0) or 1.0
    where = (
        f"layers {strip.layers[0]}..{strip.layers[-1]}, header shows the last digit; " if len(strip.layers) > 10 else ""
    )
    return Text(f"{where}shading scale 0..{top:.2f}", style="dim")


@view.register
def render(r: WeightsResult, ctx: Ctx) -> RenderableType:
    parts: list[RenderableType] = [header(r), Text("")]
    query_key = next((i for i, b in enumerate(r.chart.bars) if b.is_query), None)
    if len(r.layers) > 1:
        parts += [
            Text("keys x layers (mean over the selected heads; darker = more)", style="dim"),
            strip_table(r.strip, query_key),
            strip_caption(r.strip),
            Text(""),
        ]
    if r.view.per_head and r.per_head:
        for chart in r.per_head:
            parts += [
                chart_table(chart, title=f"layer {chart.layer} head {chart.head} (KV head {chart.kv_head})"),
                Text(""),
            ]
    else:
        title = "weights the query mixes in" + (f" ({r.view.agg})" if len(r.layers) * len(r.heads) > 1 else "")
        parts.append(chart_table(r.chart, title=title))
    for note in r.notes:
        parts.append(Text(note, style="dim"))
    return Group(*parts)
