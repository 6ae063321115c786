"""Human view of a WeightsResult: the note's chart, the keys x layers strip, per-head charts.

The chart prints each value rounded so that the printed values add up to the printed sum
(largest-remainder rounding). A long prompt shows its top keys (by the chart's value; the
query and position 0 always) and one row for all the others, unless ``--all-keys``; the
strip shows the same rows. Under the chart: the attention sink, named with its share when
position 0 takes the most, and "who looks hardest" at each word (from ``r.hardest``).
"""

from __future__ import annotations

import math

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from attnscope.render import Ctx, bar, heat_style, shade
from attnscope.render import segments as seg
from attnscope.render.common import SINK_NAMED_AT, model_line, no_sink_note, ranges, span
from attnscope.render.fit import FitColumns, Fitted
from attnscope.render.i18n import Lang, t
from attnscope.results.common import prepended_bos
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


def key_name(r: WeightsResult, label: str, segment: int | None, lang: Lang) -> str:
    """A key's name in the view: a segment's in the view's language (``user 2``, ``사용자 2``), else its label."""
    if segment is not None and 0 <= segment < len(r.segments):
        return seg.label(r.segments[segment], lang)
    return label


def is_bos(r: WeightsResult, b: Bar) -> bool:
    """The bar is the BOS the tokenizer prepended, and nothing else."""
    return b.tokens == [0] and b.segment is None and prepended_bos(r.tokens)


def bar_mark(r: WeightsResult, b: Bar, lang: Lang, figure: bool = False) -> str:
    """A bar's mark: the query's own, an excluded position 0, or the BOS the tokenizer prepended."""
    if b.is_query:
        return t(lang, "figures.self" if figure else "common.self")
    bos = is_bos(r, b)
    if b.excluded:
        return t(lang, "weights.excluded_bos" if bos else ("figures.sink_excluded" if figure else "weights.excluded"))
    marks = [t(lang, "weights.bos")] if bos else []
    hidden = outside_window(r, b.tokens)
    if hidden:
        marks.append(t(lang, "weights.outside_window", n=len(hidden), total=len(r.layers)))
    return t(lang, "weights.marks_sep").join(marks)


def outside_window(r: WeightsResult, tokens: list[int]) -> list[int]:
    """The selected layers whose sliding window hides every one of ``tokens`` from the query."""
    if not tokens or r.model.sliding_window is None:
        return []
    last = max(tokens)
    return [layer for layer in r.layers if last < r.model.window_first(layer, r.query.index)]


def window_notes(r: WeightsResult, lang: Lang) -> list[str]:
    """Which selected layers slid past keys of this prompt, how far, and what that does to the chart."""
    q = r.query.index
    cut = r.model.windowed(r.layers, q)
    if not cut:
        return []
    first = r.model.window_first(cut[0], q)
    out = [
        t(
            lang,
            "weights.window_cut",
            layers=ranges(lang, cut),
            window=r.model.sliding_window,
            keys=span(lang, first, q),
            first=first,
        )
    ]
    full = [layer for layer in r.layers if layer not in set(cut)]
    if full and len(r.layers) * len(r.heads) > 1:
        out.append(t(lang, f"weights.window_mixed_{r.view.agg}", full=ranges(lang, full), first=first))
    return out


def bar_label(b: Bar, lang: Lang, r: WeightsResult) -> str:
    label = key_name(r, b.label, b.segment, lang)
    return t(lang, "weights.partial", label=label) if b.partial else label


OUTSIDE = "·"  # a strip cell whose key lies outside the layer's sliding window (weight exactly 0)
MAX_KEYS = 10  # keys drawn for a long prompt (plus one row for the rest) unless --all-keys


def apportion(values: list[float], digits: int = 2) -> tuple[list[int], int]:
    """Largest-remainder rounding: (each value, their sum) in units of 10**-digits, so the rounded
    values add up to the rounded sum exactly."""
    scale = 10**digits
    total = round(sum(values) * scale)
    floors = [math.floor(v * scale) for v in values]
    short = total - sum(floors)
    order = sorted(range(len(values)), key=lambda i: (-(values[i] * scale - floors[i]), i))
    for i in order[: max(0, short)]:
        floors[i] += 1
    return floors, total


def _units(n: int, digits: int = 2) -> str:
    return f"{n / 10**digits:.{digits}f}"


def shown_keys(r: WeightsResult, bars: list[Bar]) -> list[int]:
    """Indices of the bars drawn: all, or the top MAX_KEYS by value plus the query's and position 0's, in order."""
    if r.view.all_keys or len(bars) <= MAX_KEYS + 1:
        return list(range(len(bars)))
    must = {i for i, b in enumerate(bars) if b.is_query or 0 in b.tokens}
    ranked = sorted(range(len(bars)), key=lambda i: (-bars[i].weight, i))
    keep = set(must)
    for i in ranked:
        if len(keep) >= MAX_KEYS:
            break
        keep.add(i)
    return sorted(keep)


