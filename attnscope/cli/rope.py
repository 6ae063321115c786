"""``attnscope rope``: the model's RoPE speeds, and proof on real q/k that scores depend on n - m only."""

from __future__ import annotations

from typing import Annotated

import typer

from attnscope.cli.command import command
from attnscope.cli.exits import fail_if_not_ok
from attnscope.cli.inputs import read_prompt
from attnscope.cli.options import HeadOpt, LayerOpt, Model, Output, PosOpt


@command
def rope_cmd(
    pos: PosOpt = None,
    layer: LayerOpt = "0",
    head: HeadOpt = "0",
    prompt: Annotated[
        str | None,
        typer.Option("--prompt", help="Prompt whose real q/k are used (- for stdin). Default: the note's sentence."),
    ] = None,
    deltas: Annotated[
        str | None,
        typer.Option(
            "--deltas", help="Shifts Δ for score(m+Δ, n+Δ). Default 1,10,100,1000, cut to the model's positions."
        ),
    ] = None,
    *,
    model: Model,
    out: Output,
) -> None:
    """rope_theta, each pair's speed and wavelength, and score(m, n) = score(m+Δ, n+Δ) on the model's q and k."""
    from attnscope.cli.parse import parse_ints, parse_one, parse_pos
    from attnscope.core.prompt.spec import Selection

    text = read_prompt(prompt) if prompt is not None else None
    layer_i, head_i = parse_one(layer, "layer"), parse_one(head, "head")
    at = parse_pos(pos)
    shifts = None if deltas is None else parse_ints(deltas, "--deltas", "1,10,100,1000")
    out.ctx()  # a bad --lang fails before the model loads
    loaded = model.load(selection=Selection(layers=[layer_i], heads=[head_i]))
    from attnscope.core.rope import rope

    result = rope(loaded, pos=10 if at is None else at, layer=layer_i, head=head_i, prompt=text, deltas=shifts)
    out.emit(result)
    fail_if_not_ok(out.terminal, result, "scores changed with the shift, or k/v are not what RoPE predicts")
