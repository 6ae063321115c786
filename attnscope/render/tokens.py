"""Human view of a TokensResult: one row per token."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from attnscope.render import Ctx, view
from attnscope.render.i18n import t
from attnscope.results.tokens import TokensResult


@view.register
def render(r: TokensResult, ctx: Ctx) -> RenderableType:
    lang = ctx.lang
    table = Table(box=None, pad_edge=False, header_style="bold")
    for name, justify in (
        ("index", "right"),
        ("id", "right"),
        ("token", "left"),
        ("offsets", "left"),
        ("word", "left"),
    ):
        table.add_column(t(lang, f"tokens.col.{name}"), justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for tok in r.tokens:
        word = r.words[tok.word].text if 0 <= tok.word < len(r.words) else "?"
        table.add_row(
            str(tok.index),
            str(tok.id),
            Text(tok.label, style="magenta" if tok.special else ""),
            f"{tok.start}:{tok.end}",
            f"{tok.word} {word}",
        )
    summary = t(lang, "tokens.summary", tokens=len(r.tokens), words=len(r.words))
    head = Text(summary + (t(lang, "tokens.chat") if r.chat else ""), style="dim")
    return Group(head, table)
