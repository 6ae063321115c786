"""The committed samples are what the code writes today (no model needed).

- Each ``samples/NAME.svg`` is ``attnscope render samples/NAME.json --svg ... --width 100`` and each
  ``samples/NAME.ko.svg`` the same with ``--lang ko``, as ``samples/regenerate.sh --svg-only``
  draws them: a view or catalogue change that leaves a committed figure behind fails here.
- Each ``samples/explore-*.html`` embeds the page's script, its style sheet and the catalogue
  entries it needs; they must equal the current ``render/assets`` and catalogues (the weights in it
  come from the real model, so the page as a whole is rebuilt by ``samples/regenerate.sh``).
"""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path
from typing import Any

import pytest

from attnscope.render.explore import _asset, messages

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
FIGURES = sorted(SAMPLES.glob("*.svg"))
PAGES = sorted(SAMPLES.glob("explore-*.html"))
REDRAW = "samples/regenerate.sh --svg-only"
REBUILD = "samples/regenerate.sh (it needs the real model)"


def test_every_figure_has_its_json_and_regenerate_draws_each_korean_one() -> None:
    script = (SAMPLES / "regenerate.sh").read_text(encoding="utf-8")
    korean = {p.name.removesuffix(".ko.svg") for p in FIGURES if p.name.endswith(".ko.svg")}
    assert korean, "no Korean sample figure"
    for name in korean:
        assert re.search(rf"\bsample_ko {re.escape(name)}\b", script), f"regenerate.sh does not draw {name}.ko.svg"
    for path in FIGURES:
        assert (SAMPLES / (path.name.split(".")[0] + ".json")).is_file(), path.name


@pytest.mark.parametrize("path", FIGURES, ids=[p.name for p in FIGURES])
def test_committed_figure_is_what_render_draws_today(cli: Any, tmp_path: Path, path: Path) -> None:
    name, _, rest = path.name.partition(".")
    args = ["--lang", "ko"] if rest == "ko.svg" else ["--width", "100"]
    out = tmp_path / path.name
    res = cli("render", str(SAMPLES / f"{name}.json"), "--svg", str(out), *args)
    assert res.exit_code == 0, res.stderr
    assert out.read_text(encoding="utf-8") == path.read_text(encoding="utf-8"), f"{path.name} is stale: run {REDRAW}"


def _between(page: str, start: str, end: str) -> str:
    i = page.index(start) + len(start)
    return page[i : page.index(end, i)]


@pytest.mark.parametrize("path", PAGES, ids=[p.name for p in PAGES])
def test_committed_page_embeds_todays_script_style_and_words(path: Path) -> None:
    page = path.read_text(encoding="utf-8")
    assert _between(page, "<style>\n", "</style>") == _asset("explore.css"), f"{path.name}: old style: run {REBUILD}"
    script = _between(page, '<script type="application/json" id="attnscope-data">', "</script>")
    data = json.loads(script)
    assert data["messages"] == messages(), f"{path.name} embeds an old catalogue: run {REBUILD}"
    assert _asset("explore.js") in page, f"{path.name}: old script: run {REBUILD}"


@pytest.mark.parametrize("path", PAGES, ids=[p.name for p in PAGES])
def test_committed_page_uses_the_notes_words_in_korean(path: Path) -> None:
    """The page's Korean words (its catalogue and the text written into the page) hold no term of
    the banned list; tests/browser checks what the script draws from them."""
    from attnscope.render.messages.ko import BANNED

    page = path.read_text(encoding="utf-8")
    data = json.loads(_between(page, '<script type="application/json" id="attnscope-data">', "</script>"))
    words = list(data["messages"]["ko"].values())
    if data["lang"] == "ko":
        words += [unescape(w) for w in re.findall(r">([^<>]+)<", page.split("<script")[0])]
    assert [(w, use) for w in words for pattern, use in BANNED if re.search(pattern, w)] == []
