"""Every command's view at widths 40, 60, 80 and 160 (issue 12): decoration goes first.

A narrow terminal may lose bars, shading strips and heat cells, never a number, a label or a
column header: no number is cut by an ellipsis (``0.…``) and no word is cut into ``la…``.
Only the model's path may be shortened, and that in the middle. Piped output takes the view's
own width, so a long path stays whole.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from attnscope.render import Ctx, to_text, view
from attnscope.results import from_json

from .test_render_cmd import COMMANDS, _args
from conftest import SEED

WIDTHS = (40, 60, 80, 160)


CUT = re.compile(r"[0-9A-Za-z가-힣]…")  # a number or a word with its end replaced by an ellipsis


@pytest.fixture(scope="module")
def results(model_dir: Path) -> dict[str, Any]:
    import json

    from typer.testing import CliRunner

    from attnscope.cli import app

    runner = CliRunner()
    out = {}
    for name in sorted(COMMANDS):
        res = runner.invoke(app, [*_args(name, model_dir), "--json"], catch_exceptions=False)
        assert res.exit_code == 0, (name, res.stderr)
        out[name] = from_json(json.loads(res.stdout))
    return out


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_no_number_or_label_is_cut(results: dict[str, Any], name: str, width: int) -> None:
    text = to_text(view(results[name], Ctx(width=width)), width=width)
    for line in text.splitlines():
        assert len(line.rstrip()) <= width
        if "/" in line or "\\" in line:  # a path (the model's): shortened in the middle at most
            continue
        assert not CUT.search(line), f"{name} at {width}: {line!r}"


def test_heads_drops_the_bar_then_the_strip(results: dict[str, Any]) -> None:
    wide = to_text(view(results["heads"], Ctx(width=160)), width=160)
    narrow = to_text(view(results["heads"], Ctx(width=40)), width=40)
    assert "█" in wide and "█" not in narrow.split("top")[1].split("\n\n")[0]
    score = re.compile(r"\b0\.\d\d\b")
    assert score.findall(narrow) and set(score.findall(wide)) <= set(score.findall(narrow)) | {"0.00"}


def test_piped_output_keeps_the_path_whole(cli: Any, model_dir: Path) -> None:
    res = cli("weights", SEED, "--model", str(model_dir))  # CliRunner's stdout is not a terminal
    assert res.exit_code == 0, res.stderr
    assert any(str(model_dir) in line for line in res.stdout.splitlines())
