"""``attnscope matrix``: the full query x key weights of one layer and one head."""

from __future__ import annotations

from typing import Annotated, get_args

import typer

from attnscope.cli.command import command
from attnscope.cli.inputs import read_prompt
from attnscope.cli.options import ArrayOutput, ByOpt, Chat, HeadOpt, LayerOpt, MeasureOpt, Model, PromptArg


@command
def matrix_cmd(
    prompt: PromptArg,
    layer: LayerOpt,
    head: HeadOpt,
    by: ByOpt = "token",
    measure: MeasureOpt = "weight",
    window: Annotated[
        str | None, typer.Option("--window", help="A:B: only query and key positions A..B-1 (long prompts).")
    ] = None,
    *,
    model: Model,
    chat: Chat,
    out: ArrayOutput,
) -> None:
    """The whole query x key weight matrix of ONE layer and head, as a shaded heatmap."""
    from attnscope.cli.parse import chat_spec, parse_one, parse_window
    from attnscope.core.prompt.spec import Selection, one_of
    from attnscope.results.matrix import By
    from attnscope.results.weights import Measure

    text = read_prompt(prompt)
    by_ = one_of(by, get_args(By), "by")
    how = one_of(measure, get_args(Measure), "measure")
    layer_i, head_i = parse_one(layer, "layer"), parse_one(head, "head")
    span = parse_window(window)
    spec = chat_spec(chat.chat, chat.system, None)
    loaded = model.load(selection=Selection(layers=[layer_i], heads=[head_i]))
    from attnscope.core.matrix import matrix

    result = matrix(loaded, text, layer=layer_i, head=head_i, by=by_, measure=how, window=span, chat=spec)
    out.emit(result)