def _others_label(r: WeightsResult, lang: Lang, n: int) -> str:
    return t(lang, f"weights.others_{r.view.by}", n=n)


def chart_table(chart: Chart, lang: Lang, r: WeightsResult, title: str | None = None, width: int = 30) -> Table:
    table = Table(box=None, show_header=False, pad_edge=False, padding=(0, 1), title=title, title_justify="left")
    table.add_column("key", no_wrap=True)
    table.add_column("weight", justify="right", no_wrap=True)
    table.add_column("bar", no_wrap=True)
    table.add_column("mark", no_wrap=True, style="dim")
    keep = shown_keys(r, chart.bars)
    rest = [i for i in range(len(chart.bars)) if i not in set(keep)]
    values = [chart.bars[i].weight for i in keep] + ([sum(chart.bars[i].weight for i in rest)] if rest else [])
    printed, total = apportion(values)
    for n, i in enumerate(keep):
        b = chart.bars[i]
        mark = bar_mark(r, b, lang)
        style = "bold" if b.is_query else ""
        table.add_row(
            Text(bar_label(b, lang, r), style=style),
            "-" if b.excluded else _units(printed[n]),
            Text(bar(b.weight, width), style="cyan"),
            mark,
        )
    if rest:
        table.add_row(
            Text(_others_label(r, lang, len(rest)), style="italic"),
            _units(printed[-1]),
            Text(bar(values[-1], width), style="cyan"),
            "",
        )
    table.add_row("", "-----", "", "")
    table.add_row(t(lang, "common.sum"), _units(total), "", "")
    return table


def learned_sink_line(r: WeightsResult, lang: Lang) -> Text | None:
    """A model with learned sink logits: the share of the rows they take, which no key gets."""
    if not r.learned_sink:
        return None
    shares = [share for layer in r.learned_sink for share in layer]
    mean = sum(shares) / len(shares)
    return Text(t(lang, "weights.learned_sink", mean=f"{mean:.2f}", top=f"{max(shares):.2f}"), style="yellow")


def sink_words(r: WeightsResult, lang: Lang) -> str | None:
    """Name the attention sink when position 0 takes the most and at least ``SINK_NAMED_AT`` of
    the weight, and say where to look instead (the terminal view and the figure say the same)."""
    if r.sink_share is None or r.sink_share < SINK_NAMED_AT:
        return None
    key = "weights.sink_norm" if r.measure == "norm" else "weights.sink"
    key += "_bos" if prepended_bos(r.tokens) else ""
    return t(lang, key, label=r.tokens[0].label, share=f"{r.sink_share:.2f}", threshold=f"{SINK_NAMED_AT:g}")


def sink_line(r: WeightsResult, lang: Lang) -> Text | None:
    words = sink_words(r, lang)
    return None if words is None else Text(words, style="yellow")


def hardest_block(r: WeightsResult, lang: Lang, limit: int) -> list[RenderableType]:
    if not r.hardest:
        return []
    table = Table(box=None, show_header=False, pad_edge=False, padding=(0, 1))
    table.add_column("key", no_wrap=True)
    table.add_column("arrow", no_wrap=True, style="dim")
    table.add_column("head", no_wrap=True)
    table.add_column("weight", justify="right", no_wrap=True)
    for h in r.hardest[:limit]:
        arrow = t(lang, "weights.hardest_arrow")
        table.add_row(key_name(r, h.label, h.segment, lang), arrow, f"L{h.layer} H{h.head}", f"{h.weight:.2f}")
    out: list[RenderableType] = [Text(t(lang, f"weights.hardest_title_{r.view.by}")), table]
    hint_key = "weights.hardest_hint_segment" if r.view.by == "segment" else "weights.hardest_hint"
    named: dict[str, object] = {}
    if r.view.by != "segment" and prepended_bos(r.tokens):  # a chat's segments hold no prepended BOS
        hint_key, named = hint_key + "_bos", {"label": r.tokens[0].label}
    hint = t(lang, hint_key, count=len(r.layers) * len(r.heads), layers=len(r.layers), heads=len(r.heads), **named)
    out.append(Text(hint, style="dim"))
    return out


def completeness_line(r: WeightsResult, lang: Lang) -> Text | None:
    if r.measure != "norm" or r.completeness_max_diff is None:
        return None
    return Text(
        t(lang, "weights.completeness", diff=f"{r.completeness_max_diff:.1e}", layers=len(r.layers)), style="dim"
    )


