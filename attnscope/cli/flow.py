"""``attnscope flow``: the information-flow routes to a prediction, each part's importance, and a knockout check."""

from __future__ import annotations

from typing import Annotated, Any, cast

import typer

from attnscope.cli.command import command
from attnscope.cli.inputs import read_prompt
from attnscope.cli.options import BatchOpt, Chat, Model, Output, PosOpt, PromptArg


@command
def flow_cmd(
    prompt: PromptArg,
    pos: PosOpt = None,
    threshold: Annotated[
        float, typer.Option("--threshold", help="Keep the parts whose importance is above this (between 0 and 1).")
    ] = 0.04,
    by: Annotated[
        str, typer.Option("--by", help="token|word: one part per source token, or a word's tokens as one part.")
    ] = "token",
    heads: Annotated[bool, typer.Option("--heads", help="One attention part per source and head.")] = False,
    verify: Annotated[
        int,
        typer.Option(
            "--verify",
            help="Knock out the K most important attention edges, one at a time, and show the log-prob change.",
        ),
    ] = 0,
    batch: BatchOpt = 16,
    *,
    model: Model,
    chat: Chat,
    out: Output,
) -> None:
    """Trace the routes along which information reaches the prediction (Ferrando & Voita 2024)."""
    from attnscope.cli.parse import chat_spec, parse_pos
    from attnscope.core.prompt.params import FLOW_PARAMS, validate
    from attnscope.results.flow import FlowBy

    text = read_prompt(prompt)
    given = parse_pos(pos)
    at = -1 if given is None else given  # the last token
    validate(FLOW_PARAMS, threshold=threshold, by=by, verify_top=verify, batch_size=batch)
    grouping = cast(FlowBy, by)
    spec = chat_spec(chat.chat, chat.system, None)

    def pos_fits(tokenizer: Any) -> None:
        from attnscope.core.prompt.tokens import encode_prompt, query_at

        query_at(encode_prompt(tokenizer, text, spec), at, "pos")

    loaded = model.load(prompts=[text], chat=chat, tokenizer_checks=[pos_fits])
    from attnscope.core.causal.flow import flow

    result = flow(
        loaded,
        text,
        pos=at,
        threshold=threshold,
        by=grouping,
        heads=heads,
        verify_top=verify,
        batch_size=batch,
        chat=spec,
    )
    out.emit(result)
