"""The memory guard (capture/memory.py): sizes, budgets, the refusal, and engine.run's estimate."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from attnscope.capture import engine, memory
from attnscope.errors import AttnscopeError, ExitCode


def test_capture_run_refuses_exactly_past_its_estimate(loaded: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    tok = loaded.tokenizer
    enc = tok(["민수는 사과를 샀다.", "hello"], padding=True, return_tensors="pt")
    ids, mask = enc["input_ids"], enc["attention_mask"]  # (2, T), left-padded
    B, T = ids.shape
    request = engine.Request(positions=torch.arange(T).expand(B, T), layers=frozenset({0, 2}))
    kept, transient = memory.capture_bytes(layers=2, batch=B, heads=4, queries=T, keys=T, padded=True)
    monkeypatch.setattr(memory, "budget", lambda device="cpu": kept + transient)
    engine.run(loaded.model, ids, mask, request)
    monkeypatch.setattr(memory, "budget", lambda device="cpu": kept + transient - 1)
    with pytest.raises(AttnscopeError) as err:
        engine.run(loaded.model, ids, mask, request)
    assert err.value.code == ExitCode.RESOURCE
    assert f"2 layer(s) x 4 heads x {T} queries x {T} keys x 2 sequences" in err.value.message
