"""The committed samples (drawn on the real model) open in headless Chromium cleanly.

No model is needed: the figures and pages in samples/ are opened as they are, with every
non-file request blocked. Screenshots go to the test's tmp folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from support.browserkit import open_file, screenshot_svg

pytestmark = pytest.mark.browser

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
FIGURES = sorted(SAMPLES.glob("*.svg"))
PAGES = sorted(SAMPLES.glob("explore-*.html"))


def test_samples_include_figures_and_pages():
    assert len(FIGURES) >= 6 and {p.name for p in PAGES} == {"explore-seed.html", "explore-chat.html"}


@pytest.mark.parametrize("path", FIGURES, ids=[p.name for p in FIGURES])
def test_sample_figure(browser, tmp_path, path):
    opened = open_file(browser, path)
    try:
        assert opened.blocked == [] and opened.errors == []
        assert opened.overlaps() == []
        screenshot_svg(opened, tmp_path / f"{path.stem}.png")
    finally:
        opened.page.close()


@pytest.mark.parametrize("path", PAGES, ids=[p.name for p in PAGES])
def test_sample_page(browser, tmp_path, path):
    opened = open_file(browser, path)
    try:
        opened.page.wait_for_selector("body[data-ready]", timeout=15000)
        assert opened.blocked == [] and opened.errors == []
        assert opened.overlaps() == []
        opened.page.click('.langs button[value="ko"]')
        assert opened.overlaps() == []
        opened.page.screenshot(path=str(tmp_path / f"{path.stem}.png"), full_page=True)
        assert opened.errors == []
    finally:
        opened.page.close()
