"""Batch mode for ``attnscope weights --input FILE``: many prompts, one model load.

``read_entries`` turns the raw lines of an input file into :class:`Item` (one prompt
and its optional ``query``/``pos``/``occurrence``) or :class:`BadLine` (the line
number and the error), lazily, so input can stream from a pipe. The file is either
plain text, one prompt per line, or JSON Lines with an object per line; blank lines
are skipped. ``run_batch`` encodes each item, groups up to ``batch_size`` of them
into one padded forward (``core.weights.single.query_rows`` cuts each row back to its own
tokens, so a result does not depend on its neighbours) and yields one
:class:`Outcome` per line in input order. Before it yields a bad line it first runs
and yields every good line read before it, so a caller that stops at the first error
has written everything that came earlier. This module does not open files, does
not print and does not decide whether to stop: the CLI does.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from attnscope.core.common import attention_layers
from attnscope.core.prompt.spec import ChatSpec, QuerySpec, Selection, Text, one_of
from attnscope.core.prompt.tokens import Encoded, check_length, encode_prompt, pick_query
from attnscope.core.weights.single import query_rows, weights_result
from attnscope.errors import AttnscopeError
from attnscope.model import Loaded
from attnscope.results.common import PADDING_SIDES, PaddingSide, Query, ResultWarning
from attnscope.results.weights import WeightsResult, WeightsView

FORMATS = ("auto", "lines", "jsonl")
JSONL_KEYS = ("prompt", "query", "pos", "occurrence")


@dataclass(frozen=True)
class Item:
    """One prompt from the input; ``line`` is 1-based, as an editor shows it."""

    line: int
    prompt: str
    query: str | None = None
    pos: int | None = None
    occurrence: int | None = None


@dataclass(frozen=True)
class BadLine:
    line: int
    error: AttnscopeError


@dataclass(frozen=True)
class Outcome:
    """What became of one input line: a result, or the error that stopped it."""

    line: int
    result: WeightsResult | None = None
    error: AttnscopeError | None = None


def line_error(line: int, exc: AttnscopeError) -> AttnscopeError:
    """The same error with ``line N:`` in front (once)."""
    if exc.kind == "line" and exc.values.get("line") == line:
        return exc
    return AttnscopeError("line", line=line, message=exc)


def _bad(line: int, error: AttnscopeError) -> BadLine:
    return BadLine(line, AttnscopeError("line", line=line, message=error))


def _optional_int(obj: dict[str, object], key: str) -> int | None:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise AttnscopeError("line_int", name=f"'{key}'", value=json.dumps(value, ensure_ascii=False))
    return value


def parse_jsonl(line: int, text: str) -> Item | BadLine:
    """One JSON Lines record: an object with ``prompt`` and optional ``query``/``pos``/``occurrence``."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        return _bad(line, AttnscopeError("line_json", why=f"{exc.msg} at column {exc.colno}"))
    if not isinstance(obj, dict):
        return _bad(line, AttnscopeError("stats_line_object"))
    unknown = sorted(set(obj) - set(JSONL_KEYS))
    if unknown:
        return _bad(
            line, AttnscopeError("line_keys", keys=", ".join(map(repr, unknown)), allowed=", ".join(JSONL_KEYS))
        )
    prompt = obj.get("prompt")
    if not isinstance(prompt, str):
        return _bad(line, AttnscopeError("line_prompt"))
    query = obj.get("query")
    if query is not None and not isinstance(query, str):
        return _bad(line, AttnscopeError("line_string", name="'query'"))
    try:
        pos = _optional_int(obj, "pos")
        occurrence = _optional_int(obj, "occurrence")
    except AttnscopeError as exc:
        return _bad(line, exc)
    return Item(line=line, prompt=prompt, query=query, pos=pos, occurrence=occurrence)