def strip_outside(r: WeightsResult) -> list[set[int]]:
    """For each strip row (the chart's drawn keys, then the others), the layers whose window hides it."""
    bars = r.chart.bars
    keep = shown_keys(r, bars)
    rows = [set(outside_window(r, bars[i].tokens)) for i in keep]
    rest = [tok for i in range(len(bars)) if i not in set(keep) for tok in bars[i].tokens]
    return rows + ([set(outside_window(r, rest))] if len(keep) < len(bars) else [])


def strip_rows(r: WeightsResult, lang: Lang) -> tuple[list[str], list[list[float]], int | None]:
    """The strip's rows: the chart's drawn keys, then one row summing the others per layer."""
    bars = r.chart.bars
    keep = shown_keys(r, bars)
    labels = [bar_label(bars[i], lang, r) for i in keep]
    values = [r.strip.values[i] for i in keep]
    query_key = next((n for n, i in enumerate(keep) if bars[i].is_query), None)
    rest = [i for i in range(len(bars)) if i not in set(keep)]
    if rest:
        labels.append(_others_label(r, lang, len(rest)))
        values.append([sum(r.strip.values[i][c] for i in rest) for c in range(len(r.strip.layers))])
    return labels, values, query_key


def strip_table(
    strip: Strip,
    labels: list[str],
    query_key: int | None = None,
    values: list[list[float]] | None = None,
    outside: list[set[int]] | None = None,
) -> Table:
    """The heat strip; ``outside[key]``: the layers whose window hides that row's key (drawn ·)."""
    rows = strip.values if values is None else values
    top = max((max(row) for row in rows if row), default=1.0) or 1.0
    table = Table(box=None, pad_edge=False, padding=(0, 0), show_header=True, header_style="dim")
    table.add_column("", no_wrap=True)
    table.add_column(" ", no_wrap=True)
    for layer in strip.layers:
        table.add_column(str(layer % 10) if len(strip.layers) > 10 else str(layer), no_wrap=True, justify="center")
    wide = 2 if len(strip.layers) <= 10 else 1
    for ki, (key, row) in enumerate(zip(labels, rows, strict=True)):
        hidden = outside[ki] if outside is not None else set()
        cells = [
            Text(OUTSIDE * wide, style="dim")
            if layer in hidden
            else Text(shade(v, top) * wide, style=heat_style(v, top))
            for layer, v in zip(strip.layers, row, strict=True)
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
        out.append(no_sink_note(r.tokens, r.query.index, lang))
    if r.view.by == "word":
        out.append(t(lang, "weights.note_by_word_norm" if r.measure == "norm" else "weights.note_by_word"))
        out.append(t(lang, "weights.note_by_token_hint"))
    if r.view.by == "segment":
        out.append(t(lang, "segments.note_by_segment"))
    if r.measure == "norm":
        out.append(t(lang, "weights.note_norm"))
    if len(r.layers) * len(r.heads) > 1:
        out.append(t(lang, f"weights.note_{r.view.agg}", layers=len(r.layers), heads=len(r.heads)))
    return out


def view(r: WeightsResult, ctx: Ctx) -> RenderableType:
    lang = ctx.lang
    parts: list[RenderableType] = [header(r, lang), *seg.warnings(r.template, lang), Text("")]
    if len(r.layers) > 1:
        labels, values, query_key = strip_rows(r, lang)
        parts += [
            Text(t(lang, "weights.strip_title_norm" if r.measure == "norm" else "weights.strip_title"), style="dim"),
            strip_table(r.strip, labels, query_key, values, strip_outside(r)),
            strip_caption(r.strip, lang),
            Text(""),
        ]
    chart_word = "weights.chart_title_norm" if r.measure == "norm" else "weights.chart_title"
    if r.view.per_head and r.per_head:
        for chart in r.per_head:
            title = t(lang, "common.layer_head", layer=chart.layer, head=chart.head)
            title += f" ({t(lang, 'common.kv_head', kv_head=chart.kv_head)})"
            parts += [Text(title), FitColumns(chart_table(chart, lang, r), [[2]]), Text("")]  # narrow: no bar
    else:
        title = t(lang, chart_word, query=r.query.text)
        if len(r.layers) * len(r.heads) > 1:
            title += f" ({t(lang, f'common.{r.view.agg}')})"
        parts += [Text(title), FitColumns(chart_table(r.chart, lang, r), [[2]])]  # narrow: no bar
    for line in (sink_line(r, lang), learned_sink_line(r, lang), completeness_line(r, lang)):
        if line is not None:
            parts.append(line)
    parts += [Text(note, style="yellow") for note in window_notes(r, lang)]
    long_prompt = len(shown_keys(r, r.chart.bars)) < len(r.chart.bars)
    if not r.view.per_head:
        block = hardest_block(r, lang, 5 if long_prompt else 8)
        if block:
            parts += [Text(""), *block]
    for note in notes(r, lang):
        parts.append(Text(note, style="dim"))
    return Fitted(Group(*parts))  # a path in the header is shortened in the middle, never broken
