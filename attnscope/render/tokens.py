"""Human view of a TokensResult: one row per token."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from attnscope.render import Ctx, view
from attnscope.results.tokens import TokensResult


@view.register
def render(r: TokensResult, ctx: Ctx) -> RenderableType:
    table = Table(box=None, pad_edge=False, header_style="bold")
    for name, justify in (
        ("index", "right"),
        ("id", "right"),
        ("token", "left"),
        ("offsets", "left"),
        ("word", "left"),
    ):
        table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for t in r.tokens:
        word = r.words[t.word].text if 0 <= t.word < len(r.words) else "?"
        table.add_row(
            str(t.index),
            str(t.id),
            Text(t.label, style="magenta" if t.special else ""),
            f"{t.start}:{t.end}",
            f"{t.word} {word}",
        )
    head = Text(
        f"{len(r.tokens)} tokens, {len(r.words)} words" + ("  (chat template applied)" if r.chat else ""), style="dim"
    )
    return Group(head, table)
