"""What the test tiers share: the note's sentence, the one-error check, the real model's path,
and the helper modules (tiny models, references, the note's figure, Chromium, GGUF, chat templates).

Test modules import from here, never from each other or from conftest.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

SEED = "민수는 사과를 샀다. 그는 그것을 먹었다."


WORDS = "민수는, 사과를, 샀다., 그는, 그것을, 먹었다."  # the words of SEED, as errors list them


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


REAL_DEFAULT = Path.home() / ".cache" / "attnscope-real" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
REAL_GEMMA_DEFAULT = Path.home() / ".cache" / "attnscope-real" / "gemma-3-270m-q4_k_m.gguf"  # fetch-gemma3.sh
