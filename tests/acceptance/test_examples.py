"""Marked examples of README.md and docs/ run as written on the real model (exit status only).

CI runs the README and a few pages that cover every kind of example (views, JSON piped into
Python, bad input, generation); ``ATTNSCOPE_ALL_EXAMPLES=1`` runs every page, as
``python -m attnscope.devtools.examples --check`` does (about 25 minutes on 2 cores).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CI_PAGES = ["README.md", "docs/commands/heads.md", "docs/commands/generate.md", "docs/reliability.md"]


def _pages() -> list[str]:
    if os.environ.get("ATTNSCOPE_ALL_EXAMPLES"):
        return ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md"))]
    return CI_PAGES


@pytest.mark.slow
@pytest.mark.parametrize("page", _pages())
def test_docs_examples_run_on_the_real_model(real_model: Path, page: str) -> None:
    env = {**os.environ, "ATTNSCOPE_MODEL": str(real_model)}
    proc = subprocess.run(
        [sys.executable, "-m", "attnscope.devtools.examples", "--check", page],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, f"an example in {page} does not run as written:\n" + proc.stderr[-4000:]
