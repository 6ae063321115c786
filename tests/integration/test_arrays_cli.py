"""``--arrays`` on every command whose result holds arrays, on the tiny model.

For each, ``--json --arrays FILE`` must read back (with ``attnscope.from_json``) as exactly the
document ``--json`` alone prints, in both formats; without ``--json`` the view is what it is
without ``--arrays`` and the file alone renders to it. The generate result keeps its captured
rows as fp32 arrays in memory, and its JSON is the same either way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import attnscope
from attnscope.results import from_json

from support import SEED

CLEAN = "민수는 사과를 샀다. 그는 그것을"
RUNS: dict[str, list[str]] = {
    "weights": ["weights", SEED, "--query", "그것을", "--measure", "norm"],
    "matrix": ["matrix", SEED, "--layer", "1", "--head", "2", "--measure", "norm"],
    "generate": ["generate", SEED, "-n", "3"],
    "ablate": ["ablate", SEED, "--target", "."],
    "patch": [
        "patch",
        "--clean",
        CLEAN,
        "--corrupt",
        "지수는 사과를 샀다. 그는 그것을",
        "--target",
        ".",
        "--site",
        "head,resid,k,v",
    ],
    "roles": ["roles", "--length", "6"],
}


def _text(doc: dict[str, Any]) -> str:
    return json.dumps(doc, ensure_ascii=False)


@pytest.mark.parametrize("fmt", ["safetensors", "npz"])
@pytest.mark.parametrize("name", sorted(RUNS))
def test_json_with_arrays_reads_back_as_the_inline_json(
    cli: Any, model_dir: Path, tmp_path: Path, name: str, fmt: str
) -> None:
    args = [*RUNS[name], "--model", str(model_dir)]
    plain = cli(*args, "--json")
    assert plain.exit_code == 0, plain.stderr
    arrays = tmp_path / f"rows.{fmt}"
    paired = cli(*args, "--json", "--arrays", str(arrays))
    assert paired.exit_code == 0, paired.stderr
    doc = json.loads(paired.stdout)
    assert doc["arrays"]["file"] == str(arrays)  # given absolute, named absolute
    assert doc["arrays"]["keys"]
    inline = json.loads(plain.stdout)
    assert _text(from_json(doc).to_json()) == _text(inline)
    loaded = attnscope.load_arrays(doc)
    assert set(loaded) == set(doc["arrays"]["keys"])
    assert sorted(p.name for p in tmp_path.iterdir()) == [arrays.name]  # no temporary file left


@pytest.mark.parametrize("name", ["generate", "weights"])
def test_arrays_with_the_view_writes_the_file_and_prints_the_same_view(
    cli: Any, model_dir: Path, tmp_path: Path, name: str
) -> None:
    args = [*RUNS[name], "--model", str(model_dir)]
    view = cli(*args)
    arrays = tmp_path / "rows.safetensors"
    svg = tmp_path / "view.svg"
    with_file = cli(*args, "--arrays", str(arrays), "--svg", str(svg))
    assert with_file.exit_code == 0, with_file.stderr
    assert with_file.stdout == view.stdout
    assert arrays.is_file() and svg.is_file()
    again = cli("render", str(arrays))
    assert again.exit_code == 0, again.stderr
    assert again.stdout == view.stdout


def test_generate_keeps_its_rows_as_arrays_and_writes_the_same_json(loaded: Any, tmp_path: Path) -> None:
    result = attnscope.generate(loaded, SEED, max_new_tokens=2)
    rows = result.steps[0].weights
    assert isinstance(rows, np.ndarray) and rows.dtype == np.float32
    assert rows.shape == (loaded.info.num_hidden_layers, loaded.info.num_attention_heads, result.steps[0].index)
    doc = result.to_json()
    assert doc["steps"][0]["weights"] == rows.tolist()
    ref = attnscope.write_arrays(result, tmp_path / "gen.npz")
    assert ref["steps"][0]["weights"] == {"array": "steps.0.weights", "dtype": "float32", "shape": list(rows.shape)}
    assert _text(from_json(ref, tmp_path).to_json()) == _text(doc)
    assert np.array_equal(attnscope.load_arrays(ref, tmp_path)["steps.0.weights"], rows)
