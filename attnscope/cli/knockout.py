"""``attnscope knockout``: block the attention edges from a query to a key, window by window of layers."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import typer

from attnscope.cli.command import command
from attnscope.cli.inputs import read_prompt
from attnscope.cli.options import (
    Answer,
    BatchOpt,
    Chat,
    HeadOpt,
    KeyOccurrenceOpt,
    KeyOpt,
    Model,
    OccurrenceOpt,
    Output,
    PromptArg,
)


@command
def knockout_cmd(
    prompt: PromptArg,
    key: KeyOpt,
    query: Annotated[
        str | None,
        typer.Option("--query", "-q", help="Text in the prompt, or a position (7, -1): the edges from it are blocked."),
    ] = None,
    layers: Annotated[
        str | None, typer.Option("--layers", help="Block in these layers at once (one run): 5, 0,3,20-23.")
    ] = None,
    window: Annotated[
        int | None, typer.Option("--window", "-w", help="Layers per window, one window centred on each layer.")
    ] = None,
    head: HeadOpt = "all",
    occurrence: OccurrenceOpt = None,
    key_occurrence: KeyOccurrenceOpt = None,
    batch: BatchOpt = 48,
    *,
    answer: Answer,
    model: Model,
    chat: Chat,
    out: Output,
) -> None:
    """Block key -> query attention (the way information travels) in windows of layers (all heads or --head) and report the metric's change."""
    from attnscope.cli.parse import chat_spec, parse_indices
    from attnscope.core.prompt.params import check_knockout
    from attnscope.core.prompt.spec import QuerySpec, Selection, Text
    from attnscope.errors import AttnscopeError

    text = read_prompt(prompt)
    answer.refuse_early()
    check_knockout(batch, layers=layers is not None, window=window is not None)
    if occurrence is not None and query is None:
        raise AttnscopeError("needs", arg="occurrence", other="query")
    is_pos = query is not None and query.strip().lstrip("-").isdigit()
    q: QuerySpec = int(query) if is_pos and query is not None else (None if query is None else Text(query, occurrence))
    selection = Selection(
        layers=None if layers is None else parse_indices(layers, "layers"), heads=parse_indices(head, "head")
    )
    spec = chat_spec(chat.chat, chat.system, None)

    def window_fits(shape: Any) -> None:
        from attnscope.core.prompt.targets import check_window

        check_window(window, shape.num_hidden_layers)

    def query_fits(tokenizer: Any) -> None:
        from attnscope.core.prompt.tokens import encode_prompt, query_at

        if isinstance(q, int):
            query_at(encode_prompt(tokenizer, text, spec), q, "query")

    find: list[tuple[Literal["query", "key"], str | None, int | None]] = [("key", key, key_occurrence)]
    if isinstance(q, Text):
        find.append(("query", q.text, occurrence))
    loaded = model.load(
        selection=selection,
        prompts=[text],
        find=find,
        chat=chat,
        shape_checks=[window_fits],
        tokenizer_checks=[answer.check, query_fits],
    )
    from attnscope.core.causal.knockout import knockout

    result = knockout(
        loaded,
        text,
        key=Text(str(key), key_occurrence),  # --key is required here
        query=q,
        answer=answer.answer(),
        selection=selection,
        window=window,
        batch_size=batch,
        chat=spec,
    )
    out.emit(result)
