"""``attnscope toy``: a word's length."""

from __future__ import annotations

from typing import Annotated

import typer

from attnscope.cli.command import command
from attnscope.cli.options import Output


@command
def toy_cmd(word: Annotated[str, typer.Argument(help="A word.")], *, out: Output) -> None:
    """Count a word's characters."""
    from attnscope.core.toy import toy

    out.emit(toy(word))
