"""``attnscope roles``: score every layer and head as previous-token, duplicate-token, induction and sink head."""

from __future__ import annotations

from typing import Annotated

import typer

from attnscope.cli.command import command
from attnscope.cli.inputs import read_prompt
from attnscope.cli.options import ArrayOutput, Model, SeedOpt, TopOpt


@command
def roles_cmd(
    prompt: Annotated[
        str | None,
        typer.Argument(help="A prompt to score on (or - for stdin). Omit it for random tokens repeated twice."),
    ] = None,
    length: Annotated[
        int | None, typer.Option("--length", help="Random tokens in each of the two copies (default 50).")
    ] = None,
    seed: SeedOpt = None,
    top: TopOpt = 5,
    *,
    model: Model,
    out: ArrayOutput,
) -> None:
    """Score all layers x heads for previous-token, duplicate-token, induction and attention-sink behaviour."""
    from attnscope.core.prompt.params import ROLES_PARAMS, validate
    from attnscope.errors import AttnscopeError

    if prompt is not None and (length is not None or seed is not None):
        raise AttnscopeError("length_seed_prompt")
    validate(ROLES_PARAMS, top=top, length=length)
    text = read_prompt(prompt) if prompt is not None else None
    loaded = model.load()  # checks the model path before torch is imported
    from attnscope.core.roles import DEFAULT_LENGTH, roles

    result = roles(loaded, text, length=DEFAULT_LENGTH if length is None else length, seed=seed or 0, top=top)
    out.emit(result)
