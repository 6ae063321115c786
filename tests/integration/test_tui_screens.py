"""attnscope tui's screens, in English and Korean, at 80x24 and 160x48: what they hold, and that wide
Korean characters keep every column in place. Each screen is also saved as SVG (to
$ATTNSCOPE_TUI_SCREENS when set, for a person to look at; docs/tui-*.png came from these)."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("textual")

from rich.cells import cell_len  # noqa: E402
from rich.console import Console  # noqa: E402

from attnscope.render.messages.ko import BANNED  # noqa: E402
from attnscope.tui.app import Browser  # noqa: E402
from attnscope.tui.session import open_prompt  # noqa: E402

from support import SEED, aio  # noqa: E402

SIZES = [(80, 24), (160, 48)]
SCREENS = {
    "mean": (),
    "head": ("down", "enter"),
    "matrix": ("down", "enter", "m"),
    "help": ("question_mark",),
}


def screen_lines(app: Browser) -> list[str]:
    """The screen as text, one string per row (what a terminal shows, without colour)."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), record=True, legacy_windows=False)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text().splitlines()[:height]


def shoot(loaded: Any, lang: str, size: tuple[int, int], keys: tuple[str, ...], name: str) -> tuple[list[str], str]:
    session = open_prompt(loaded, SEED, None)
    q = next(w.tokens for w in session.enc.words if w.text == "그것을")[-2]
    key = next(w.tokens for w in session.enc.words if w.text == "사과를")
    app = Browser(session, lang, loaded, query=q, key=key)
    got: dict[str, Any] = {}

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await pilot.press(*keys)
            await pilot.pause()
            await pilot.pause()
            got["lines"] = screen_lines(app)
            got["svg"] = app.export_screenshot(title=f"attnscope tui ({name}, {lang})")

    aio.run(main())
    folder = os.environ.get("ATTNSCOPE_TUI_SCREENS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        (Path(folder) / f"tui-{name}-{lang}-{size[0]}x{size[1]}.svg").write_text(got["svg"], encoding="utf-8")
    return got["lines"], got["svg"]


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.parametrize("lang", ["en", "ko"])
@pytest.mark.parametrize("name", list(SCREENS))
def test_screen(loaded: Any, lang: str, size: tuple[int, int], name: str) -> None:
    lines, svg = shoot(loaded, lang, size, SCREENS[name], name)
    width, height = size
    assert len(lines) == height and svg.startswith("<svg")
    assert all(cell_len(line) <= width for line in lines), "a wide character pushed a row past the screen"
    text = "\n".join(lines)
    if name == "help":
        assert ("attnscope tui: keys" if lang == "en" else "attnscope tui: 단축키") in text
        assert ("the query" if lang == "en" else "Q를 옮긴다") in text
        if height >= 48:  # the whole map; at 24 rows ↓ scrolls to the rest
            assert "Ctrl+P" in text and ("the command palette" if lang == "en" else "명령 팔레트") in text
        return
    assert lines[0].startswith("Q 을") and "K 사과를" in lines[0], lines[0]
    assert "{를 3/3}" in lines[1] + lines[2] and "»을«" in lines[1] + lines[2], (
        "the query and key are marked in the strip"
    )
    footer = lines[-1]
    assert ("query" if lang == "en" else "Q") in footer and ("quit" if lang == "en" else "끝") in footer
    # the table's rows and the pane's border stand in one column on every row of the body
    body = lines[3:-3]
    if width >= 120:
        bars = {cell_len(line[: line.index("▏")]) for line in body if "▏" in line}
        assert len(bars) == 1, "the detail pane's border moved: a wide character was measured wrong"
    if name == "head":
        assert ("L0 H1 (KV 0), Q" if lang == "en" else "레이어 0 헤드 1(K·V 헤드 0), Q") in text
        assert ("<- self" if lang == "en" else "자기 자신") in text
    if name == "mean":
        assert ("mean over every layer and head" if lang == "en" else "모든 레이어와 헤드의 평균") in text
    if lang == "ko":
        import re

        for pattern, _ in BANNED:
            assert not re.search(pattern, text), pattern
