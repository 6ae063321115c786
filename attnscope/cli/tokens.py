"""``attnscope tokens``: index, id, readable text, offsets and word of every token."""

from __future__ import annotations

from attnscope.cli import app
from attnscope.cli.common import (
    ChatOpt,
    HtmlOpt,
    JsonOpt,
    ModelOpt,
    PromptArg,
    RevisionOpt,
    SvgOpt,
    SystemOpt,
    WidthOpt,
    emit,
    handle_errors,
    progress,
    read_prompt,
)


@app.command("tokens")
@handle_errors
def tokens_cmd(
    prompt: PromptArg,
    model: ModelOpt = None,
    revision: RevisionOpt = None,
    chat: ChatOpt = False,
    system: SystemOpt = None,
    as_json: JsonOpt = False,
    svg: SvgOpt = None,
    html: HtmlOpt = None,
    width: WidthOpt = None,
) -> None:
    """List the tokens the model reads, readable (Korean stays Korean), with offsets and words."""
    from attnscope.core.tokens import encode
    from attnscope.loading import load_tokenizer, resolve
    from attnscope.results.tokens import TokensResult

    text = read_prompt(prompt)
    tokenizer = load_tokenizer(model, revision, progress)
    enc = encode(tokenizer, text, chat=chat, system=system)
    result = TokensResult(model=resolve(model)[0], text=enc.text, chat=enc.chat, tokens=enc.tokens, words=enc.words)
    emit(result, as_json=as_json, svg=svg, html=html, width=width)
