"""``--arrays``: a result's arrays in a safetensors or npz file, the JSON holding references to them.

Every saved document whose result type declares arrays is written in the reference form and read
back (``from_json``, ``load_arrays``, ``inline``); what comes back must be the inline document
exactly, in both formats, and ``attnscope render`` must draw the pair as it draws the inline
document. No model and no torch: the documents are the saved ones under tests/data/schemas.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import attnscope
from attnscope.commands import COMMANDS, resolve
from attnscope.errors import AttnscopeError
from attnscope.results import from_json
from attnscope.results.arrays import ArraySink, inline, move_out, places, save_arrays, write_arrays

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "tests" / "data" / "schemas"
# The newest saved document of every result type that declares arrays.
WITH_ARRAYS = [
    "weights-3.json",
    "matrix-2.json",
    "generate-1.json",
    "ablate-1.json",
    "patch-1.json",
    "roles-1.json",
    "stats-1.json",
]
FORMATS = ["safetensors", "npz"]


def _inline_doc(name: str) -> dict[str, Any]:
    return from_json(json.loads((SCHEMAS / name).read_text(encoding="utf-8"))).to_json()


def _pair(tmp_path: Path, name: str, fmt: str) -> tuple[dict[str, Any], Path, Path]:
    """The inline document, and the JSON file and arrays file of its reference form in ``tmp_path``."""
    inline_doc = _inline_doc(name)
    arrays = tmp_path / f"rows.{fmt}"
    doc = write_arrays(from_json(inline_doc), arrays)
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return inline_doc, path, arrays


def test_every_result_type_with_arrays_has_a_document_here() -> None:
    declared = {row.name for row in COMMANDS if row.result and resolve(row.result).ARRAYS}
    assert declared == {name.split("-")[0] for name in WITH_ARRAYS}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", WITH_ARRAYS)
def test_reference_form_reads_back_as_the_inline_document_exactly(tmp_path: Path, name: str, fmt: str) -> None:
    inline_doc, path, arrays = _pair(tmp_path, name, fmt)
    doc = json.loads(path.read_text(encoding="utf-8"))
    head = doc["arrays"]
    assert head["schema"] == "attnscope.arrays/1" and head["format"] == fmt and head["file"] == arrays.name
    assert list(doc)[:3] == ["schema", "attnscope_version", "arrays"]
    assert doc["schema"] == inline_doc["schema"]
    assert head["keys"], "a result with arrays moved none"
    assert len(path.read_bytes()) < len(json.dumps(inline_doc, ensure_ascii=False).encode())
    # Exactly: the same JSON text, float for float.
    again = from_json(doc, tmp_path).to_json()
    assert json.dumps(again, ensure_ascii=False) == json.dumps(inline_doc, ensure_ascii=False)
    assert json.dumps(inline(doc, tmp_path), ensure_ascii=False) == json.dumps(inline_doc, ensure_ascii=False)
    # load_arrays: every key, from the JSON file's own folder, equal to the inline values.
    loaded = attnscope.load_arrays(path)
    assert list(loaded) == head["keys"]
    for key, array in loaded.items():
        value = _at(inline_doc, key)
        assert np.array_equal(array, np.asarray(value), equal_nan=True), key
        assert array.dtype in (np.float32, np.float64, np.int64)


def _at(doc: Any, key: str) -> Any:
    """The value a key names in an inline document (keys are paths with indices)."""
    for part in key.split("."):
        doc = doc[int(part)] if isinstance(doc, list) else doc[part]
    return doc


def test_captured_rows_are_stored_as_float32_and_anything_wider_as_float64() -> None:
    sink = ArraySink("x.safetensors", "safetensors")
    assert sink.put("rows", [[0.25, 1.0 / 3.0]])["dtype"] == "float64"  # 1/3 is no float32
    assert sink.put("f32", [[0.25, float(np.float32(1.0 / 3.0))]])["dtype"] == "float32"
    assert sink.put("ids", [[1, 2], [3, 4]]) == {"array": "ids", "dtype": "int64", "shape": [2, 2]}
    assert sink.put("none", None) is None and sink.put("empty", []) == []
    assert list(sink.arrays) == ["rows", "f32", "ids"]


def test_paths_name_list_items_object_entries_and_nested_fields() -> None:
    doc = {"steps": [{"w": [1.0]}, {"w": [2.0]}], "stats": {"sink": {"mean": [0.5]}}, "scores": {"a": [1]}, "x": None}
    keys = [
        key for path in ("steps[].w", "stats{}.mean", "scores.a", "x", "absent[].w") for _, _, key in places(doc, path)
    ]
    assert keys == ["steps.0.w", "steps.1.w", "stats.sink.mean", "scores.a"]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", ["generate-1.json", "weights-3.json"])
def test_render_draws_the_pair_as_it_draws_the_inline_document(cli: Any, tmp_path: Path, name: str, fmt: str) -> None:
    inline_doc, path, arrays = _pair(tmp_path, name, fmt)
    plain = tmp_path / "inline.json"
    plain.write_text(json.dumps(inline_doc, ensure_ascii=False), encoding="utf-8")
    want = cli("render", str(plain))
    assert want.exit_code == 0, want.stderr
    for target in (path, arrays):  # the JSON document, or the arrays file alone (it holds the document)
        got = cli("render", str(target))
        assert got.exit_code == 0, got.stderr
        assert got.stdout == want.stdout
    assert json.loads(cli("render", str(path), "--json").stdout) == inline_doc


def test_a_moved_pair_still_renders_and_the_name_is_relative_to_the_document(cli: Any, tmp_path: Path) -> None:
    _, path, arrays = _pair(tmp_path, "matrix-2.json", "npz")
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    path.rename(moved / path.name)
    arrays.rename(moved / arrays.name)
    assert cli("render", str(moved / path.name)).exit_code == 0


def test_render_writes_the_pair_and_names_the_file_from_the_json_files_folder(tmp_path: Path) -> None:
    """``> out/doc.json`` with ``--arrays out/rows.safetensors``: the document says ``rows.safetensors``."""
    inline_doc = _inline_doc("weights-3.json")
    (tmp_path / "in.json").write_text(json.dumps(inline_doc, ensure_ascii=False), encoding="utf-8")
    (tmp_path / "out").mkdir()
    shell = f"{sys.executable} -m attnscope render in.json --json --arrays out/rows.safetensors > out/doc.json"
    done = subprocess.run(shell, shell=True, cwd=tmp_path, capture_output=True, text=True, env=_env())
    assert done.returncode == 0, done.stderr
    doc = json.loads((tmp_path / "out" / "doc.json").read_text(encoding="utf-8"))
    assert doc["arrays"]["file"] == "rows.safetensors"
    assert json.dumps(from_json(doc, tmp_path / "out").to_json(), ensure_ascii=False) == json.dumps(
        inline_doc, ensure_ascii=False
    )
    piped = subprocess.run(
        [sys.executable, "-m", "attnscope", "render", "in.json", "--json", "--arrays", "out/piped.npz"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=_env(),
    )
    assert json.loads(piped.stdout)["arrays"]["file"] == "out/piped.npz"  # a pipe: relative to the current folder


def _env() -> dict[str, str]:
    import os

    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _one_error(result: Any) -> str:
    assert result.exit_code != 0
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("attnscope: error: ")
    return lines[0]


def test_bad_arrays_options_get_one_line_and_write_nothing(cli: Any, tmp_path: Path) -> None:
    doc = tmp_path / "in.json"
    doc.write_text(json.dumps(_inline_doc("weights-3.json"), ensure_ascii=False), encoding="utf-8")
    assert "use a .safetensors or .npz file name" in _one_error(cli("render", str(doc), "--arrays", "x.h5"))
    assert "no such folder" in _one_error(cli("render", str(doc), "--arrays", str(tmp_path / "no" / "x.npz")))
    (tmp_path / "d.npz").mkdir()
    assert "it is a folder" in _one_error(cli("render", str(doc), "--arrays", str(tmp_path / "d.npz")))
    tokens = tmp_path / "tokens.json"
    tokens.write_text((SCHEMAS / "tokens-2.json").read_text(encoding="utf-8"), encoding="utf-8")
    line = _one_error(cli("render", str(tokens), "--arrays", str(tmp_path / "t.npz")))
    assert "holds no arrays" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.npz", "in.json", "tokens.json"]


def test_a_failed_write_leaves_no_file_and_prints_nothing(cli: Any, tmp_path: Path, monkeypatch: Any) -> None:
    import safetensors.numpy

    doc = tmp_path / "in.json"
    doc.write_text(json.dumps(_inline_doc("generate-1.json"), ensure_ascii=False), encoding="utf-8")

    def broken(*args: Any, **kwargs: Any) -> bytes:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(safetensors.numpy, "save", broken)
    out = tmp_path / "rows.safetensors"
    assert "No space left on device" in _one_error(cli("render", str(doc), "--json", "--arrays", str(out)))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.json"]  # neither the file nor a temporary one


def test_a_missing_file_or_key_is_one_clear_line(cli: Any, tmp_path: Path) -> None:
    _, path, arrays = _pair(tmp_path, "generate-1.json", "safetensors")
    from safetensors.numpy import load_file, save_file

    stored = load_file(str(arrays))
    gone = next(iter(stored))
    save_file({k: v for k, v in stored.items() if k != gone}, str(arrays))
    line = _one_error(cli("render", str(path)))
    assert f"no array '{gone}'" in line and str(path) in line
    arrays.unlink()
    line = _one_error(cli("render", str(path)))
    assert "no such arrays file" in line and "rows.safetensors" in line
    with pytest.raises(AttnscopeError, match="no such arrays file"):
        attnscope.load_arrays(path)


def test_a_reshaped_array_or_an_unknown_header_is_refused(cli: Any, tmp_path: Path) -> None:
    _, path, arrays = _pair(tmp_path, "ablate-1.json", "npz")
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["effects"]["shape"] = [1, 1]
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert "has shape" in _one_error(cli("render", str(path)))
    doc["arrays"]["schema"] = "attnscope.arrays/9"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert "attnscope.arrays/1" in _one_error(cli("render", str(path)))
    arrays.write_bytes(b"not a zip")
    assert "not a readable npz file" in _one_error(cli("render", str(arrays)))


def test_python_api_writes_and_reads_the_pair(tmp_path: Path) -> None:
    result = from_json(_inline_doc("roles-1.json"))
    doc = attnscope.write_arrays(result, tmp_path / "roles.safetensors")
    assert doc["arrays"]["file"] == "roles.safetensors"
    assert doc["scores"]["sink"] == {"array": "scores.sink", "dtype": "float32", "shape": [2, 4]}
    rows = attnscope.load_arrays(doc, tmp_path)
    assert rows["scores.sink"].tolist() == result.scores.sink


def test_every_command_whose_result_declares_arrays_takes_the_option() -> None:
    """A result class with ``ARRAYS`` needs its command's ``out: ArrayOutput`` (and the reverse)."""
    import inspect

    for row in COMMANDS:
        if row.result is None:
            continue
        cls = resolve(row.result)
        takes = "arrays" in inspect.signature(resolve(row.cli)).parameters
        assert takes == bool(cls.ARRAYS), f"{row.name}: ARRAYS and --arrays disagree"
        assert "arrays" not in {f.name for f in dataclasses.fields(cls)}, "the top-level name arrays is the header's"


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_grid_with_nulls_reads_back_with_its_nulls(tmp_path: Path, fmt: str) -> None:
    """A grid may hold null where a head has no value (a statistic no position counted for)."""
    doc: dict[str, Any] = {"schema": "x", "g": [[0.5, None], [None, 1.0 / 3.0]], "n": [[1, 2]], "nan": [float("nan")]}
    want = json.dumps(doc)
    sink = ArraySink(f"g.{fmt}", fmt)  # type: ignore[arg-type]
    move_out(doc, ("g", "n", "nan"), sink)
    doc["arrays"] = sink.header()
    save_arrays(tmp_path / f"g.{fmt}", sink, doc)
    assert doc["g"] == {"array": "g", "dtype": "float64", "shape": [2, 2], "nulls": "g.nulls"}
    assert "nulls" not in doc["n"] and "nulls" not in doc["nan"]  # a NaN is a value, not a null
    assert json.dumps(inline(doc, tmp_path)) == want
    rows = attnscope.load_arrays(doc, tmp_path)
    assert np.isnan(rows["g"][0, 1]) and rows["g.nulls"].tolist() == [[0, 1], [1, 0]]
