"""``attnscope stats``: per-head attention statistics over a corpus, on one machine or on Ray.

The corpus is a file with one prompt per line (plain text), or JSON Lines with the prompt in
a field (``{"prompt": ...}``) or, with ``chat``, a conversation (``{"messages": [...]}``). Its
lines are cut into shards of ``shard_size`` lines, fixed by line number; every shard becomes
one :class:`~attnscope.core.stats.aggregates.Partial` (``core.stats.worker``, the same code on both
engines), and the result is the merge of all shards in shard order. A checkpoint folder holds
a manifest (what the numbers depend on) and one file per finished shard, written atomically,
so a run that stops keeps what finished and ``resume`` skips it; the merged result is the one
an uninterrupted run gives. The driver reads and parses the file (bad lines are recorded with
their line numbers, or fatal with ``strict``) and never holds more than one shard's prompts
on the local engine. This module does not print: ``progress`` receives the lines done.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attnscope.core.prompt.segments import parse_messages
from attnscope.core.prompt.spec import ChatSpec
from attnscope.core.stats.aggregates import Partial, histograms, massive, statistics
from attnscope.core.stats.options import InputFormat, StatsConfig
from attnscope.core.stats.worker import Item, StatsWorker
from attnscope.errors import AttnscopeError, decoded, encoded, os_error
from attnscope.model import Loaded
from attnscope.results.common import ModelInfo, ResultWarning
from attnscope.results.files import write_atomic
from attnscope.results.stats import Corpus, SkippedLine, StatsResult

CHECKPOINT_SCHEMA = "attnscope.stats-checkpoint/1"
MANIFEST = "manifest.json"

Progress = Callable[[int, int], None]  # (lines done, lines in the file that hold something)


@dataclass(frozen=True)
class ModelSpec:
    """How to load the model: what a Ray worker is told, and what a checkpoint records.

    ``loader`` (optional) loads it in this process for the local engine (the CLI passes its own,
    which checks the model and reports progress first).
    """

    model: str | None = None
    revision: str | None = None
    device: str = "auto"
    dtype: str = "auto"
    loader: Callable[[], Loaded] | None = None

    def key(self) -> str:
        """The model as a checkpoint names it: a path made absolute, or the hub id and revision."""
        from attnscope.model.reference import resolve

        ref, kind = resolve(self.model)
        if kind != "hub":
            ref = os.path.realpath(ref)
        return ref if self.revision is None else f"{ref}@{self.revision}"

    def load(self) -> Loaded:
        if self.loader is not None:
            return self.loader()
        from attnscope.capture.engine import load

        return load(self.model, revision=self.revision, device=self.device, dtype=self.dtype)


@dataclass(frozen=True)
class Scan:
    """The input file: its path, sha256, number of lines and of lines holding something."""

    path: str
    sha256: str
    lines: int
    filled: int
    jsonl: bool


def scan(path: str, input_format: InputFormat = "auto") -> Scan:
    """Read the file once (streamed): its hash and line counts; refuse a missing or empty file."""
    if path == "-":
        raise AttnscopeError("stats_stdin", arg="input")
    if os.path.isdir(path):
        raise AttnscopeError("stats_input_folder", arg="input", path=path)
    digest = hashlib.sha256()
    lines = filled = 0
    first: bytes | None = None
    try:
        with open(path, "rb") as fh:
            for raw in fh:
                digest.update(raw)
                lines += 1
                if raw.strip():
                    filled += 1
                    if first is None:
                        first = raw.strip()
    except OSError as exc:
        raise os_error("input", path, exc) from None
    if filled == 0:
        raise AttnscopeError("input_empty", arg="input", path=path)
    jsonl = input_format == "jsonl" or (
        input_format == "auto" and (path.lower().endswith(".jsonl") or (first or b"").startswith(b"{"))
    )
    return Scan(path=path, sha256=digest.hexdigest(), lines=lines, filled=filled, jsonl=jsonl)


def parse_line(number: int, raw: bytes, jsonl: bool, field: str, chat: bool) -> Item | tuple[int, str] | None:
    """One input line: an :class:`Item`, ``(line, reason)`` for a bad one, or None when it is blank."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return (number, encoded(AttnscopeError("line_utf8", n=exc.start + 1)))
    text = text.removesuffix("\n").removesuffix("\r").removeprefix("\ufeff" if number == 1 else "")
    if not text.strip():
        return None
    if not jsonl:
        return Item(line=number, prompt=text)
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        return (number, encoded(AttnscopeError("stats_line_json", why=exc.msg, col=exc.colno)))
    if not isinstance(obj, dict):
        return (number, encoded(AttnscopeError("stats_line_object")))
    if chat and "messages" in obj:
        try:
            messages = parse_messages(obj["messages"], "messages")
        except AttnscopeError as exc:
            return (number, encoded(exc))
        return Item(line=number, messages=tuple(messages))
    if field not in obj:
        return (
            number,
            encoded(AttnscopeError("stats_line_field_chat" if chat else "stats_line_field", name=repr(field))),
        )
    prompt = obj[field]
    if not isinstance(prompt, str):
        return (number, encoded(AttnscopeError("stats_line_not_text", name=repr(field))))
    if not prompt.strip():
        return (number, encoded(AttnscopeError("prompt_empty")))
    return Item(line=number, prompt=prompt)


