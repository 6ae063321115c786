"""Every bad input: one ``attnscope: error:`` line on stderr, a non-zero exit, nothing on stdout.

Each case here backs one row of the bad-input table in the README (Reliability section); each
must fail if its handling is removed (the message, the exit code and the empty stdout
are all checked). Most cases go through ``CliRunner``; a few run ``python -m
attnscope`` in a subprocess for real stdout/stderr separation and a real environment
(``HF_HUB_OFFLINE`` is read when huggingface_hub is imported).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from attnscope.errors import ExitCode

from conftest import SEED

WORDS = "민수는, 사과를, 샀다., 그는, 그것을, 먹었다."


def one_error(res: Any, code: int, *fragments: str) -> str:
    """The run failed cleanly: exit ``code``, empty stdout, one error line holding ``fragments``."""
    assert res.exit_code == code, (res.exit_code, res.stdout, res.stderr)
    assert res.stdout == ""
    lines = res.stderr.splitlines()
    assert "Traceback" not in res.stderr
    assert all(line.startswith("attnscope: ") for line in lines), lines  # progress lines, then the error
    errors = [line for line in lines if line.startswith("attnscope: error: ")]
    assert len(errors) == 1 and errors[0] == lines[-1], lines
    for fragment in fragments:
        assert fragment in errors[0], (fragment, errors[0])
    return errors[0]


@pytest.mark.slow
def test_real_model_ranges_and_words(cli: Any, real_model: Path) -> None:
    m = ("--model", str(real_model))
    one_error(cli("weights", SEED, "--layer", "24", *m), ExitCode.USAGE, "24 layers (0-23, or -1 to -24)")
    one_error(cli("weights", SEED, "--head", "5", "--pos", "17", *m), ExitCode.USAGE, "17 tokens (0-16, or -1 to -17)")
    one_error(cli("weights", SEED, "-q", "바나나", *m), ExitCode.USAGE, f"its words are: {WORDS}")
