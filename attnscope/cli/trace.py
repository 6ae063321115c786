"""``attnscope trace``: one position's vector from the embedding through every layer (logit lens)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from attnscope.cli import app
from attnscope.cli.common import (
    Chat,
    MessagesOpt,
    Model,
    Output,
    PosOpt,
    handle_errors,
    option_groups,
    read_messages,
    read_prompt,
    stderr_line,
)


def fail_if_not_ok(result: Any, what: str) -> None:
    """After the result is printed: a failed self-check exits 5 with one line on stderr."""
    if not result.ok:
        from attnscope.errors import ExitCode

        stderr_line(f"attnscope: check failed: {what}")
        raise typer.Exit(int(ExitCode.NUMERIC))


@app.command("trace")
@handle_errors
@option_groups
def trace_cmd(
    prompt: Annotated[
        str | None, typer.Argument(help="The prompt text, or - to read it from stdin. Optional with --messages.")
    ] = None,
    pos: PosOpt = None,
    dims: Annotated[int, typer.Option("--dims", help="How many leading dims of each vector to show.", min=1)] = 4,
    top: Annotated[int, typer.Option("--top", help="Logit-lens candidates per row.", min=1)] = 3,
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
        raise AttnscopeError("give a PROMPT (or - for stdin), or --messages FILE")
    from attnscope.cli.parse import chat_spec

    chosen = read_messages(messages)
    text = read_prompt(prompt) if prompt is not None else None
    spec = chat_spec(chat.chat, chat.system, chosen)
    out.ctx()  # a bad --lang fails before the model loads
    loaded = model.load()
    from attnscope.core.trace import trace

    result = trace(
        loaded,
        text,
        pos=-1 if pos is None else pos,
        dims=dims,
        top=top,
        compare_pos=compare_pos,
        chat=spec,
    )
    out.emit(result)
    fail_if_not_ok(result.check, "the last row's logit lens does not match the model's next-token logits")
