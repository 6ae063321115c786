"""``attnscope trace``: one position's vector from the embedding through every layer (logit lens)."""

from __future__ import annotations

from typing import Annotated

import typer

from attnscope.cli.command import command
from attnscope.cli.exits import fail_if_not_ok
from attnscope.cli.inputs import read_messages, read_prompt
from attnscope.cli.options import Chat, MessagesOpt, Model, Output, PosOpt, TopOpt


@command
def trace_cmd(
    prompt: Annotated[
        str | None, typer.Argument(help="The prompt text, or - to read it from stdin. Optional with --messages.")
    ] = None,
    pos: PosOpt = None,
    dims: Annotated[int, typer.Option("--dims", help="How many leading dims of each vector to show.")] = 4,
    top: TopOpt = 3,
    compare_pos: Annotated[
        int | None,
        typer.Option(
            "--compare-pos", help="Second position to compare with. Default: another one with the same token id."
        ),
    ] = None,
    *,
    messages: MessagesOpt = None,
    model: Model,
    chat: Chat,
    out: Output,
) -> None:
    """The note's layer stack for one position: embedding, then after each layer, with a logit lens."""
    from attnscope.errors import AttnscopeError

    if prompt is None and messages is None:
        raise AttnscopeError("give_prompt")
    from attnscope.cli.parse import chat_spec, parse_pos

    at = parse_pos(pos)
    chosen = read_messages(messages)
    from attnscope.core.prompt.params import TRACE_PARAMS, validate

    validate(TRACE_PARAMS, dims=dims, top=top)
    text = read_prompt(prompt) if prompt is not None else None
    spec = chat_spec(chat.chat, chat.system, chosen)
    out.ctx()  # a bad --lang fails before the model loads
    loaded = model.load()
    from attnscope.core.trace import trace

    result = trace(
        loaded,
        text,
        pos=-1 if at is None else at,
        dims=dims,
        top=top,
        compare_pos=compare_pos,
        chat=spec,
    )
    out.emit(result)
    fail_if_not_ok(out.terminal, result.check, "the last row's logit lens does not match the model's next-token logits")
