"""``attnscope weights``: how much the query mixes in from itself and each earlier token.

With ``--input FILE`` it is batch mode: one prompt per line (or JSON Lines), the model
loaded once, one JSON line (or one view) per prompt in input order, written as soon as
its batch is done. Parsing and running the batch live in ``attnscope.core.weights.batch``; this
module only opens the file, prints, counts and decides when to stop.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Annotated, Any, get_args

import typer

from attnscope.cli.command import command
from attnscope.cli.inputs import read_messages, read_prompt
from attnscope.cli.options import (
    ArrayOutput,
    ByOpt,
    Chat,
    HeadOpt,
    LayerOpt,
    MeasureOpt,
    MessagesOpt,
    Model,
    NoSinkOpt,
    Output,
    Query,
)
from attnscope.cli.terminal import warning_line, write_json

if TYPE_CHECKING:
    from attnscope.core.prompt.spec import ChatSpec, QuerySpec, Selection
    from attnscope.errors import AttnscopeError
    from attnscope.render import Ctx
    from attnscope.results.weights import WeightsView


@command
def weights_cmd(
    prompt: Annotated[
        str | None,
        typer.Argument(
            help="The prompt text, or - to read it from stdin. Omit it with --input; optional with --messages."
        ),
    ] = None,
    *,
    messages: MessagesOpt = None,
    query: Query,
    layer: LayerOpt = "all",
    head: HeadOpt = "all",
    by: ByOpt = "word",
    measure: MeasureOpt = "weight",
    agg: Annotated[str, typer.Option("--agg", help="mean|max over the selected layers and heads.")] = "mean",
    no_sink: NoSinkOpt = False,
    per_head: Annotated[
        bool, typer.Option("--per-head", help="One chart per selected head, with its KV group.")
    ] = False,
    all_keys: Annotated[
        bool, typer.Option("--all-keys", help="Draw every key; by default a long prompt shows its top keys.")
    ] = False,
    input_file: Annotated[
        str | None,
        typer.Option(
            "--input",
            "-i",
            help="Batch mode: a file (or - for stdin) with one prompt per line, or JSON Lines "
            '{"prompt": ..., "query"|"pos": ..., "occurrence": ...}.',
        ),
    ] = None,
    input_format: Annotated[
        str,
        typer.Option("--input-format", help="auto|lines|jsonl (auto: JSON Lines if *.jsonl or a line starts with {)."),
    ] = "auto",
    batch_size: Annotated[
        int, typer.Option("--batch-size", help="With --input: prompts padded and run together per forward.", min=1)
    ] = 1,
    keep_going: Annotated[
        bool, typer.Option("--keep-going", help="With --input: report a bad line and go on (exit non-zero at the end).")
    ] = False,
    model: Model,
    device_map: Annotated[
        str | None,
        typer.Option(
            "--device-map",
            help="Shard the model with accelerate: auto|balanced|sequential|cpu (for models larger than one GPU).",
        ),
    ] = None,
    chat: Chat,
    out: ArrayOutput,
) -> None:
    """Per layer and head, how much the query token mixes in from itself and each earlier token."""
    from attnscope.cli.parse import chat_spec, parse_indices, query_spec
    from attnscope.core.prompt.spec import Selection, one_of
    from attnscope.results.weights import Agg, By, Measure, WeightsView

    if device_map is not None and model.device != "auto":
        raise _bad("not_both", arg="device", other="device_map")
    view = WeightsView(
        by=one_of(by, get_args(By), "by"),
        agg=one_of(agg, get_args(Agg), "agg"),
        no_sink=no_sink,
        per_head=per_head,
        all_keys=all_keys,
    )
    how = one_of(measure, get_args(Measure), "measure")
    selection = Selection(layers=parse_indices(layer, "layer"), heads=parse_indices(head, "head"))
    asked = query_spec(query.query, query.occurrence, query.pos)
    if view.by == "segment" and not (chat.chat or messages is not None):
        raise _bad("by_segment", arg="by", other="chat", args="messages")
    if input_file is not None:
        _check_batch_options(prompt, messages=messages, measure=how, out=out)
        _batch(
            input_file,
            input_format,
            batch_size,
            keep_going,
            out,
            lambda: model.load(device_map, selection=selection),
            query=asked,
            selection=selection,
            chat=chat_spec(chat.chat, chat.system, None),
            view=view,
        )
        return
    _check_single_options(
        prompt, messages=messages, batch_size=batch_size, keep_going=keep_going, input_format=input_format
    )
    chosen = read_messages(messages)
    text = read_prompt(prompt) if prompt is not None else None
    from attnscope.model.config import check_norm_applies

    loaded = model.load(
        device_map,
        selection=selection,
        prompts=[] if text is None else [text],
        find=[("query", query.query, query.occurrence)],
        chat=chat,
        messages=chosen,
        shape_checks=[check_norm_applies] if how == "norm" else [],
    )
    from attnscope.core.weights import weights

    result = weights(
        loaded,
        text,
        query=asked,
        selection=selection,
        chat=chat_spec(chat.chat, chat.system, chosen),
        view=view,
        measure=how,
    )
    out.emit(result)


def _check_batch_options(prompt: str | None, *, messages: str | None, measure: str, out: Output) -> None:
    """With ``--input``: refuse the options that only make sense for one prompt."""
    if messages is not None:
        raise _bad("batch_messages")
    if measure != "weight":
        raise _bad("batch_measure")
    if prompt is not None:
        raise _bad("prompt_or_input")
    if out.svg or out.html:
        raise _bad("batch_views")
    if isinstance(out, ArrayOutput) and out.arrays is not None:
        raise _bad("arrays_batch")


def _check_single_options(
    prompt: str | None, *, messages: str | None, batch_size: int, keep_going: bool, input_format: str
) -> None:
    """Without ``--input``: a prompt is needed, and the batch options keep their defaults."""
    if prompt is None and messages is None:
        raise _bad("give_prompt_input")
    if batch_size != 1 or keep_going or input_format != "auto":
        raise _bad("batch_options")


def _open_input(path: str) -> tuple[IO[bytes], int | None]:
    """The input as bytes, and its number of non-blank lines when it is a regular file."""
    from attnscope.errors import os_error

    if path == "-":
        return sys.stdin.buffer, None
    try:
        fh = open(path, "rb")  # closed by the caller
    except OSError as exc:
        raise os_error("input", path, exc) from None
    total = None
    if os.path.isfile(path):
        total = sum(1 for raw in fh if raw.strip())
        fh.seek(0)
    return fh, total


def _batch(
    path: str,
    fmt: str,
    batch_size: int,
    keep_going: bool,
    out: ArrayOutput,
    load_model: Any,
    *,
    query: QuerySpec,
    selection: Selection,
    chat: ChatSpec | None,
    view: WeightsView,
) -> None:
    """Run every line of ``path``; print each outcome as it comes; stop or go on at a bad line."""
    from attnscope import render
    from attnscope.core.weights.batch import read_entries, run_batch
    from attnscope.errors import AttnscopeError

    if fmt not in ("auto", "lines", "jsonl"):
        raise _bad("use_choices", arg="input_format", value=repr(fmt), choices="auto, lines or jsonl")
    ctx = out.ctx()
    fh, total = _open_input(path)
    try:
        if total == 0:
            raise AttnscopeError("input_empty", arg="input", path=path)
        loaded = load_model()
        t0 = time.perf_counter()
        written = failed = 0
        first_error: AttnscopeError | None = None
        first_line = 0
        show_bar = sys.stderr.isatty() and not sys.stdout.isatty()
        bar = render.ProgressBar(total, "attnscope weights", enabled=show_bar)
        try:
            outcomes: Iterator[Any] = run_batch(
                loaded,
                read_entries(fh, fmt, path),
                batch_size=batch_size,
                query=query,
                selection=selection,
                chat=chat,
                view=view,
            )
            for outcome in outcomes:
                bar.advance()
                if outcome.error is not None:
                    failed += 1
                    if first_error is None:
                        first_error, first_line = outcome.error, outcome.line
                    if not keep_going:
                        break
                    from attnscope.cli.flags import cli_text
                    from attnscope.render.i18n import error_line

                    out.terminal.line(error_line(out.terminal.lang, cli_text(outcome.error, out.terminal.lang)))
                    continue
                _print_result(outcome.result, outcome.line, out, ctx)
                written += 1
        finally:
            bar.close()
    finally:
        if fh is not sys.stdin.buffer:
            fh.close()
    elapsed = time.perf_counter() - t0
    rate = f", {written / elapsed:.2f} prompts/s" if elapsed > 0 and written else ""
    out.terminal.line(f"attnscope: {written} written, {failed} failed in {elapsed:.1f} s{rate}")
    if first_error is not None:
        raise _failed(first_error, first_line, failed, keep_going)
    if written == 0:
        raise AttnscopeError("input_empty", arg="input", path=path)


def _print_result(result: Any, line: int, out: Output, ctx: Ctx) -> None:
    """One prompt's result as soon as it is done: its warnings on stderr, then on stdout its
    JSON line (with the input line it came from) or its view under a ``── line N ──`` rule."""
    from attnscope import render
    from attnscope.render.fit import print_width

    for warning in result.warnings:
        out.terminal.line(f"attnscope: line {line}: {warning_line(warning, ctx.lang)}")
    if out.as_json:
        doc = result.to_json()
        write_json({"schema": doc.pop("schema"), "input_line": line, **doc})
        return
    sys.stdout.write(f"── line {line} ──\n")
    sys.stdout.flush()
    shown = render.view(result, ctx)
    render.console(width=out.width or print_width(shown, sys.stdout.isatty(), os.environ.get("COLUMNS"))).print(shown)


def _failed(first_error: AttnscopeError, first_line: int, failed: int, keep_going: bool) -> AttnscopeError:
    """The error a batch with bad lines ends with: the first one (when it stopped there), or a count."""
    from attnscope.errors import AttnscopeError

    if not keep_going:
        return AttnscopeError("stopped", message=first_error)
    return AttnscopeError("lines_failed", n=failed, line=first_line, cause=first_error)


def _bad(kind: str, **values: Any) -> Exception:
    from attnscope.errors import AttnscopeError

    return AttnscopeError(kind, **values)
