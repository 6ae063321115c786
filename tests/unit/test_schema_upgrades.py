"""Every schema version ever shipped is read: tests/data/schemas holds one document per version,
written by the code of that version, and each is upgraded step by step, rebuilt and drawn."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from attnscope.render import Ctx, to_text, view
from attnscope.results import from_json, result_types
from attnscope.results.upgrade import STEPS, asked_word, mask_kinds_1, next_schema, upgrade

DATA = Path(__file__).resolve().parents[1] / "data" / "schemas"
FIXTURES = sorted(DATA.glob("*.json"))


def _load(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    return doc


def _version(schema: str) -> tuple[str, int]:
    name, _, n = schema.rpartition("/")
    return name, int(n)


def test_a_fixture_for_every_version_and_a_step_for_every_old_one():
    written = {json.loads(p.read_text(encoding="utf-8"))["schema"] for p in FIXTURES}
    shipped = set()
    for schema in result_types():
        name, current = _version(schema)
        shipped |= {f"{name}/{n}" for n in range(1, current + 1)}
        assert {f"{name}/{n}" for n in range(1, current)} <= set(STEPS), schema
    assert written == shipped
    assert set(STEPS) == shipped - set(result_types())  # no step for a current or an unknown version
    for path in FIXTURES:  # the file is named after its command and version
        name, n = _version(json.loads(path.read_text(encoding="utf-8"))["schema"])
        assert re.fullmatch(rf"{name.removeprefix('attnscope.')}-{n}(-[a-z]+)?", path.stem)


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_each_step_writes_the_next_version(path):
    doc = json.loads(path.read_text(encoding="utf-8"))
    while doc["schema"] in STEPS:
        name, n = _version(doc["schema"])
        doc = STEPS[doc["schema"]](copy.deepcopy(doc))
        assert doc["schema"] == f"{name}/{n + 1}"


def test_upgrade_refuses_a_step_that_skips_a_version(monkeypatch):
    monkeypatch.setitem(STEPS, "attnscope.trace/1", lambda doc: {**doc, "schema": "attnscope.trace/3"})
    with pytest.raises(ValueError, match="trace/1 wrote 'attnscope.trace/3', not 'attnscope.trace/2'"):
        upgrade(_load("trace-1"))
    assert next_schema("attnscope.weights/9") == "attnscope.weights/10"


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_every_version_is_read_as_the_current_one_and_drawn(cli, path):
    old = json.loads(path.read_text(encoding="utf-8"))
    types = {_version(s)[0]: cls for s, cls in result_types().items()}
    cls = types[_version(old["schema"])[0]]
    doc = upgrade(old)
    assert doc["schema"] == cls.SCHEMA
    result = from_json(old)
    assert type(result) is cls
    assert from_json(result.to_json()) == result
    views = {}
    for lang in ("en", "ko"):
        views[lang] = to_text(view(result, Ctx(lang=lang, width=100)), width=100)
        assert views[lang].strip()
        res = cli("render", str(path), "--lang", lang, "--width", "100")
        assert res.exit_code == 0, res.stderr
        assert res.stdout.strip() and "Traceback" not in res.stderr
    assert views["en"] != views["ko"]


def test_version_1_sentences_are_written_again_by_the_view(cli):
    # A /1 document held sentences; they are dropped, and the view says the same from the facts.
    for name in ("weights-1", "heads-1", "matrix-1", "mask-1"):
        res = cli("render", str(DATA / f"{name}.json"), "--width", "120")
        assert res.exit_code == 0, res.stderr
        notes = _load(name)["notes"]
        assert notes and "notes" not in upgrade(_load(name))
        for note in notes:
            assert note.split(":")[0] in res.stdout, (name, note)


def test_weights_1_words_cut_by_the_query_are_partial():
    old = _load("weights-1")
    cut = [b["label"] for b in old["chart"]["bars"] if b["label"].endswith(" (to the query)")]
    assert cut == ["그것을 (to the query)"]
    new = from_json(old)
    bars = [b for b in new.chart.bars if b.partial]  # type: ignore[attr-defined]
    assert [b.label for b in bars] == ["그것을"]
    assert all(not k.endswith(" (to the query)") for k in new.strip.keys)  # type: ignore[attr-defined]


def test_weights_2_tokens_become_one_prompt_segment():
    old = _load("weights-2")
    new = from_json(old)
    assert [(s.kind, s.tokens) for s in new.segments] == [("prompt", list(range(len(old["tokens"]))))]  # type: ignore[attr-defined]
    assert new.template is None  # type: ignore[attr-defined]
    bars = [(b.label, b.weight) for b in new.chart.bars]  # type: ignore[attr-defined]
    assert bars == [(b["label"], b["weight"]) for b in old["chart"]["bars"]]


def test_heads_1_spans_become_objects():
    old = _load("heads-1")
    new = from_json(old)
    assert new.query.span == old["query"] and new.query.text == old["query_text"]  # type: ignore[attr-defined]
    assert new.query.index == old["query"][-1]  # type: ignore[attr-defined]
    assert new.key.span == old["key"] and new.key.text == old["key_text"]  # type: ignore[attr-defined]


def test_matrix_1_asked_for_words_from_its_note():
    old = _load("matrix-1")
    assert asked_word(old["notes"]) and not asked_word(_load("heads-1")["notes"])
    assert from_json(old).by == "word"  # type: ignore[attr-defined]


def test_mask_1_kinds_from_the_sentences_the_old_code_wrote():
    padded, unpadded = _load("mask-1"), _load("mask-1-nopad")
    n = len(padded["sequences"][0]["tokens"])
    assert mask_kinds_1(padded["model_mask_kind"]) == [{"kind": "bool", "dtype": None, "shape": [2, 1, n, n]}]
    assert mask_kinds_1(unpadded["model_mask_kind"]) == [{"kind": "none", "dtype": None, "shape": []}]
    assert mask_kinds_1("a float mask, somehow") == []  # a form no old file shows: the default, unknown
    kinds = from_json(padded).mask_kinds  # type: ignore[attr-defined]
    assert [(k.kind, k.shape) for k in kinds] == [("bool", [2, 1, n, n])]


def test_info_1_facts_from_the_sentences_the_old_code_wrote():
    gguf = from_json(_load("info-1-gguf"))
    assert gguf.read_from == "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"  # type: ignore[attr-defined]
    assert (gguf.gguf_metadata_keys, gguf.gguf_tensors) == (26, 291)  # type: ignore[attr-defined]
    assert gguf.num_parameters_from == "gguf_tensors"  # type: ignore[attr-defined]
    assert gguf.separate_output_weight == 136_134_656  # type: ignore[attr-defined]
    folder = from_json(_load("info-1"))
    assert folder.num_parameters_from == "config" and folder.gguf_tensors is None  # type: ignore[attr-defined]
    assert folder.separate_output_weight is None and folder.tokenizer_unread is False  # type: ignore[attr-defined]
    assert from_json({**_load("info-1"), "num_parameters": None}).num_parameters_from == "none"  # type: ignore[attr-defined]


def test_trace_rows_lose_their_stage_word():
    old = _load("trace-2")
    assert all("stage" in row for row in old["rows"])
    assert all("stage" not in row for row in upgrade(old)["rows"])
    assert all("stage" not in row for row in upgrade(_load("trace-1"))["rows"])
