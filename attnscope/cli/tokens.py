"""``attnscope tokens``: index, id, readable text, offsets, word and segment of every token."""

from __future__ import annotations

from typing import Annotated

import typer

from attnscope.cli.command import command
from attnscope.cli.inputs import read_messages, read_prompt
from attnscope.cli.options import Chat, MessagesOpt, Output, Source


@command
def tokens_cmd(
    prompt: Annotated[
        str | None, typer.Argument(help="The prompt text, or - to read it from stdin. Optional with --messages.")
    ] = None,
    *,
    messages: MessagesOpt = None,
    source: Source,
    chat: Chat,
    out: Output,
) -> None:
    """List the tokens the model reads, readable (Korean stays Korean), with offsets and words;
    with --chat, the template's text with every token's segment, and what the template added."""
    from attnscope.cli.parse import chat_spec
    from attnscope.errors import AttnscopeError

    if prompt is None and messages is None:
        raise AttnscopeError("give_prompt")
    chosen = read_messages(messages)
    text = read_prompt(prompt) if prompt is not None else None
    spec = chat_spec(chat.chat, chat.system, chosen)
    from attnscope.core.tokenlist import tokens

    result = tokens(source.model, text, revision=source.revision, chat=spec, progress=source.terminal.progress)
    out.emit(result)