def shards(
    path: str, shard_size: int, jsonl: bool, field: str, chat: bool
) -> Iterator[tuple[int, list[Item], list[tuple[int, str]]]]:
    """(shard index, its usable items, its bad lines): shard k holds lines k*size+1 .. (k+1)*size."""
    items: list[Item] = []
    bad: list[tuple[int, str]] = []
    shard = 0
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            if (number - 1) // shard_size != shard:
                yield shard, items, bad
                items, bad, shard = [], [], (number - 1) // shard_size
            got = parse_line(number, raw, jsonl, field, chat)
            if isinstance(got, Item):
                items.append(got)
            elif got is not None:
                bad.append(got)
    yield shard, items, bad


class Checkpoint:
    """A folder of finished shards: ``manifest.json`` and ``shard-NNNNNN.npz``, each written atomically."""

    def __init__(self, folder: str, fingerprint: dict[str, Any], resume: bool) -> None:
        self.folder = Path(folder)
        self.fingerprint = fingerprint
        manifest = self.folder / MANIFEST
        if self.folder.exists() and not self.folder.is_dir():
            raise AttnscopeError("stats_checkpoint_file", arg="checkpoint", folder=folder)
        if resume:
            if not manifest.is_file():
                raise AttnscopeError("stats_no_checkpoint", arg="resume", folder=folder)
            try:
                saved = json.loads(manifest.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise AttnscopeError("stats_manifest_unreadable", arg="resume", path=manifest, why=exc) from None
            if not isinstance(saved, dict) or saved.get("schema") != CHECKPOINT_SCHEMA:
                raise AttnscopeError("stats_manifest_other", arg="resume", path=manifest)
            differs = [k for k in fingerprint if saved.get("fingerprint", {}).get(k) != fingerprint[k]]
            if differs:
                k = differs[0]
                was = json.dumps(saved.get("fingerprint", {}).get(k), ensure_ascii=False)
                now = json.dumps(fingerprint[k], ensure_ascii=False)
                raise AttnscopeError(
                    "stats_checkpoint_differs",
                    arg="resume",
                    other="checkpoint",
                    folder=folder,
                    what=_WHAT.get(k, k),
                    was=was,
                    now=now,
                )
        else:
            if any(self.folder.glob("shard-*.npz")):  # a manifest alone (a run that kept nothing) is replaced
                raise AttnscopeError("stats_checkpoint_exists", arg="checkpoint", other="resume", folder=folder)
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise AttnscopeError("folder_error", arg="checkpoint", path=folder, why=exc.strerror) from None
            self._write(MANIFEST, json.dumps({"schema": CHECKPOINT_SCHEMA, "fingerprint": fingerprint}).encode())

    def finished(self) -> set[int]:
        """The indices of the shards already done. Each file is read once here, so that a damaged
        one is reported before any work starts, and let go: :meth:`load` reads it again when the
        merge reaches it, so a resumed run holds no more shards than a fresh one."""
        out: set[int] = set()
        for file in sorted(self.folder.glob("shard-*.npz")):
            self._read(file)
            out.add(int(file.stem.split("-")[1]))
        return out

    def load(self, shard: int) -> Partial:
        return self._read(self.folder / f"shard-{shard:06d}.npz")

    @staticmethod
    def _read(file: Path) -> Partial:
        try:
            return Partial.from_bytes(file.read_bytes())
        except (OSError, ValueError, KeyError) as exc:
            raise AttnscopeError("stats_shard_unreadable", arg="resume", path=file, why=exc) from None

    def save(self, shard: int, part: Partial) -> None:
        self._write(f"shard-{shard:06d}.npz", part.to_bytes())

    def _write(self, name: str, data: bytes) -> None:
        write_atomic(self.folder / name, lambda fh: fh.write(data))


_WHAT = {
    "model": "model",
    "corpus_sha256": "input file (its sha256 differs)",
    "field": "--field",
    "max_tokens": "--max-tokens",
    "pos": "--pos",
    "chat": "--chat",
    "system": "--system",
    "measure": "--measure",
    "shard_size": "--shard-size",
    "bootstrap": "--bootstrap",
    "seed": "--seed",
    "jsonl": "input format",
}


def stats(
    model: Loaded | ModelSpec,
    path: str,
    options: StatsConfig | None = None,
    *,
    chat: ChatSpec | None = None,
    progress: Progress | None = None,
    on_skip: Callable[[int, AttnscopeError | str], None] | None = None,
) -> StatsResult:
    """Everything ``attnscope stats`` computes, from a model (loaded, or how to load it) and a file.

    ``options`` (a :class:`StatsConfig`; its defaults when None) says what the numbers depend on
    and how the run goes; ``chat`` wraps each prompt in the chat template, as in every analysis
    (with it, a line may also hold a conversation, ``{"messages": [...]}``). ``on_skip`` receives
    each skipped line and why, as the error (or, from an older checkpoint, its English words)."""
    opts = StatsConfig() if options is None else options
    opts.check(chat)
    if opts.engine == "ray" and isinstance(model, Loaded):
        model = ModelSpec(model=model.path, device=model.info.device, dtype=model.info.dtype)
    corpus = scan(path, opts.input_format)
    if opts.engine == "ray":
        from attnscope.core.stats.ray_engine import check_ray

        check_ray(opts.address, opts.workers)  # before anything is written or loaded
    key = model.key() if isinstance(model, ModelSpec) else os.path.realpath(model.path)
    fingerprint = opts.fingerprint(chat, model=key, corpus_sha256=corpus.sha256, jsonl=corpus.jsonl)
    store = Checkpoint(opts.checkpoint, fingerprint, opts.resume) if opts.checkpoint is not None else None
    run = _Run(opts, chat, corpus, store, progress)
    if opts.engine == "ray":
        from attnscope.core.stats.ray_engine import run_ray

        assert isinstance(model, ModelSpec)
        t0 = time.perf_counter()  # Ray's start and the workers' model loads are part of its time
        info = run_ray(model, opts, chat, run.todo, opts.workers, opts.address, run.finish, retries=opts.retries)
    else:
        loaded = model.load() if isinstance(model, ModelSpec) else model
        info = loaded.info
        worker = StatsWorker(loaded, opts, chat)
        wanted = {shard for shard, _ in run.todo}
        t0 = time.perf_counter()
        for shard, items, _ in run.shards():  # one shard's prompts at a time
            if shard in wanted:
                run.finish(shard, worker.shard(items))
    elapsed = time.perf_counter() - t0
    if info is None:  # every shard was already in the checkpoint (Ray started no worker)
        info = _info_of(model)
    return _result(info, corpus, opts, chat, run.merged.result(), run.bad, elapsed, run.ran, on_skip)


class _Run:
    """One run's shards: the plan (which to run, which the checkpoint holds, the bad lines), and
    :meth:`finish`, which each finished shard goes through (saved, merged, counted, reported)."""

    def __init__(
        self,
        opts: StatsConfig,
        chat: ChatSpec | None,
        corpus: Scan,
        store: Checkpoint | None,
        progress: Progress | None,
    ) -> None:
        self.opts, self.chat, self.corpus, self.store, self.progress = opts, chat, corpus, store, progress
        on_disk = store.finished() if store is not None else set()
        self.bad: list[tuple[int, str]] = []
        order: list[int] = []  # every shard, in the order they are merged
        self.todo: list[tuple[int, list[Item]]] = []  # the shards to run, with their items (Ray's dataset needs them)
        self.lines_done = 0
        self.ran = 0
        for shard, items, shard_bad in self.shards():
            if shard_bad:
                self._strict(shard_bad)
            self.bad += shard_bad
            order.append(shard)
            if shard in on_disk:
                self.lines_done += len(items) + len(shard_bad)
                continue
            self.todo.append((shard, items if opts.engine == "ray" else []))  # the local engine reads them again
        self._report()
        self.merged = _InOrder(order, on_disk, store)

    def shards(self) -> Iterator[tuple[int, list[Item], list[tuple[int, str]]]]:
        o = self.opts
        return shards(self.corpus.path, o.shard_size, self.corpus.jsonl, o.field, self.chat is not None)

    def finish(self, shard: int, part: Partial) -> None:
        if part.skipped:
            self._strict(part.skipped)
        if self.store is not None:
            self.store.save(shard, part)
        self.merged.add(shard, part)
        self.ran += part.prompts
        size = self.opts.shard_size
        self.lines_done += part.prompts + len(part.skipped) + sum(1 for b in self.bad if (b[0] - 1) // size == shard)
        self._report()

    def _strict(self, bad: list[tuple[int, str]]) -> None:
        if self.opts.strict:
            line, reason = bad[0]
            raise AttnscopeError(
                "stats_strict", arg="input", other="strict", path=self.corpus.path, line=line, reason=_reason(reason)
            )

    def _report(self) -> None:
        if self.progress is not None:
            self.progress(self.lines_done, self.corpus.filled)


class _InOrder:
    """The merge of every shard, in shard order, as the shards come in: a shard that arrives early
    waits (on Ray, at most the ones still running before it), a shard from the checkpoint is read
    when its turn comes. So memory does not grow with the corpus, and the result is the same left
    fold in shard order whatever engine, worker count or arrival order produced the shards."""

    def __init__(self, order: list[int], on_disk: set[int], store: Checkpoint | None) -> None:
        self.order = order
        self.on_disk = on_disk
        self.store = store
        self.at = 0
        self.pending: dict[int, Partial] = {}
        self.total: Partial | None = None
        self._drain()

    def add(self, shard: int, part: Partial) -> None:
        self.pending[shard] = part
        self._drain()

    def _drain(self) -> None:
        while self.at < len(self.order):
            shard = self.order[self.at]
            if shard in self.pending:
                part = self.pending.pop(shard)
            elif shard in self.on_disk and self.store is not None:
                part = self.store.load(shard)
            else:
                return
            if self.total is None:
                self.total = Partial.empty(
                    part.count.shape[0],
                    part.mean.shape[1],
                    part.mean.shape[2],
                    part.boot_n.shape[0],
                    part.dim_counts.shape[1],
                )
            self.total.merge(part)
            self.at += 1

    def result(self) -> Partial | None:
        if self.at != len(self.order):  # pragma: no cover - a bug, not an input
            raise AssertionError(f"shards merged: {self.at} of {len(self.order)}")
        return self.total


def _info_of(model: Loaded | ModelSpec) -> ModelInfo:
    if isinstance(model, Loaded):
        return model.info
    return model.load().info


def _reason(code: str) -> AttnscopeError | str:
    """A skipped line's reason as recorded (the error, encoded), back as the error."""
    error = decoded(code)
    return code if error is None else error


def _result(
    info: ModelInfo,
    corpus: Scan,
    opts: StatsConfig,
    chat: ChatSpec | None,
    merged: Partial | None,
    bad: list[tuple[int, str]],
    elapsed: float,
    ran: int,
    on_skip: Callable[[int, AttnscopeError | str], None] | None,
) -> StatsResult:
    names = opts.names(chat)
    total = merged or Partial.empty(len(names), info.num_hidden_layers, info.num_attention_heads, opts.bootstrap, 1)
    skipped = [(line, _reason(code)) for line, code in sorted(bad + total.skipped)]
    if on_skip is not None:
        for line, reason in skipped:
            on_skip(line, reason)
    if total.prompts == 0:
        first = f"; line {skipped[0][0]}: {skipped[0][1]}" if skipped else ""
        raise AttnscopeError("stats_no_usable", arg="input", path=corpus.path, n=len(skipped), first=first)
    if len(set(total.lines.tolist())) != total.prompts:  # pragma: no cover - a bug, not an input
        raise AssertionError("a prompt was counted twice")
    longest = int(total.longest[0])
    mixed = [ResultWarning(code="mixed_windows_length", count=longest, value=info.sliding_window)]
    return StatsResult(
        model=info,
        corpus=Corpus(
            path=corpus.path,
            sha256=corpus.sha256,
            lines=corpus.lines,
            used=total.prompts,
            skipped=[SkippedLine(line=line, reason=str(reason)) for line, reason in skipped],
            truncated=int(total.truncated[0]),
            tokens=int(total.tokens[0]),
            positions=int(total.count[0]),
        ),
        options=opts.record(chat),
        stats=statistics(total, names),
        histograms=histograms(total, names),
        massive=massive(total),
        elapsed=elapsed,
        ran=ran,
        warnings=mixed if info.mixes_windows(longest) else [],
    )


__all__ = ["ModelSpec", "StatsConfig", "stats"]
