"""SVG figure of a WeightsResult: the note's chart, and the keys × layers heat strip.

The chart is one row per key (a token, or a word with ``--by word``): label, weight,
a bar whose length is the weight, and the note's ``<- self`` mark; a rule and the sum
close it, as in the note. The strip draws one filled cell per key and layer on the
heat scale, with a legend. Labels are rebuilt from token indices, not read from the
result's strings. Nothing here computes a weight.
"""

from __future__ import annotations

from attnscope.render import Ctx
from attnscope.render.figures.common import MARGIN, ROW, chart_rows, header, key_label, model_line, notes
from attnscope.render.figures.svg import DIM, GRID, Svg, heat, text_width
from attnscope.render.i18n import t
from attnscope.render.weights import apportion, bar_mark, key_name, shown_keys, sink_words, strip_rows, window_notes
from attnscope.render.weights import notes as notes_of
from attnscope.results.weights import Chart, WeightsResult

CELL = 18.0


def _rows(r: WeightsResult, chart: Chart, ctx: Ctx) -> tuple[list[tuple[str, float | None, str, bool]], str]:
    """The chart's rows as the terminal view draws them (the top keys and one row for the rest of a
    long prompt), each number rounded so that the shown numbers add up to the shown sum."""
    bars = chart.bars
    keep = shown_keys(r, bars)
    rest = [i for i in range(len(bars)) if i not in set(keep)]
    values = [bars[i].weight for i in keep] + ([sum(bars[i].weight for i in rest)] if rest else [])
    printed, total = apportion(values)
    out: list[tuple[str, float | None, str, bool]] = []
    for n, i in enumerate(keep):
        b = bars[i]
        label = (
            key_name(r, b.label, b.segment, ctx.lang)
            if b.segment is not None
            else key_label(r.tokens, r.words, b.tokens, r.view.by, ctx)
        )
        if b.segment is not None and b.partial:
            label = f"{label} {t(ctx.lang, 'figures.to_query')}"
        mark = bar_mark(r, b, ctx.lang, figure=True)
        out.append((label, None if b.excluded else printed[n] / 100, mark, b.is_query))
    if rest:
        out.append((t(ctx.lang, f"weights.others_{r.view.by}", n=len(rest)), printed[-1] / 100, "", False))
    return out, f"{total / 100:.2f}"


def _selection(r: WeightsResult, ctx: Ctx) -> str:
    if len(r.layers) == 1 and len(r.heads) == 1:
        return t(ctx.lang, "figures.selection.one", layer=r.layers[0], head=r.heads[0], kv=r.kv_heads[0])
    key = "figures.selection.max" if r.view.agg == "max" else "figures.selection.mean"
    return t(ctx.lang, key, layers=len(r.layers), heads=len(r.heads))


def strip(svg: Svg, r: WeightsResult, ctx: Ctx, y: float) -> float:
    """The keys × layers heat strip with its layer numbers and legend; returns the y below."""
    s = r.strip
    y += ROW * 1.4
    svg.text(MARGIN, y, t(ctx.lang, "figures.strip.title"), bold=True)
    labels, values, query_row = strip_rows(r, ctx.lang)
    left = MARGIN + max((text_width(x, 11.5) for x in labels), default=0) + 12
    top = max((max(row) for row in values if row), default=0.0) or 1.0
    y += ROW
    svg.text(left - 6, y, t(ctx.lang, "figures.layer"), anchor="end", fill=DIM, size=11)
    for i, layer in enumerate(s.layers):
        svg.text(left + i * CELL + CELL / 2, y, str(layer), anchor="middle", size=10, fill=DIM)
    y += 6
    for k, (label, row) in enumerate(zip(labels, values, strict=True)):
        svg.text(MARGIN, y + CELL - 5, label, bold=k == query_row, size=11.5)
        for i, v in enumerate(row):
            svg.rect(
                left + i * CELL,
                y,
                CELL,
                CELL,
                heat(v / top),
                title=f"{label} · {t(ctx.lang, 'figures.layer')} {s.layers[i]}: {v:.3f}",
            )
        y += CELL
    svg.line(left, y, left + CELL * len(s.layers), y, stroke=GRID)
    y += 10
    return svg.heat_legend(left, y, top, t(ctx.lang, "figures.scale", top=f"{top:.2f}"))


def figure(r: WeightsResult, ctx: Ctx) -> str:
    q = r.query
    svg = Svg(title=f"attnscope weights: {q.text}")
    lines = [
        t(ctx.lang, "figures.query", query=q.text, pos=q.index),
        _selection(r, ctx),
        model_line(ctx, r.model),
    ]
    norm = r.measure == "norm"
    title = t(ctx.lang, "weights.chart_title_norm") if norm else t(ctx.lang, "figures.weights.title", query=q.text)
    y = header(svg, ctx, title, lines)
    if r.view.per_head and r.per_head:
        for chart in r.per_head:
            sub = t(ctx.lang, "figures.selection.one", layer=chart.layer, head=chart.head, kv=chart.kv_head)
            rows, total = _rows(r, chart, ctx)
            y = chart_rows(svg, ctx, y, rows, total, subtitle=sub) + ROW * 0.5
    else:
        rows, total = _rows(r, r.chart, ctx)
        y = chart_rows(svg, ctx, y, rows, total)
    extra = []
    sink = sink_words(r, ctx.lang)
    if sink is not None:
        extra.append(sink)
    extra += window_notes(r, ctx.lang)
    hint = t(ctx.lang, "weights.note_by_token_hint")  # a command-line hint: not for a figure in a document
    extra += [line for line in notes_of(r, ctx.lang) if line != hint]
    y = notes(svg, y, extra)
    if len(r.layers) > 1 and r.strip.values:
        strip(svg, r, ctx, y)
    return svg.to_string()
