"""Headless Chromium for the browser tests: find it, open a file with every other request blocked.

Playwright for Python drives Debian's ``chromium`` (never a downloaded browser). Without
Playwright or Chromium the tests skip with the reason, except when ``CI`` is set: there
they fail, so CI cannot pass without really running them.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

# Every text label's box against every other one in the same SVG (or the token strip).
OVERLAPS_JS = """() => {
  const groups = [...document.querySelectorAll('svg')].filter(s => !(s.parentElement && s.parentElement.closest('svg')))
    .map(s => [...s.querySelectorAll('text')]);
  const tokens = document.getElementById('tokens');
  if (tokens) groups.push([...tokens.querySelectorAll('.tok')]);
  const bad = [];
  for (const els of groups) {
    const boxes = els.filter(e => (e.textContent || '').trim()).map(e => [e.textContent, e.getBoundingClientRect()])
      .filter(([, b]) => b.width > 0 && b.height > 0);
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i][1], b = boxes[j][1];
      const ox = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      const oy = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (ox > 0.5 && oy > 0.5) bad.push(`${boxes[i][0]} / ${boxes[j][0]}`);
    }
  }
  return bad;
}"""

TEXT_COUNT_JS = "() => document.querySelectorAll('text').length"


def chromium_path() -> str | None:
    for candidate in (
        os.environ.get("ATTNSCOPE_CHROMIUM"),
        "/usr/bin/chromium",
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
    ):
        if candidate and Path(candidate).is_file():
            return candidate
    return None


def missing(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI is set, so the browser tests must run")
    pytest.skip(reason)


@dataclass
class Opened:
    page: Any
    blocked: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def overlaps(self) -> list[str]:
        result: list[str] = self.page.evaluate(OVERLAPS_JS)
        return result


def open_file(browser: Any, path: Path, width: int = 1400, height: int = 900) -> Opened:
    """Open ``path`` in a new page; every request that is not ``file:`` is aborted and counted."""
    page = browser.new_page(viewport={"width": width, "height": height})
    opened = Opened(page)

    def route(r: Any) -> None:
        if r.request.url.startswith("file:"):
            r.continue_()
        else:
            opened.blocked.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.on("console", lambda m: opened.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: opened.errors.append(str(e)))
    page.goto(path.resolve().as_uri())
    return opened


def screenshot_svg(opened: Opened, out: Path) -> None:
    """A screenshot of a standalone SVG document at its own size."""
    w, h = opened.page.evaluate(
        "() => [document.documentElement.width.baseVal.value, document.documentElement.height.baseVal.value]"
    )
    opened.page.set_viewport_size({"width": int(w) + 1, "height": int(h) + 1})
    opened.page.screenshot(path=str(out))
