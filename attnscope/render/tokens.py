"""Human view of a TokensResult: one row per token; with a chat template, the template's text
coloured by segment, the segments, and warnings about what the template did."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from attnscope.render import Ctx
from attnscope.render import segments as seg
from attnscope.render.fit import FitColumns, Fitted
from attnscope.render.i18n import Lang, t
from attnscope.results.tokens import TokensResult


def rendered(r: TokensResult) -> Text:
    """The template's text, each character in its token's segment colour (a split character once)."""
    text = Text()
    done = 0
    for tok in r.tokens:
        start = max(tok.start, done)
        if tok.end > start:
            segment = r.segments[tok.segment]
            style = "magenta" if tok.special else seg.style(segment)
            text.append(r.text[start : tok.end], style=style)
            done = tok.end
    return text


def legend(r: TokensResult, lang: Lang) -> Text:
    text = Text()
    items = []
    for s in r.segments:
        item = Text(seg.label(s, lang), style=seg.style(s))
        item.append(t(lang, "segments.count_item", n=len(s.tokens)), style="dim")
        items.append(item)
    text.append(t(lang, "segments.counts", n=len(r.segments)) + " ", style="dim")
    for i, item in enumerate(items):
        if i:
            text.append(t(lang, "segments.count_sep"), style="dim")
        text.append_text(item)
    return text


def view(r: TokensResult, ctx: Ctx) -> RenderableType:
    lang = ctx.lang
    table = Table(box=None, pad_edge=False, header_style="bold")
    columns = [("index", "right"), ("id", "right"), ("token", "left"), ("offsets", "left"), ("word", "left")]
    for name, justify in columns:
        table.add_column(t(lang, f"tokens.col.{name}"), justify=justify, no_wrap=True)  # type: ignore[arg-type]
    if r.chat:
        table.add_column(t(lang, "segments.col_segment"), no_wrap=True)
    for tok in r.tokens:
        word = r.words[tok.word].text if 0 <= tok.word < len(r.words) else "?"
        cells: list[str | Text] = [
            str(tok.index),
            str(tok.id),
            Text(tok.label, style="magenta" if tok.special else ""),
            f"{tok.start}:{tok.end}",
            Text(f"{tok.word} {word}"),
        ]
        if r.chat and 0 <= tok.segment < len(r.segments):
            segment = r.segments[tok.segment]
            cells.append(Text(seg.label(segment, lang), style=seg.style(segment)))
        table.add_row(*cells)
    summary = t(lang, "tokens.summary", tokens=len(r.tokens), words=len(r.words))
    head = Text(summary + (t(lang, "tokens.chat") if r.chat else ""), style="dim")
    if not r.chat:
        return Fitted(Group(head, FitColumns(table)))
    parts: list[RenderableType] = [head, *seg.warnings(r.template, lang), Text("")]
    parts += [
        Text(t(lang, "segments.rendered"), style="dim"),
        rendered(r),
        legend(r, lang),
        Text(""),
        FitColumns(table),
    ]
    return Fitted(Group(*parts))
