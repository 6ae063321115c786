"""``attnscope explain``: one head's scaled dot-product attention step by step, checked against the model."""

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
    PromptArg,
    RevisionOpt,
    SvgOpt,
    SystemOpt,
    WidthOpt,
    emit,
    handle_errors,
    load,
    read_prompt,
)
from attnscope.cli.trace import LangOpt, fail_if_not_ok


@app.command("explain")
@handle_errors
def explain_cmd(
    prompt: PromptArg,
    layer: Annotated[str, typer.Option("--layer", "-l", help="One layer (negative counts from the end).")],
    head: Annotated[str, typer.Option("--head", help="One query head (negative counts from the end).")],
    query: Annotated[
        str | None, typer.Option("--query", "-q", help="Text in the prompt; the query is its last token.")
    ] = None,
    occurrence: Annotated[
        int | None, typer.Option("--occurrence", help="Which occurrence of --query (1-based).")
    ] = None,
    pos: Annotated[
        int | None, typer.Option("--pos", help="Query position; negative counts from the end. Default: the last token.")
    ] = None,
    dims: Annotated[int, typer.Option("--dims", help="How many dims of q, k_j and out to show.", min=1)] = 4,
    lang: LangOpt = "en",
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
    """q·k_j, ÷√d, mask, softmax and Σ w_j v_j for one query and head, compared with what the model computed."""
    from attnscope.core.explain import explain
    from attnscope.core.rope import check_lang

    text = read_prompt(prompt)
    check_lang(lang)
    loaded = load(model, revision, device, dtype)
    result = explain(
        loaded,
        text,
        layer=layer,
        head=head,
        query=query,
        pos=pos,
        occurrence=occurrence,
        chat=chat,
        system=system,
        dims=dims,
        lang=lang,
    )
    emit(result, as_json=as_json, svg=svg, html=html, width=width)
    fail_if_not_ok(result, "the hand computation does not match the model's weights or output")
