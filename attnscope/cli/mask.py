"""``attnscope mask``: the note's causal and padding mask grids, and the masks a model really applies.

Without prompts it draws the note's illustration (``--size``, ``--pad``, ``--side``) and
imports neither torch nor transformers. With prompts it pads them into one batch, draws
each sequence's grid and checks it against the mask read from inside the model's
forward; a disagreement still prints the result, then exits with status 5.
"""

from __future__ import annotations

from typing import Annotated

import typer

from attnscope.cli.command import command
from attnscope.cli.inputs import read_prompt
from attnscope.cli.options import Chat, Model, Output
from attnscope.errors import AttnscopeError, ExitCode


@command
def mask_cmd(
    prompts: Annotated[
        list[str] | None,
        typer.Argument(help="Prompts to pad into one batch (- reads one from stdin). None: the note's illustration."),
    ] = None,
    size: Annotated[int | None, typer.Option("--size", help="Illustration: positions in the grid (default 4).")] = None,
    pad: Annotated[int | None, typer.Option("--pad", help="Illustration: how many are pads (default 1).")] = None,
    side: Annotated[
        str | None, typer.Option("--side", help="Illustration: pads on the left|right (default left).")
    ] = None,
    padding_side: Annotated[
        str | None, typer.Option("--padding-side", help="left|right; default: the tokenizer's own padding side.")
    ] = None,
    max_size: Annotated[
        int, typer.Option("--max-size", help="Draw at most this many positions; longer grids are condensed.")
    ] = 24,
    *,
    model: Model,
    chat: Chat,
    out: Output,
) -> None:
    """Causal and padding masks: the note's grids, or a padded batch checked against the model's own mask."""
    if not prompts:
        _illustration_only(model, padding_side, chat)
        from attnscope.core.maskgrid import SIDES, illustration
        from attnscope.core.prompt.spec import one_of

        result = illustration(
            size=4 if size is None else size,
            pad=1 if pad is None else pad,
            side="left" if side is None else one_of(side, SIDES, "side"),
            max_size=max_size,
        )
        out.emit(result)
        return
    given = [name for name, value in (("size", size), ("pad", pad), ("side", side)) if value is not None]
    if given:
        raise AttnscopeError("mask_illustration" if len(given) == 1 else "mask_illustration_many", args=tuple(given))
    from attnscope.cli.parse import chat_spec
    from attnscope.core.maskgrid import SIDES, check_max_size
    from attnscope.core.prompt.spec import one_of

    side_ = None if padding_side is None else one_of(padding_side, SIDES, "padding_side")
    if sum(p == "-" for p in prompts) > 1:
        raise AttnscopeError("one_stdin")
    spec = chat_spec(chat.chat, chat.system, None)

    check_max_size(max_size)
    texts = [read_prompt(p) for p in prompts]
    loaded = model.load()
    from attnscope.core.mask import mask

    result = mask(loaded, texts, padding_side=side_, chat=spec, max_size=max_size)
    out.emit(result)
    if not (result.agrees_with_model and result.agrees_with_eager):
        out.terminal.line("attnscope: the grid disagrees with the mask the model applied (see the checks above)")
        raise typer.Exit(int(ExitCode.NUMERIC))


def _illustration_only(model: Model, padding_side: str | None, chat: Chat) -> None:
    given = [
        name
        for name, on in (
            ("model", model.model is not None),
            ("revision", model.revision is not None),
            ("padding_side", padding_side is not None),
            ("chat", chat.chat),
            ("system", chat.system is not None),
        )
        if on
    ]
    if given:
        raise AttnscopeError("mask_needs_prompt" if len(given) == 1 else "mask_needs_prompt_many", args=tuple(given))
