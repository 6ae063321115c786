"""Every ```python block of docs/python-api.md runs, on the tiny model instead of the real one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "python-api.md"
REAL = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
BLOCKS = re.findall(r"^```python\n(.*?)^```", PAGE.read_text(encoding="utf-8"), re.M | re.S)


def test_the_page_shows_every_analysis() -> None:
    import attnscope

    text = "\n".join(BLOCKS)
    functions = [name for name in attnscope.__all__ if name[0].islower() and name not in ("load", "from_json")]
    missing = [name for name in functions if f"attnscope.{name}(" not in text]
    assert not missing, f"docs/python-api.md has no example for {missing}"


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_example_runs(block: str, model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert REAL in block, "an example names the model it loads"
    monkeypatch.chdir(tmp_path)
    exec(compile(block.replace(REAL, str(model_dir)), str(PAGE), "exec"), {"__name__": "__main__"})
