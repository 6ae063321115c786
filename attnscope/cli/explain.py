"""``attnscope explain``: one head's scaled dot-product attention step by step, checked against the model."""

from __future__ import annotations

from typing import Annotated

import typer

from attnscope.cli.command import command
from attnscope.cli.exits import fail_if_not_ok
from attnscope.cli.inputs import read_prompt
from attnscope.cli.options import Chat, HeadOpt, LayerOpt, Model, Output, PromptArg, Query


@command
def explain_cmd(
    prompt: PromptArg,
    layer: LayerOpt,
    head: HeadOpt,
    *,
    query: Query,
    dims: Annotated[int, typer.Option("--dims", help="How many dims of q, k_j and out to show.")] = 4,
    model: Model,
    chat: Chat,
    out: Output,
) -> None:
    """q·k_j, ÷√d, mask, softmax and Σ w_j v_j for one query and head, compared with what the model computed."""
    from attnscope.cli.parse import chat_spec, parse_one, query_spec
    from attnscope.core.prompt.params import EXPLAIN_PARAMS, validate
    from attnscope.core.prompt.spec import Selection

    validate(EXPLAIN_PARAMS, dims=dims)
    text = read_prompt(prompt)
    layer_i, head_i = parse_one(layer, "layer"), parse_one(head, "head")
    asked = query_spec(query.query, query.occurrence, query.pos)
    spec = chat_spec(chat.chat, chat.system, None)
    out.ctx()  # a bad --lang fails before the model loads
    loaded = model.load(
        selection=Selection(layers=[layer_i], heads=[head_i]),
        prompts=[text],
        find=[("query", query.query, query.occurrence)],
        chat=chat,
    )
    from attnscope.core.explain import explain

    result = explain(loaded, text, layer=layer_i, head=head_i, query=asked, chat=spec, dims=dims)
    out.emit(result)
    fail_if_not_ok(out.terminal, result, "the hand computation does not match the model's weights or output")
