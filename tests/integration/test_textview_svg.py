"""Text-style figures (views without a picture of their own) draw whole cells: every Korean
sentence or table cell of the terminal view is the text of ONE ``<text>`` element of the SVG,
never a grid of words or letters placed one by one."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path
from typing import Any

import pytest

from support import SEED

CASES = [
    ["info"],
    ["tokens", SEED],
    ["generate", SEED, "--max-new-tokens", "3"],
    ["explain", SEED, "--layer", "0", "--head", "0", "-q", "그것을"],
    ["reuse", SEED, " 그리고"],
    ["rope"],
]
HANGUL = re.compile(r"[\uac00-\ud7a3]")


def _texts(svg: str) -> list[str]:
    return [unescape(m) for m in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]


@pytest.mark.parametrize("args", CASES, ids=[a[0] for a in CASES])
def test_every_korean_cell_is_one_text_element(cli: Any, model_dir: Path, tmp_path: Path, args: list[str]) -> None:
    args = [*args, "--model", str(model_dir), "--lang", "ko", "--width", "100"]
    view = cli(*args)
    assert view.exit_code == 0, view.stderr
    svg_path = tmp_path / "view.svg"
    res = cli(*args, "--svg", str(svg_path))
    assert res.exit_code == 0, res.stderr
    digits = re.compile(r"\d")  # a timing (reuse) differs between the two runs; its words do not
    texts = {digits.sub("0", t) for t in _texts(svg_path.read_text(encoding="utf-8"))}
    lines = view.stdout.splitlines()
    cells = [digits.sub("0", c) for line in lines for c in re.split(r" {2,}", line.strip()) if HANGUL.search(c)]
    assert cells
    missing = [c for c in cells if c not in texts]
    assert missing == []


def test_a_sentence_is_not_cut_into_words(cli: Any, model_dir: Path, tmp_path: Path) -> None:
    svg_path = tmp_path / "g.svg"
    res = cli(
        "generate", SEED, "--max-new-tokens", "2", "--model", str(model_dir), "--lang", "ko", "--svg", str(svg_path)
    )
    assert res.exit_code == 0, res.stderr
    texts = _texts(svg_path.read_text(encoding="utf-8"))
    assert any(t.startswith("프롬프트는 토큰 28개다. ") for t in texts), texts[:5]
    assert "프롬프트는" not in texts and "28개다." not in texts  # no word drawn on its own
