"""``attnscope heads``: rank every (layer, head) by how much the query attends to the key."""

from __future__ import annotations

from typing import Annotated, Literal, get_args

import typer

from attnscope.cli.command import command
from attnscope.cli.inputs import read_prompt
from attnscope.cli.options import (
    Chat,
    KeyOccurrenceOpt,
    KeyOpt,
    MeasureOpt,
    Model,
    NoSinkOpt,
    OccurrenceOpt,
    Output,
    PromptArg,
    TopOpt,
)


@command
def heads_cmd(
    prompt: PromptArg,
    query: Annotated[str, typer.Option("--query", "-q", help="Text in the prompt whose row is scored.")],
    key: KeyOpt,
    query_agg: Annotated[
        str, typer.Option("--query-agg", help="last|mean: a multi-token query uses its last token or the mean row.")
    ] = "last",
    top: TopOpt = 10,
    no_sink: NoSinkOpt = False,
    occurrence: OccurrenceOpt = None,
    key_occurrence: KeyOccurrenceOpt = None,
    *,
    model: Model,
    chat: Chat,
    out: Output,
    measure: MeasureOpt = "weight",
) -> None:
    """Rank all layers x heads by the weight the query puts on the key (summed over the key's tokens)."""
    from attnscope.cli.parse import chat_spec
    from attnscope.core.prompt.params import HEADS_PARAMS, validate
    from attnscope.core.prompt.spec import Text, one_of
    from attnscope.results.heads import QueryAgg
    from attnscope.results.weights import Measure

    text = read_prompt(prompt)
    agg = one_of(query_agg, get_args(QueryAgg), "query_agg")
    how = one_of(measure, get_args(Measure), "measure")
    validate(HEADS_PARAMS, top=top)
    spec = chat_spec(chat.chat, chat.system, None)
    find: list[tuple[Literal["query", "key"], str | None, int | None]] = [
        ("query", query, occurrence),
        ("key", key, key_occurrence),
    ]
    loaded = model.load(prompts=[text], find=find, chat=chat)
    from attnscope.core.heads import heads

    result = heads(
        loaded,
        text,
        query=Text(query, occurrence),
        key=Text(str(key), key_occurrence),  # --key is required here
        query_agg=agg,
        top=top,
        no_sink=no_sink,
        chat=spec,
        measure=how,
    )
    out.emit(result)
