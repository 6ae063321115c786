"""``attnscope info``: the config facts the note quotes, read without loading the weights."""

from __future__ import annotations

from attnscope.cli.command import command
from attnscope.cli.options import Output, Source


@command
def info_cmd(source: Source, out: Output) -> None:
    """Layers, heads, KV heads and their GQA grouping, sizes, rope_theta, parameters: no weights loaded."""
    from attnscope.core.info import info

    out.emit(info(source.model, source.revision))
