"""Human view of a WeightsResult: the note's chart, the keys x layers strip, per-head charts."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from attnscope.render import Ctx, bar, heat_style, shade, view
from attnscope.render.common import model_line, ranges, span
from attnscope.render.i18n import Lang, t
from attnscope.results.weights import Bar, Chart, Strip, WeightsResult


def header(r: WeightsResult, lang: Lang) -> Text:
    q = r.query
    text = Text()
    text.append(t(lang, "common.query") + " ", style="dim")
    text.append(q.text, style="bold")
    text.append(t(lang, "weights.query_token", index=q.index, label=r.tokens[q.index].label), style="dim")
    text.append("\n")
    text.append_text(model_line(lang, r.model))
    text.append(
        "\n" + t(lang, "common.selection", layers=ranges(lang, r.layers), heads=ranges(lang, r.heads)), style="dim"
    )
    return text


def bar_label(b: Bar, lang: Lang) -> str:
    return t(lang, "weights.partial", label=b.label) if b.partial else b.label


def chart_table(chart: Chart, lang: Lang, title: str | None = None, width: int = 30) -> Table:
    table = Table(box=None, show_header=False, pad_edge=False, padding=(0, 1), title=title, title_justify="left")
    table.add_column("key", no_wrap=True)
    table.add_column("weight", justify="right", no_wrap=True)
    table.add_column("bar", no_wrap=True)
    table.add_column("mark", no_wrap=True, style="dim")
    for b in chart.bars:
        mark = t(lang, "common.self") if b.is_query else (t(lang, "weights.excluded") if b.excluded else "")
        style = "bold" if b.is_query else ""
        table.add_row(
            Text(bar_label(b, lang), style=style),
            "-" if b.excluded else f"{b.weight:.2f}",
            Text(bar(b.weight, width), style="cyan"),
            mark,
        )
    table.add_row("", "-----", "", "")
    table.add_row(t(lang, "common.sum"), f"{chart.total:.2f}", "", "")
    return table


def strip_table(strip: Strip, labels: list[str], query_key: int | None = None) -> Table:
    top = max((max(row) for row in strip.values if row), default=1.0) or 1.0
    table = Table(box=None, pad_edge=False, padding=(0, 0), show_header=True, header_style="dim")
    table.add_column("", no_wrap=True)
    table.add_column(" ", no_wrap=True)
    for layer in strip.layers:
        table.add_column(str(layer % 10) if len(strip.layers) > 10 else str(layer), no_wrap=True, justify="center")
    for ki, (key, row) in enumerate(zip(labels, strip.values, strict=True)):
        cells = [
            Text(shade(v, top) * 2 if len(strip.layers) <= 10 else shade(v, top), style=heat_style(v, top)) for v in row
        ]
        table.add_row(Text(key, style="bold" if ki == query_key else ""), " ", *cells)
    return table


def strip_caption(strip: Strip, lang: Lang) -> Text:
    top = max((max(row) for row in strip.values if row), default=1.0) or 1.0
    where = ""
    if len(strip.layers) > 10:
        where = t(lang, "weights.strip_last_digit", layers=span(lang, strip.layers[0], strip.layers[-1]))
    return Text(where + t(lang, "weights.strip_scale", top=f"{top:.2f}"), style="dim")


def notes(r: WeightsResult, lang: Lang) -> list[str]:
    """What the reader must know to read the chart, from the result's facts."""
    out = []
    if r.chat and r.query.index == len(r.tokens) - 1:
        out.append(t(lang, "weights.note_chat"))
    if r.view.no_sink:
        out.append(t(lang, "common.note_no_sink", positions=span(lang, 1, r.query.index)))
    if r.view.by == "word":
        out.append(t(lang, "weights.note_by_word"))
    if len(r.layers) * len(r.heads) > 1:
        out.append(t(lang, f"weights.note_{r.view.agg}", layers=len(r.layers), heads=len(r.heads)))
    return out


@view.register
def render(r: WeightsResult, ctx: Ctx) -> RenderableType:
    lang = ctx.lang
    parts: list[RenderableType] = [header(r, lang), Text("")]
    query_key = next((i for i, b in enumerate(r.chart.bars) if b.is_query), None)
    if len(r.layers) > 1:
        labels = [bar_label(b, lang) for b in r.chart.bars]
        parts += [
            Text(t(lang, "weights.strip_title"), style="dim"),
            strip_table(r.strip, labels, query_key),
            strip_caption(r.strip, lang),
            Text(""),
        ]
    if r.view.per_head and r.per_head:
        for chart in r.per_head:
            title = t(lang, "common.layer_head", layer=chart.layer, head=chart.head)
            title += f" ({t(lang, 'common.kv_head', kv_head=chart.kv_head)})"
            parts += [chart_table(chart, lang, title=title), Text("")]
    else:
        title = t(lang, "weights.chart_title")
        if len(r.layers) * len(r.heads) > 1:
            title += f" ({t(lang, f'common.{r.view.agg}')})"
        parts.append(chart_table(r.chart, lang, title=title))
    for note in notes(r, lang):
        parts.append(Text(note, style="dim"))
    return Group(*parts)
