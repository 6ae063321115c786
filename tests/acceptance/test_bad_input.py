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

from support import SEED, WORDS, one_error


@pytest.mark.slow
def test_real_model_ranges_and_words(cli: Any, real_model: Path) -> None:
    m = ("--model", str(real_model))
    one_error(cli("weights", SEED, "--layer", "24", *m), ExitCode.USAGE, "24 layers (0-23, or -1 to -24)")
    one_error(cli("weights", SEED, "--head", "5", "--pos", "17", *m), ExitCode.USAGE, "17 tokens (0-16, or -1 to -17)")
    one_error(cli("weights", SEED, "-q", "바나나", *m), ExitCode.USAGE, f"its words are: {WORDS}")
