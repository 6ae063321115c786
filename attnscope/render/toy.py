"""The toy view."""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text

from attnscope.render import Ctx
from attnscope.render.i18n import t
from attnscope.results.toy import ToyResult


def view(r: ToyResult, ctx: Ctx) -> RenderableType:
    return Text(t(ctx.lang, "toy.line", word=r.word, length=r.length))
