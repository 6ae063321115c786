"""Every marked example of README.md and docs/ runs as written on the real model (exit status only)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_docs_examples_run_on_the_real_model(real_model: Path) -> None:
    env = {**os.environ, "ATTNSCOPE_MODEL": str(real_model)}
    proc = subprocess.run(
        [sys.executable, "-m", "attnscope.devtools.examples", "--check", "--jobs", "2"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, "an example in README.md or docs/ does not run as written:\n" + proc.stderr[-4000:]
