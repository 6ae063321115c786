"""``--dtype auto`` on the CPU: float32 when the weights in float32 fit in the memory available,
bfloat16 (with one notice line) when they do not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from attnscope.model import loader
from attnscope.model.said import Said

from support import SEED


def test_the_weight_count_comes_from_the_safetensors_headers(loaded: Any, model_dir: Path) -> None:
    assert loader.weight_count(str(model_dir), "folder") == sum(p.numel() for p in loaded.model.parameters())


@pytest.mark.parametrize("free_gb,want", [(64.0, torch.float32), (1.0, torch.bfloat16)])
def test_auto_picks_bfloat16_when_float32_would_not_fit(monkeypatch: Any, free_gb: float, want: Any) -> None:
    monkeypatch.setattr(loader, "available_memory", lambda: int(free_gb * 1024**3))
    said: list[Said] = []
    weights = 7_615_616_512  # Qwen2.5-7B: 30.5 GB in float32
    got = loader.pick_dtype("auto", "cpu", weights=weights, notice=said.append)
    assert got == (want if free_gb < 30 else torch.float32)
    assert [s.key for s in said] == ([] if got == torch.float32 else ["auto_bfloat16"])
    assert loader.pick_dtype("float32", "cpu", weights=weights, notice=said.append) == torch.float32


def test_the_cli_says_it_in_one_line(cli: Any, model_dir: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(loader, "available_memory", lambda: 1000)  # a model of 50k weights does not fit in 1 kB
    res = cli("weights", SEED, "--model", str(model_dir), "--json")
    assert res.exit_code == 0
    lines = [line for line in res.stderr.splitlines() if "--dtype auto" in line]
    assert len(lines) == 1 and "bfloat16" in lines[0]
    assert '"dtype": "bfloat16"' in res.stdout
    ko = cli("weights", SEED, "--model", str(model_dir), "--json", "--lang", "ko")
    assert "bfloat16으로 올린다" in ko.stderr
