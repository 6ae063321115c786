"""A run reads its tokenizer file once: the tokenizer the checks before the load read is the
one the model load returns, when it came from the folder the model loads from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from support import SEED


@pytest.fixture()
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The folders AutoTokenizer.from_pretrained is asked for, in order."""
    from transformers import AutoTokenizer

    seen: list[str] = []
    real = AutoTokenizer.from_pretrained

    def counting(path: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(AutoTokenizer, "from_pretrained", counting)
    return seen


def test_ablate_reads_the_tokenizer_once(cli: Any, model_dir: Path, reads: list[str]) -> None:
    res = cli("ablate", SEED, "--target", ".", "--model", str(model_dir), "--json", "--layer", "0")
    assert res.exit_code == 0, res.stderr
    assert reads == [str(model_dir)]
    assert json.loads(res.stdout)["effects"]


def test_a_tokenizer_from_another_folder_is_read_again(model_dir: Path, reads: list[str]) -> None:
    from transformers import AutoTokenizer

    from attnscope.model import load

    other = AutoTokenizer.from_pretrained(str(model_dir))
    other.name_or_path = "elsewhere"
    loaded = load(str(model_dir), device="cpu", dtype="float32", tokenizer=other)
    assert reads == [str(model_dir), str(model_dir)]
    assert loaded.tokenizer is not other and loaded.tokenizer.name_or_path == str(model_dir)
    again = load(str(model_dir), device="cpu", dtype="float32", tokenizer=loaded.tokenizer)
    assert again.tokenizer is loaded.tokenizer and len(reads) == 2
