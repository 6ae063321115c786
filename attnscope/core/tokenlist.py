"""The ``tokens`` listing: every token the model reads, with its offsets, word and segment.

It needs only the tokenizer, so no weights are loaded.
"""

from __future__ import annotations

from attnscope.core.prompt.segments import prompt_segments, segmented
from attnscope.core.prompt.spec import ChatSpec
from attnscope.core.prompt.tokens import encode_prompt
from attnscope.model import Progress, load_tokenizer, resolve
from attnscope.results.tokens import TokensResult


def tokens(
    model: str | None,
    prompt: str | None,
    *,
    revision: str | None = None,
    chat: ChatSpec | None = None,
    progress: Progress | None = None,
) -> TokensResult:
    """The tokens of ``prompt`` (or of a conversation, ``chat.messages``) under ``model``'s tokenizer:
    index, id, readable text, offsets, word and segment; with ``chat``, what the template added.
    ``model``: a hub id, a local folder or a .gguf file (None: the default model)."""
    tokenizer = load_tokenizer(model, revision, progress or (lambda _: None))
    enc = encode_prompt(tokenizer, prompt, chat)
    segments = prompt_segments(enc.segments, len(enc.tokens))
    return TokensResult(
        model=resolve(model)[0],
        text=enc.text,
        chat=enc.chat,
        tokens=segmented(enc.tokens, segments),
        words=enc.words,
        segments=segments,
        template=enc.template,
    )
