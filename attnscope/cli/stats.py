"""``attnscope stats``: per-head attention statistics over a corpus, locally or on a Ray cluster.

This module checks the options, loads the model (the local engine) or only checks it (Ray
workers load their own), shows the progress line on a terminal, prints the skipped lines
and one summary line on stderr, and writes the result, and the long table with ``--table``.
The work is ``attnscope.core.stats.driver``.
"""

from __future__ import annotations

import os
import time
from typing import IO, TYPE_CHECKING, Annotated, Any, cast

import typer

from attnscope.cli.command import command
from attnscope.cli.options import ArrayOutput, Chat, MeasureOpt, Model, Output, PosOpt
from attnscope.errors import AttnscopeError

if TYPE_CHECKING:
    from attnscope.core.prompt.spec import ChatSpec
    from attnscope.core.stats.options import StatsConfig
    from attnscope.results.stats import StatsResult

INTERRUPTED = 130  # 128 + SIGINT, as a shell reports Ctrl-C
SHOWN_SKIPPED = 10  # skipped lines named one by one on stderr; the JSON names all


@command
def stats_cmd(
    *,
    input_file: Annotated[
        str | None,
        typer.Option(
            "--input",
            "-i",
            help='The corpus: one prompt per line, or JSON Lines {"prompt": ...} (with --chat also {"messages": [...]}).',
        ),
    ] = None,
    field: Annotated[str, typer.Option("--field", help="The JSON field that holds the prompt.")] = "prompt",
    input_format: Annotated[
        str,
        typer.Option("--input-format", help="auto|lines|jsonl (auto: JSON Lines if *.jsonl or a line starts with {)."),
    ] = "auto",
    max_tokens: Annotated[
        int | None, typer.Option("--max-tokens", help="Cut longer prompts to this many tokens (counted).")
    ] = None,
    pos: PosOpt = None,
    measure: MeasureOpt = "weight",
    bootstrap: Annotated[int, typer.Option("--bootstrap", help="Bootstrap replicates for the intervals.")] = 200,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the bootstrap.")] = 0,
    shard_size: Annotated[
        int, typer.Option("--shard-size", help="Input lines per shard: the unit of work and of the checkpoint.")
    ] = 32,
    batch_size: Annotated[int, typer.Option("--batch-size", help="Prompts padded and run together per forward.")] = 1,
    engine: Annotated[
        str, typer.Option("--engine", help="local|ray: in this process, or on Ray Data actors.")
    ] = "local",
    workers: Annotated[
        int | None, typer.Option("--workers", help="With --engine ray: actors, each with its own model (default 2).")
    ] = None,
    address: Annotated[
        str | None, typer.Option("--address", help="With --engine ray: join the cluster at HOST:PORT (or auto).")
    ] = None,
    retries: Annotated[
        int | None,
        typer.Option(
            "--retries", help="With --engine ray: restarts of a worker that died, and reruns of its shard (default 3)."
        ),
    ] = None,
    checkpoint: Annotated[
        str | None, typer.Option("--checkpoint", help="A folder: every finished shard is saved there.")
    ] = None,
    resume: Annotated[
        bool, typer.Option("--resume", help="Go on from --checkpoint DIR, skipping finished shards.")
    ] = False,
    strict: Annotated[
        bool, typer.Option("--strict", help="Stop at the first bad line instead of skipping it.")
    ] = False,
    table: Annotated[
        str | None, typer.Option("--table", help="Also write the long table: FILE.csv or FILE.parquet.")
    ] = None,
    model: Model,
    chat: Chat,
    out: ArrayOutput,
) -> None:
    """Per-head attention statistics over a corpus of prompts, with bootstrap intervals."""
    from attnscope.cli.parse import chat_spec, joined
    from attnscope.core.stats.options import DEFAULT_RETRIES, StatsConfig

    if input_file is None:
        raise AttnscopeError("stats_no_input")
    ray = engine == "ray"
    spec = chat_spec(chat.chat, chat.system, None)
    options = StatsConfig(
        field=field,
        max_tokens=max_tokens,
        pos=joined(pos) or "all",
        measure=cast(Any, measure),
        bootstrap=bootstrap,
        seed=seed,
        shard_size=shard_size,
        batch_size=batch_size,
        engine=cast(Any, engine),
        workers=1 if not ray else (2 if workers is None else workers),
        address=address,
        retries=DEFAULT_RETRIES if retries is None else retries,
        checkpoint=checkpoint,
        resume=resume,
        strict=strict,
        input_format=cast(Any, input_format),
    )
    options.check(spec)  # the declared values (core.prompt.params): no file, no model, no torch yet
    if not ray and (workers is not None or address is not None or retries is not None):
        raise AttnscopeError("stats_ray_only")
    if table is not None:
        _check_table(table)
    reasons: dict[int, Any] = {}  # line -> why it was skipped (the error, worded in the reader's language)
    result = _run(model, options, spec, input_file, out, reasons)
    if table is not None:
        write_table(table, result.table_rows())
    from attnscope.cli.flags import cli_text
    from attnscope.render.i18n import t

    ctx = out.ctx()
    for skipped in result.corpus.skipped[:SHOWN_SKIPPED]:  # the result records the reason in English
        why = reasons.get(skipped.line)
        reason = cli_text(why, ctx.lang) if isinstance(why, AttnscopeError) else skipped.reason
        out.terminal.line(t(ctx.lang, "stats.skipped_line", line=skipped.line, reason=reason))
    more = len(result.corpus.skipped) - SHOWN_SKIPPED
    if more > 0:
        out.terminal.line(t(ctx.lang, "stats.skipped_more", n=more))
    out.emit(result)
    c = result.corpus
    rate = result.ran / result.elapsed if result.elapsed > 0 else 0.0
    out.terminal.line(
        t(
            ctx.lang,
            "stats.summary",
            used=c.used,
            ran=result.ran,
            positions=c.positions,
            skipped=len(c.skipped),
            truncated=c.truncated,
            seconds=result.elapsed,
            rate=rate,
        )
    )