def read_entries(lines: Iterable[bytes], fmt: str = "auto", name: str = "") -> Iterator[Item | BadLine]:
    """Items and bad lines, in order, from raw lines (each may end in ``\\n``).

    ``fmt``: ``lines`` (each line is a prompt), ``jsonl`` (each line a JSON object), or
    ``auto``: JSON Lines when ``name`` ends in ``.jsonl`` or the first non-blank line
    starts with ``{``, else plain lines. Blank lines are skipped; bytes that are not
    UTF-8 make that line bad, not the file.
    """
    if fmt not in FORMATS:
        raise AttnscopeError("use_choices", arg="input_format", value=repr(fmt), choices="auto, lines or jsonl")
    jsonl: bool | None = {"lines": False, "jsonl": True}.get(fmt)
    if jsonl is None and name.lower().endswith(".jsonl"):
        jsonl = True
    for number, raw in enumerate(lines, start=1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield _bad(number, AttnscopeError("line_utf8", n=exc.start + 1))
            continue
        text = text.removesuffix("\n").removesuffix("\r").removeprefix("\ufeff" if number == 1 else "")
        if not text.strip():
            continue
        if jsonl is None:
            jsonl = text.lstrip().startswith("{")
        yield parse_jsonl(number, text) if jsonl else Item(line=number, prompt=text)


@dataclass(frozen=True)
class _Ready:
    item: Item
    enc: Encoded
    query: Query
    warnings: list[ResultWarning]


def run_batch(
    loaded: Loaded,
    entries: Iterable[Item | BadLine],
    *,
    batch_size: int = 1,
    query: QuerySpec = None,
    selection: Selection | None = None,
    chat: ChatSpec | None = None,
    view: WeightsView | None = None,
    padding_side: PaddingSide = "left",
) -> Iterator[Outcome]:
    """One :class:`Outcome` per entry, in order, running up to ``batch_size`` prompts per forward.

    ``query`` is the default for items that give neither ``query`` nor ``pos``. Errors in the
    arguments themselves (``selection``, ``view``) raise before anything runs; an error in one
    line becomes that line's outcome. ``padding_side``: where each group's pads go.
    """
    if batch_size < 1:
        raise AttnscopeError("at_least_value", arg="batch_size", value=batch_size, k=1)
    side = one_of(padding_side, PADDING_SIDES, "padding_side")
    view = view or WeightsView()
    info = loaded.info
    selection = selection or Selection()
    layers = attention_layers(info, selection.layer_indices(info.num_hidden_layers))
    heads = selection.head_indices(info.num_attention_heads)
    from attnscope.capture import anatomy  # torch: only once a model is loaded

    max_positions = anatomy.of(loaded.model).max_positions
    pending: list[_Ready] = []

    def results(group: list[_Ready]) -> list[Outcome]:
        try:
            rows = query_rows(loaded, [r.enc for r in group], [r.query.index for r in group], layers, side)
        except AttnscopeError as exc:
            if len(group) == 1:
                return [Outcome(group[0].item.line, error=line_error(group[0].item.line, exc))]
            # A batch-wide error (NaN rows, say): run each alone to find the line that causes it.
            return [o for r in group for o in results([r])]
        out = []
        for r, row in zip(group, rows, strict=True):
            try:
                result = weights_result(loaded.info, r.enc, r.query, row, layers, heads, view, r.warnings)
            except AttnscopeError as exc:
                out.append(Outcome(r.item.line, error=line_error(r.item.line, exc)))
                continue
            out.append(Outcome(r.item.line, result=result))
        return out

    def flush() -> list[Outcome]:
        group = pending[:]
        pending.clear()
        return results(group) if group else []

    for entry in entries:
        if isinstance(entry, BadLine):
            yield from flush()
            yield Outcome(entry.line, error=entry.error)
            continue
        try:
            ready = _prepare(entry, loaded, max_positions, query, chat)
        except AttnscopeError as exc:
            yield from flush()
            yield Outcome(entry.line, error=line_error(entry.line, exc))
            continue
        pending.append(ready)
        if len(pending) >= batch_size:
            yield from flush()
    yield from flush()


def _prepare(
    item: Item,
    loaded: Loaded,
    max_positions: int | None,
    query: QuerySpec,
    chat: ChatSpec | None,
) -> _Ready:
    if item.query is not None and item.pos is not None:
        raise AttnscopeError("line_query_pos")
    if item.query is not None:
        query = Text(item.query, item.occurrence)
    elif item.pos is not None:
        query = item.pos
    if item.occurrence is not None and item.query is None:
        raise AttnscopeError("line_needs")
    enc = encode_prompt(loaded.tokenizer, item.prompt, chat)
    check_length(len(enc.ids), max_positions)
    warnings: list[ResultWarning] = []
    q = pick_query(enc, query, warnings)
    return _Ready(item=item, enc=enc, query=q, warnings=warnings)
