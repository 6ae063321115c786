"""Every --svg figure (and its --html page) opened in headless Chromium: no request, no error, no overlap."""

from __future__ import annotations

import pytest

from support import SEED
from support.browserkit import open_file, screenshot_svg
from support.commands import CIRCUIT_PAIRS

pytestmark = pytest.mark.browser

CASES = {
    "weights": ["weights", SEED, "--query", "그것을"],
    "weights-word-ko": ["weights", SEED, "--query", "그것을", "--by", "word", "--no-sink", "--lang", "ko"],
    "weights-per-head": ["weights", SEED, "--query", "그것을", "--layer", "1", "--per-head"],
    "heads-ko": ["heads", SEED, "--query", "그것을", "--key", "사과를", "--lang", "ko"],
    "matrix": ["matrix", SEED, "--layer", "1", "--head", "2"],
    "matrix-word": ["matrix", SEED, "--layer", "1", "--head", "2", "--by", "word"],
    "mask-batch-ko": ["mask", SEED, "그는 그것을 먹었다.", "--padding-side", "left", "--lang", "ko"],
    "mask-note": ["mask", "--size", "4"],
    "trace": ["trace", SEED],
    "info": ["info"],
    "flow": ["flow", SEED, "--threshold", "0.01"],
    "flow-heads-ko": ["flow", SEED, "--threshold", "0.01", "--heads", "--by", "word", "--lang", "ko"],
    "circuit-ko": ["circuit", "--pairs", CIRCUIT_PAIRS, "--compare", "eap-ig,random", "--check", "0", "--lang", "ko"],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_figure_in_chromium(cli, model_dir, browser, tmp_path, name):
    args = CASES[name]
    svg, html = tmp_path / f"{name}.svg", tmp_path / f"{name}.html"
    model = [] if args[0] == "mask" and args[1] == "--size" else ["--model", str(model_dir)]
    res = cli(*args, *model, "--svg", str(svg), "--html", str(html))
    assert res.exit_code == 0, res.stderr
    for path in (svg, html):
        opened = open_file(browser, path)
        try:
            assert opened.blocked == [] and opened.errors == []
            assert opened.page.evaluate("() => document.querySelectorAll('text').length") > 3
            assert opened.overlaps() == []
            if path is svg:
                screenshot_svg(opened, tmp_path / f"{name}.png")
            else:
                opened.page.screenshot(path=str(tmp_path / f"{name}-html.png"), full_page=True)
        finally:
            opened.page.close()
    assert (tmp_path / f"{name}.png").stat().st_size > 1000