def _run(
    model: Model, options: StatsConfig, chat: ChatSpec | None, input_file: str, out: Output, reasons: dict[int, Any]
) -> StatsResult:
    """Check the options, the file (and, for Ray, the cluster and the model) before anything loads, then run
    with the progress line; Ctrl-C says what the checkpoint kept."""
    from attnscope.core.stats.driver import ModelSpec, scan, stats

    scan(input_file, options.input_format)  # a missing or empty file is reported before any model loads
    if options.engine == "ray":
        from attnscope.core.prompt.precheck import precheck
        from attnscope.core.stats.ray_engine import check_ray

        check_ray(options.address, options.workers)
        precheck(model.model, model.revision, progress=model.terminal.progress)
    spec = ModelSpec(
        model=model.model, revision=model.revision, device=model.device, dtype=model.dtype, loader=model.load
    )
    lang = out.ctx().lang
    try:
        return stats(spec, input_file, options, chat=chat, progress=_Progress(out, lang), on_skip=reasons.__setitem__)
    except KeyboardInterrupt:
        _interrupted(out, lang, options.checkpoint)
        raise typer.Exit(INTERRUPTED) from None


def _interrupted(out: Output, lang: Any, checkpoint: str | None) -> None:
    """After Ctrl-C: what was kept, and how to go on."""
    from pathlib import Path

    from attnscope.render.i18n import t

    if checkpoint is None:
        out.terminal.line(t(lang, "stats.interrupted_nothing"))
        return
    kept = len(list(Path(checkpoint).glob("shard-*.npz")))
    out.terminal.line(t(lang, "stats.interrupted", n=kept, folder=checkpoint))


class _Progress:
    """The transient progress line: lines done of all, prompts per second, time left."""

    def __init__(self, out: Output, lang: Any) -> None:
        self.out = out
        self.lang = lang
        self.t0: float | None = None
        self.first = 0

    def __call__(self, done: int, total: int) -> None:
        from attnscope.render.i18n import t

        now = time.perf_counter()
        if self.t0 is None:
            self.t0, self.first = now, done
        elapsed = now - self.t0
        rate = (done - self.first) / elapsed if elapsed > 0 else 0.0
        eta = (total - done) / rate if rate > 0 else None
        self.out.terminal.progress(
            t(
                self.lang,
                "stats.progress",
                done=done,
                total=total,
                pct=100.0 * done / max(total, 1),
                rate=rate,
                eta=_clock(eta) if eta is not None else "?",
            )
        )


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def _check_table(path: str) -> None:
    lower = path.lower()
    if not (lower.endswith(".csv") or lower.endswith(".parquet")):
        raise AttnscopeError("stats_table_kind", path=path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise AttnscopeError("write_no_folder", path=path, folder=repr(folder))
    if lower.endswith(".parquet"):
        try:
            import pyarrow  # noqa: F401
            import pyarrow.parquet  # noqa: F401
        except ImportError:
            raise AttnscopeError("stats_table_pyarrow", path=path) from None


def write_table(path: str, rows: list[dict[str, object]]) -> None:
    """The long table as CSV or Parquet, written atomically (``results.files.write_atomic``)."""
    from attnscope.results.files import write_atomic

    if path.lower().endswith(".parquet"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        write_atomic(path, lambda fh: pq.write_table(pa.Table.from_pylist(rows), fh))
        return

    def write_csv(fh: IO[bytes]) -> None:
        import csv
        import io

        text = io.TextIOWrapper(fh, encoding="utf-8", newline="")
        writer = csv.DictWriter(text, fieldnames=list(rows[0]) if rows else ["layer"])
        writer.writeheader()
        writer.writerows(rows)
        text.flush()
        text.detach()  # the file stays open for write_atomic to flush and rename

    write_atomic(path, write_csv)
