"""``attnscope tui``: a terminal browser of one prompt (Textual, the optional extra ``tui``).

The model loads once and every query's rows come from one forward (``attnscope.tui.session``);
then the app (``attnscope.tui.app``) runs full-screen until ``q``. With ``--resume FILE`` it
reopens a session saved with ``s``, without the model. Only this command imports Textual, and
only once its arguments are checked: without it the command says how to install it.
"""

from __future__ import annotations

import importlib.util
from typing import Annotated

import typer

from attnscope.cli.command import command
from attnscope.cli.inputs import read_messages, read_prompt
from attnscope.cli.options import Chat, KeyOccurrenceOpt, KeyOpt, Language, MessagesOpt, Model, Query


@command
def tui_cmd(
    prompt: Annotated[
        str | None,
        typer.Argument(
            help="The prompt text, or - to read it from stdin. Omit it with --resume; optional with --messages."
        ),
    ] = None,
    *,
    messages: MessagesOpt = None,
    query: Query,
    key: KeyOpt = None,
    key_occurrence: KeyOccurrenceOpt = None,
    max_new_tokens: Annotated[
        int, typer.Option("--max-new-tokens", "-n", help="Most new tokens g generates (through the KV cache).")
    ] = 20,
    resume: Annotated[
        str | None,
        typer.Option("--resume", help="Reopen a session saved with s (a .npz file), without the model."),
    ] = None,
    model: Model,
    chat: Chat,
    language: Language,
) -> None:
    """Browse one prompt in the terminal: the token strip, every layer's heads, a head's chart, its
    matrix, norms, ablation and generation, with the keyboard (? shows the keys)."""
    from attnscope.cli.parse import chat_spec, query_spec
    from attnscope.core.prompt.precheck import check_settings
    from attnscope.errors import AttnscopeError

    lang = language.check()
    if importlib.util.find_spec("textual") is None:  # the optional extra; only this command needs it
        raise AttnscopeError("tui_no_textual")
    check_settings(max_new_tokens, None, None)
    asked = query_spec(query.query, query.occurrence, query.pos)
    if key_occurrence is not None and key is None:
        raise AttnscopeError("needs", arg="key_occurrence", other="key")
    if resume is not None:
        if prompt is not None or messages is not None:
            raise AttnscopeError("tui_resume_alone")
        from attnscope.tui.session import load

        session = load(resume)
        loaded = None
    else:
        chosen = read_messages(messages)
        text = read_prompt(prompt) if prompt is not None else None
        if text is None and chosen is None:
            raise AttnscopeError("tui_no_prompt")
        loaded = model.load(
            prompts=[] if text is None else [text],
            find=[("query", query.query, query.occurrence), ("key", key, key_occurrence)],
            chat=chat,
            messages=chosen,
        )
        from attnscope.tui.session import open_prompt

        session = open_prompt(loaded, text, chat_spec(chat.chat, chat.system, chosen))
    from attnscope.core.prompt.tokens import find_span, pick_query
    from attnscope.results.common import ResultWarning

    warnings: list[ResultWarning] = []
    q = pick_query(session.enc, asked, warnings).index
    span = None if key is None else find_span(session.enc, key, key_occurrence, warnings, "key")
    if span is not None and span[-1] > q:
        raise AttnscopeError("key_after_query_pos", arg="key", key=repr(key), pos=q)
    from attnscope.tui.app import Browser

    Browser(session, lang, loaded, query=q, key=span, max_new_tokens=max_new_tokens).run()
