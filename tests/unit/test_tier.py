"""The unit tier holds what needs no model: run on its own with torch and transformers made
unimportable (``-p support.notorch``), every unit test still passes."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from support.notorch import ROOT

INNER = "ATTNSCOPE_UNIT_TIER_INNER"


@pytest.mark.skipif(bool(os.environ.get(INNER)), reason="the inner run of this check")
def test_the_unit_tier_imports_no_torch() -> None:
    env = {**os.environ, INNER: "1", "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}"}
    res = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-p", "support.notorch", "tests/unit"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=600,
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
