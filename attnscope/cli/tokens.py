"""``attnscope tokens``: index, id, readable text, offsets, word and segment of every token."""

from __future__ import annotations

from typing import Annotated

import typer

from attnscope.cli import app
from attnscope.cli.common import (
    Chat,
    MessagesOpt,
    Output,
    Source,
    handle_errors,
    option_groups,
    progress,
    read_messages,
    read_prompt,
)


@app.command("tokens")
@handle_errors
@option_groups
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
    from attnscope.core.segments import prompt_segments, segmented
    from attnscope.core.tokens import encode
    from attnscope.errors import AttnscopeError
    from attnscope.model import load_tokenizer, resolve
    from attnscope.results.tokens import TokensResult

    if prompt is None and messages is None:
        raise AttnscopeError("give a PROMPT (or - for stdin), or --messages FILE")
    chosen = read_messages(messages)
    text = read_prompt(prompt) if prompt is not None else None
    tokenizer = load_tokenizer(source.model, source.revision, progress)
    enc = encode(tokenizer, text, **chat.kwargs(), messages=chosen)
    segments = prompt_segments(enc.segments, len(enc.tokens))
    result = TokensResult(
        model=resolve(source.model)[0],
        text=enc.text,
        chat=enc.chat,
        tokens=segmented(enc.tokens, segments),
        words=enc.words,
        segments=segments,
        template=enc.template,
    )
    out.emit(result)
