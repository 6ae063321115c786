"""``attnscope reuse``: appended tokens leave earlier K/V unchanged, so a KV cache gives the same logits."""

from __future__ import annotations

from typing import Annotated

import typer

from attnscope.cli.command import command
from attnscope.cli.exits import fail_if_not_ok
from attnscope.cli.inputs import read_prompt
from attnscope.cli.options import Model, Output


@command
def reuse_cmd(
    prefix: Annotated[str, typer.Argument(help="The earlier text, or - to read it from stdin.")],
    suffix: Annotated[str, typer.Argument(help="The text appended to it (tokenized on its own).")],
    repeat: Annotated[
        int, typer.Option("--repeat", help="Repeat prefix+suffix N times for the cost part (longer T).")
    ] = 1,
    *,
    model: Model,
    out: Output,
) -> None:
    """Prefix K/V alone vs inside prefix+suffix, the cache check, and T(T+1)/2 comparisons for T and 2T."""
    from attnscope.core.prompt.params import REUSE_PARAMS, validate

    validate(REUSE_PARAMS, repeat=repeat)
    text = read_prompt(prefix)
    out.ctx()  # a bad --lang fails before the model loads
    loaded = model.load()
    from attnscope.core.reuse import reuse

    result = reuse(loaded, text, suffix, repeat=repeat)
    out.emit(result)
    fail_if_not_ok(out.terminal, result, "prefix K/V changed, or the cached run's logits differ from one full pass")
