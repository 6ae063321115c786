"""``attnscope rope``: the model's RoPE speeds, and proof on real q/k that scores depend on n - m only."""

from __future__ import annotations

from typing import Annotated

import typer

from attnscope.cli import app
from attnscope.cli.common import (
    HeadOpt,
    LayerOpt,
    Model,
    Output,
    PosOpt,
    handle_errors,
    option_groups,
    read_prompt,
)
from attnscope.cli.trace import fail_if_not_ok


def _deltas(spec: str) -> list[int]:
    from attnscope.errors import AttnscopeError

    try:
        return [int(x) for x in spec.split(",") if x.strip()]
    except ValueError:
        raise AttnscopeError(f"--deltas {spec!r}: give comma-separated integers, e.g. 1,10,100,1000") from None


@app.command("rope")
@handle_errors
@option_groups
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
    text = read_prompt(prompt) if prompt is not None else None
    shifts = None if deltas is None else _deltas(deltas)
    out.ctx()  # a bad --lang fails before the model loads
    loaded = model.load(layer=layer, head=head)
    from attnscope.core.rope import rope

    result = rope(loaded, pos=10 if pos is None else pos, layer=layer, head=head, prompt=text, deltas=shifts)
    out.emit(result)
    fail_if_not_ok(result, "scores changed with the shift, or k/v are not what RoPE predicts")
