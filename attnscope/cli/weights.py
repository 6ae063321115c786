"""``attnscope weights``: how much the query mixes in from itself and each earlier token."""

from __future__ import annotations

from typing import Annotated

import typer

from attnscope.cli import app
from attnscope.cli.common import (
    ChatOpt,
    DeviceOpt,
    DtypeOpt,
    HtmlOpt,
    JsonOpt,
    ModelOpt,
    RevisionOpt,
    SvgOpt,
    SystemOpt,
    WidthOpt,
    emit,
    handle_errors,
    load,
    read_prompt,
)


@app.command("weights")
@handle_errors
def weights_cmd(
    prompt: Annotated[str, typer.Argument(help="The prompt text, or - to read it from stdin.")],
    query: Annotated[
        str | None, typer.Option("--query", "-q", help="Text in the prompt; the query is its last token.")
    ] = None,
    occurrence: Annotated[
        int | None, typer.Option("--occurrence", help="Which occurrence of --query (1-based).")
    ] = None,
    pos: Annotated[
        int | None, typer.Option("--pos", help="Query position; negative counts from the end. Default: the last token.")
    ] = None,
    layer: Annotated[str, typer.Option("--layer", "-l", help="Layers: 5, -1, 0,3,20-23 or all.")] = "all",
    head: Annotated[str, typer.Option("--head", help="Heads: 5, -1, 0,3,8-13 or all.")] = "all",
    by: Annotated[str, typer.Option("--by", help="token|word: word sums each key word's tokens.")] = "token",
    agg: Annotated[str, typer.Option("--agg", help="mean|max over the selected layers and heads.")] = "mean",
    no_sink: Annotated[bool, typer.Option("--no-sink", help="Exclude position 0 and renormalise each row.")] = False,
    per_head: Annotated[
        bool, typer.Option("--per-head", help="One chart per selected head, with its KV group.")
    ] = False,
    model: ModelOpt = None,
    revision: RevisionOpt = None,
    device: DeviceOpt = "auto",
    dtype: DtypeOpt = "auto",
    chat: ChatOpt = False,
    system: SystemOpt = None,
    as_json: JsonOpt = False,
    svg: SvgOpt = None,
    html: HtmlOpt = None,
    width: WidthOpt = None,
) -> None:
    """Per layer and head, how much the query token mixes in from itself and each earlier token."""
    from attnscope.core.weights import AGGS, BYS, weights
    from attnscope.results.weights import WeightsView

    text = read_prompt(prompt)
    if by not in BYS:
        raise _bad(f"--by {by!r}: use token or word")
    if agg not in AGGS:
        raise _bad(f"--agg {agg!r}: use mean or max")
    loaded = load(model, revision, device, dtype)
    result = weights(
        loaded,
        text,
        query=query,
        pos=pos,
        occurrence=occurrence,
        layer=layer,
        head=head,
        chat=chat,
        system=system,
        view=WeightsView(by=by, agg=agg, no_sink=no_sink, per_head=per_head),
    )
    emit(result, as_json=as_json, svg=svg, html=html, width=width)


def _bad(message: str) -> Exception:
    from attnscope.errors import AttnscopeError

    return AttnscopeError(message)
