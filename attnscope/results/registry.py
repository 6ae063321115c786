"""The table of result types: every schema attnscope writes or reads, imported by name.

Adding a command's result means adding its class here; ``from_json`` and the JSON
reference read this table. This module computes nothing.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

from attnscope.results import Result
from attnscope.results.explain import ExplainResult
from attnscope.results.generate import GenerateResult
from attnscope.results.heads import HeadsResult
from attnscope.results.info import InfoResult
from attnscope.results.mask import MaskResult
from attnscope.results.matrix import MatrixResult
from attnscope.results.reuse import ReuseResult
from attnscope.results.roles import RolesResult
from attnscope.results.rope import RopeResult
from attnscope.results.tokens import TokensResult
from attnscope.results.trace import TraceResult
from attnscope.results.weights import WeightsResult

RESULT_TYPES: tuple[type[Result], ...] = (
    TokensResult,
    WeightsResult,
    MaskResult,
    HeadsResult,
    MatrixResult,
    InfoResult,
    TraceResult,
    ExplainResult,
    RopeResult,
    ReuseResult,
    RolesResult,
    GenerateResult,
)


# --- older documents ------------------------------------------------------------------
# Each function turns one older schema's document into the next one's; ``upgrade`` applies
# them until the document is current. Sentences the old documents held are dropped: the
# views write them again from the facts.


def _weights_1(doc: dict[str, Any]) -> dict[str, Any]:
    doc = {k: v for k, v in doc.items() if k not in ("notes", "warnings")}
    for chart in [doc.get("chart", {}), *doc.get("per_head", [])]:
        for bar in chart.get("bars", []):
            if bar.get("label", "").endswith(" (to the query)"):
                bar["label"] = bar["label"].removesuffix(" (to the query)")
                bar["partial"] = True
    strip = doc.get("strip", {})
    strip["keys"] = [k.removesuffix(" (to the query)") for k in strip.get("keys", [])]
    return {**doc, "schema": "attnscope.weights/2"}


def _weights_2(doc: dict[str, Any]) -> dict[str, Any]:
    """weights/2 had no segments: every token goes into one "prompt" segment (a chat prompt's are
    unknown, as for tokens/1), and no chat template facts."""
    tokens = doc.get("tokens") or []
    everything = {"index": 0, "kind": "prompt", "tokens": [t.get("index", i) for i, t in enumerate(tokens)]}
    return {**doc, "segments": [everything], "template": None, "schema": WeightsResult.SCHEMA}


def _heads_1(doc: dict[str, Any]) -> dict[str, Any]:
    q_span, k_span = doc.get("query") or [0], doc.get("key") or [0]
    query = {"index": q_span[-1], "text": doc.get("query_text", ""), "span": q_span}
    key = {"text": doc.get("key_text", ""), "span": k_span}
    doc = {k: v for k, v in doc.items() if k not in ("notes", "warnings", "query_text", "key_text")}
    return {**doc, "query": query, "key": key, "schema": HeadsResult.SCHEMA}


def _matrix_1(doc: dict[str, Any]) -> dict[str, Any]:
    notes = doc.get("notes") or []
    drawn = (doc.get("view") or {}).get("by", "token")
    asked = "word" if drawn == "word" or any(str(n).startswith("--by word") for n in notes) else "token"
    doc = {k: v for k, v in doc.items() if k not in ("notes", "warnings")}
    return {**doc, "by": asked, "schema": MatrixResult.SCHEMA}


def _mask_kinds_1(text: str) -> list[dict[str, Any]]:
    kinds: list[dict[str, Any]] = []
    for part in text.split("; ") if text else []:
        shape = [int(d) for d in re.findall(r"\d+", part.rsplit("shape", 1)[-1])] if "shape" in part else []
        if part.startswith("no mask"):
            kinds.append({"kind": "none", "dtype": None, "shape": []})
        elif "bool" in part:
            kinds.append({"kind": "bool", "dtype": None, "shape": shape})
        else:
            dtype = re.search(r"additive (\w+)", part)
            kinds.append({"kind": "additive", "dtype": dtype.group(1) if dtype else None, "shape": shape})
    return kinds


def _mask_1(doc: dict[str, Any]) -> dict[str, Any]:
    kinds = _mask_kinds_1(doc.get("model_mask_kind") or "")
    dropped = ("legend", "causal_title", "pad_remark", "notes", "warnings", "model_mask_kind")
    doc = {k: v for k, v in doc.items() if k not in dropped}
    doc["sequences"] = [{k: v for k, v in seq.items() if k != "title"} for seq in doc.get("sequences", [])]
    return {**doc, "mask_kinds": kinds, "schema": MaskResult.SCHEMA}


def _info_1(doc: dict[str, Any]) -> dict[str, Any]:
    notes = [str(n) for n in doc.get("notes") or []]
    read_from = str(doc.get("read_from", ""))
    header = re.search(r" \(GGUF header: (\d+) metadata keys, (\d+) tensors\)$", read_from)
    made = str(doc.get("num_parameters_from", ""))
    source = (
        "gguf_tensors" if made.startswith("the shapes of") else "none" if made.startswith("not computed") else "config"
    )
    error = re.search(r"not computed \((\w+)\)", made)
    output = next((re.search(r"output\.weight \(([\d,]+)\)", n) for n in notes if "output.weight" in n), None)
    doc = {k: v for k, v in doc.items() if k not in ("notes", "warnings")}
    return {
        **doc,
        "read_from": read_from[: header.start()] if header else read_from,
        "num_parameters_from": source,
        "num_parameters_error": error.group(1) if error else None,
        "gguf_metadata_keys": int(header.group(1)) if header else None,
        "gguf_tensors": int(header.group(2)) if header else None,
        "separate_output_weight": int(output.group(1).replace(",", "")) if output else None,
        "tokenizer_unread": any("tokenizer files could not be read" in n for n in notes),
        "schema": InfoResult.SCHEMA,
    }


def _drop_words(schema: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """trace, rope, reuse /1 -> /2: only ``lang``, ``notes`` and the warning sentences go."""

    def up(doc: dict[str, Any]) -> dict[str, Any]:
        return {**{k: v for k, v in doc.items() if k not in ("lang", "notes", "warnings")}, "schema": schema}

    return up


def _trace_2(doc: dict[str, Any]) -> dict[str, Any]:
    """trace/2 rows had a ``stage`` word ("layer 1" for the output of layer 0); ``layer`` says it."""
    rows = [{k: v for k, v in row.items() if k != "stage"} for row in doc.get("rows") or []]
    compare = doc.get("compare")
    if isinstance(compare, dict):
        compare = {**compare, "rows": [{k: v for k, v in r.items() if k != "stage"} for r in compare.get("rows") or []]}
    return {**doc, "rows": rows, "compare": compare, "schema": TraceResult.SCHEMA}


def _tokens_1(doc: dict[str, Any]) -> dict[str, Any]:
    """tokens/1 had no segments: every token goes into one segment (a chat prompt's are unknown)."""
    tokens = doc.get("tokens") or []
    everything = {"index": 0, "kind": "prompt", "tokens": [t.get("index", i) for i, t in enumerate(tokens)]}
    return {**doc, "segments": [everything], "template": None, "schema": TokensResult.SCHEMA}


_UPGRADES: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "attnscope.tokens/1": _tokens_1,
    "attnscope.weights/1": _weights_1,
    "attnscope.weights/2": _weights_2,
    "attnscope.heads/1": _heads_1,
    "attnscope.matrix/1": _matrix_1,
    "attnscope.mask/1": _mask_1,
    "attnscope.info/1": _info_1,
    "attnscope.trace/1": _drop_words("attnscope.trace/2"),
    "attnscope.trace/2": _trace_2,
    "attnscope.rope/1": _drop_words(RopeResult.SCHEMA),
    "attnscope.reuse/1": _drop_words(ReuseResult.SCHEMA),
}


def upgrade(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` rewritten to the current version of its schema (unchanged when it is current or unknown)."""
    seen = set()
    while isinstance(doc.get("schema"), str) and doc["schema"] in _UPGRADES and doc["schema"] not in seen:
        seen.add(doc["schema"])
        doc = _UPGRADES[doc["schema"]](copy.deepcopy(doc))
    return doc
