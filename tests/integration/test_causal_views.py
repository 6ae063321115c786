"""The views, figures and JSON of ``ablate``, ``knockout`` and ``patch`` on the tiny model: both
languages draw, a saved document renders again, and an edited derived number is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from support import SEED

CLEAN = "민수는 사과를 샀다. 그는 그것을"
CORRUPT = "지수는 사과를 샀다. 그는 그것을"

RUNS = {
    "ablate": ["ablate", SEED, "--target", ".", "--key", "사과를"],
    "knockout": ["knockout", SEED, "--target", ".", "--key", "사과를", "--query", "그것을", "--window", "2"],
    "patch": ["patch", "--clean", CLEAN, "--corrupt", CORRUPT, "--target", " 그", "--site", "head,resid,k"],
}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_json_view_figure_and_render(cli: Any, model_dir: Path, tmp_path: Path, name: str) -> None:
    res = cli(*RUNS[name], "--json", "--svg", str(tmp_path / "f.svg"), "-m", str(model_dir))
    assert res.exit_code == 0, res.stderr
    svg = (tmp_path / "f.svg").read_text(encoding="utf-8")
    assert svg.startswith("<svg") and "<rect" in svg
    doc = json.loads(res.stdout)
    assert doc["schema"] == f"attnscope.{name}/1"
    assert doc["metric"]["kind"] == "logprob" and isinstance(doc["metric"]["target_id"], int)
    path = tmp_path / "r.json"
    path.write_text(res.stdout, encoding="utf-8")
    for lang in ("en", "ko"):
        shown = cli("render", str(path), "--lang", lang, "--width", "120")
        assert shown.exit_code == 0, shown.stderr
        assert shown.stdout.strip()
    if name == "ablate":
        first = cli("render", str(path)).stdout.splitlines()
        assert first[0].startswith("Removing L") and "looks hardest at “사과를”" in first[1]
        assert "비율을 가장 많이 두는" in cli("render", str(path), "--lang", "ko").stdout
        doc["ranking"] = list(reversed(doc["ranking"]))
        path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
        refused = cli("render", str(path))
        assert refused.exit_code != 0 and "ranking 1" in refused.stderr
    if name == "knockout":
        doc["windows"][0]["effect"] += 0.5
        path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
        assert (
            "does not follow" in cli("render", str(path)).stderr
            or "but its metric gives" in cli("render", str(path)).stderr
        )
    if name == "patch":
        assert doc["shared_by"] == [[0, 1], [2, 3]] and doc["v"] is None and doc["k"] is not None
        doc["heads"][0][0] += 0.5
        path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
        assert cli("render", str(path)).exit_code != 0


def test_ablate_view_without_key_and_approx(cli: Any, model_dir: Path) -> None:
    res = cli("ablate", SEED, "--target", ".", "--approx", "--check", "4", "--lang", "ko", "-m", str(model_dir))
    assert res.exit_code == 0, res.stderr
    assert "1차 추정" in res.stdout and "정확히 다시 계산했다" in res.stdout
