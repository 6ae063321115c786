"""Older documents read as current ones: one step per shipped schema version.

``STEPS["attnscope.NAME/n"]`` turns a document of version n into one of version n + 1 and writes
exactly ``attnscope.NAME/{n+1}`` as its schema, never the result class's current one, so a later
bump adds one step at the end of the chain. ``upgrade`` applies the steps until no step is left.

Sentences the old documents held are dropped (the views write them again from the facts). A step
reads an old sentence only in the forms that a fixture under ``tests/data/schemas`` shows the old
code wrote; any other form gives the field's default. This module computes nothing and never prints.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

Step = Callable[[dict[str, Any]], dict[str, Any]]


def next_schema(schema: str) -> str:
    """``attnscope.NAME/n`` -> ``attnscope.NAME/{n+1}``."""
    name, _, version = schema.rpartition("/")
    return f"{name}/{int(version) + 1}"


def _without(doc: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k not in keys}


def _one_prompt_segment(doc: dict[str, Any]) -> dict[str, Any]:
    """Every token in one "prompt" segment (a chat prompt's segments are unknown), and no template facts."""
    tokens = doc.get("tokens") or []
    everything = {"index": 0, "kind": "prompt", "tokens": [t.get("index", i) for i, t in enumerate(tokens)]}
    return {**doc, "segments": [everything], "template": None}


def _tokens_1(doc: dict[str, Any]) -> dict[str, Any]:
    """tokens/1 had no segments."""
    return {**_one_prompt_segment(doc), "schema": "attnscope.tokens/2"}


PARTIAL = " (to the query)"  # weights/1 marked a word cut by the query with this label suffix


def _weights_1(doc: dict[str, Any]) -> dict[str, Any]:
    """weights/1 held notes and warning sentences, and marked a partial word in its label."""
    doc = _without(doc, "notes", "warnings")
    for chart in [doc.get("chart", {}), *doc.get("per_head", [])]:
        for bar in chart.get("bars", []):
            if bar.get("label", "").endswith(PARTIAL):
                bar["label"] = bar["label"].removesuffix(PARTIAL)
                bar["partial"] = True
    strip = doc.get("strip", {})
    strip["keys"] = [k.removesuffix(PARTIAL) for k in strip.get("keys", [])]
    return {**doc, "schema": "attnscope.weights/2"}


def _weights_2(doc: dict[str, Any]) -> dict[str, Any]:
    """weights/2 had no segments."""
    return {**_one_prompt_segment(doc), "schema": "attnscope.weights/3"}


def _heads_1(doc: dict[str, Any]) -> dict[str, Any]:
    """heads/1 gave the query and key as spans beside their texts; /2 makes them objects."""
    q_span, k_span = doc.get("query") or [0], doc.get("key") or [0]
    query = {"index": q_span[-1], "text": doc.get("query_text", ""), "span": q_span}
    key = {"text": doc.get("key_text", ""), "span": k_span}
    doc = _without(doc, "notes", "warnings", "query_text", "key_text")
    return {**doc, "query": query, "key": key, "schema": "attnscope.heads/2"}


def asked_word(notes: list[Any]) -> bool:
    """matrix/1 said ``--by word: ...`` in a note when words were asked for, drawn by word or in blocks."""
    return any(str(n).startswith("--by word:") for n in notes)


def _matrix_1(doc: dict[str, Any]) -> dict[str, Any]:
    """matrix/1 kept only what was drawn; /2 also says what was asked for (``by``)."""
    drawn = (doc.get("view") or {}).get("by", "token")
    by = "word" if drawn == "word" or asked_word(doc.get("notes") or []) else "token"
    return {**_without(doc, "notes", "warnings"), "by": by, "schema": "attnscope.matrix/2"}


_BOOL_MASK = re.compile(r"a bool mask of shape \(([\d, ]*)\)")
_NO_MASK = "no mask (sdpa is_causal: pure causal)"


def mask_kinds_1(text: str) -> list[dict[str, Any]]:
    """mask/1's ``model_mask_kind`` sentence ("; "-joined) as mask kinds; [] when a part has another form."""
    kinds: list[dict[str, Any]] = []
    for part in text.split("; ") if text else []:
        shape = _BOOL_MASK.fullmatch(part)
        if part == _NO_MASK:
            kinds.append({"kind": "none", "dtype": None, "shape": []})
        elif shape:
            kinds.append({"kind": "bool", "dtype": None, "shape": [int(d) for d in re.findall(r"\d+", shape[1])]})
        else:
            return []
    return kinds


def _mask_1(doc: dict[str, Any]) -> dict[str, Any]:
    """mask/1 held its legend, titles and remarks as sentences, and the mask kinds as one sentence."""
    kinds = mask_kinds_1(doc.get("model_mask_kind") or "")
    doc = _without(doc, "legend", "causal_title", "pad_remark", "notes", "warnings", "model_mask_kind")
    doc["sequences"] = [_without(seq, "title") for seq in doc.get("sequences", [])]
    return {**doc, "mask_kinds": kinds, "schema": "attnscope.mask/2"}


_GGUF_HEADER = re.compile(r" \(GGUF header: (\d+) metadata keys, (\d+) tensors\)$")
_OUTPUT_WEIGHT = re.compile(r"the count includes output\.weight \(([\d,]+)\), stored apart")


def _info_1(doc: dict[str, Any]) -> dict[str, Any]:
    """info/1 said in sentences where the count came from, the GGUF header's counts and a separate
    output.weight; /2 holds them as fields. Why a count failed and an unread tokenizer were only
    sentences; they take their defaults (null, false)."""
    read_from = str(doc.get("read_from", ""))
    header = _GGUF_HEADER.search(read_from)
    output = next(filter(None, (_OUTPUT_WEIGHT.match(str(n)) for n in doc.get("notes") or [])), None)
    if doc.get("num_parameters") is None:
        source = "none"
    else:
        source = "gguf_tensors" if doc.get("source") == "gguf" else "config"
    return {
        **_without(doc, "notes", "warnings"),
        "read_from": read_from[: header.start()] if header else read_from,
        "num_parameters_from": source,
        "gguf_metadata_keys": int(header[1]) if header else None,
        "gguf_tensors": int(header[2]) if header else None,
        "separate_output_weight": int(output[1].replace(",", "")) if output else None,
        "schema": "attnscope.info/2",
    }


def _drop_words(schema: str) -> Step:
    """A step that drops ``lang``, ``notes`` and the warning sentences, and writes ``schema``."""

    def step(doc: dict[str, Any]) -> dict[str, Any]:
        return {**_without(doc, "lang", "notes", "warnings"), "schema": schema}

    step.__doc__ = f"-> {schema}: lang, notes and the warning sentences go."
    return step


def _trace_2(doc: dict[str, Any]) -> dict[str, Any]:
    """trace/2 rows had a ``stage`` word ("layer 1" for the output of layer 0); ``layer`` says it."""
    rows = [_without(row, "stage") for row in doc.get("rows") or []]
    compare = doc.get("compare")
    if isinstance(compare, dict):
        compare = {**compare, "rows": [_without(r, "stage") for r in compare.get("rows") or []]}
    return {**doc, "rows": rows, "compare": compare, "schema": "attnscope.trace/3"}


def _explain_2(doc: dict[str, Any]) -> dict[str, Any]:
    """explain/2 came from layers without q_norm/k_norm (it refused them)."""
    return {**doc, "qk_norm": False, "schema": "attnscope.explain/3"}


def _rope_2(doc: dict[str, Any]) -> dict[str, Any]:
    """rope/2 ran only where one RoPE served every layer (it refused per-type bases) and without
    q_norm/k_norm: one base for all the model's layers."""
    model = doc.get("model") or {}
    kinds = model.get("layer_kinds") or ["full"] * int(model.get("num_hidden_layers") or 0)
    by_type: dict[str, list[int]] = {}
    for i, kind in enumerate(kinds):
        if kind != "linear":
            by_type.setdefault(f"{kind}_attention", []).append(i)
    theta, rope_type = doc.get("rope_theta"), doc.get("rope_type")
    bases = [{"layer_type": t, "rope_theta": theta, "rope_type": rope_type, "layers": ls} for t, ls in by_type.items()]
    out: dict[str, Any] = {}
    for key, value in doc.items():
        out[key] = value
        if key == "rope_type":
            out["bases"] = bases
        if key == "v_check":
            out["qk_norm"] = False
    out["schema"] = "attnscope.rope/3"
    return out


STEPS: dict[str, Step] = {
    "attnscope.tokens/1": _tokens_1,
    "attnscope.weights/1": _weights_1,
    "attnscope.weights/2": _weights_2,
    "attnscope.heads/1": _heads_1,
    "attnscope.matrix/1": _matrix_1,
    "attnscope.explain/1": _drop_words("attnscope.explain/2"),
    "attnscope.explain/2": _explain_2,
    "attnscope.mask/1": _mask_1,
    "attnscope.info/1": _info_1,
    "attnscope.trace/1": _drop_words("attnscope.trace/2"),
    "attnscope.trace/2": _trace_2,
    "attnscope.rope/1": _drop_words("attnscope.rope/2"),
    "attnscope.rope/2": _rope_2,
    "attnscope.reuse/1": _drop_words("attnscope.reuse/2"),
}


def upgrade(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` rewritten step by step to the newest version of its schema (unchanged when no step reads it)."""
    while isinstance(doc.get("schema"), str) and doc["schema"] in STEPS:
        schema = doc["schema"]
        doc = STEPS[schema](copy.deepcopy(doc))
        if doc.get("schema") != next_schema(schema):
            raise ValueError(f"the upgrade step for {schema} wrote {doc.get('schema')!r}, not {next_schema(schema)!r}")
    return doc
