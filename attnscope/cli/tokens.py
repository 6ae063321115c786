"""``attnscope tokens``: index, id, readable text, offsets and word of every token."""

from __future__ import annotations

from attnscope.cli import app
from attnscope.cli.common import Chat, Output, PromptArg, Source, handle_errors, option_groups, progress, read_prompt


@app.command("tokens")
@handle_errors
@option_groups
def tokens_cmd(prompt: PromptArg, source: Source, chat: Chat, out: Output) -> None:
    """List the tokens the model reads, readable (Korean stays Korean), with offsets and words."""
    from attnscope.core.tokens import encode
    from attnscope.loading import load_tokenizer, resolve
    from attnscope.results.tokens import TokensResult

    text = read_prompt(prompt)
    tokenizer = load_tokenizer(source.model, source.revision, progress)
    enc = encode(tokenizer, text, **chat.kwargs())
    result = TokensResult(
        model=resolve(source.model)[0], text=enc.text, chat=enc.chat, tokens=enc.tokens, words=enc.words
    )
    out.emit(result)
