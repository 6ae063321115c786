"""``generate`` on the real model: the rows captured in the cached decode steps equal eager
attention over prompt + answer in one uncached forward, and the ids equal transformers' own
``generate`` (greedy, and sampled with a seed)."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from attnscope.core.generate import generate
from attnscope.core.prompt.spec import ChatSpec
from attnscope.core.prompt.tokens import encode

from support.reference import eager_attentions, hf_generate

QUESTION = "토마토는 과일인가요, 채소인가요?"


@pytest.mark.slow
def test_real_cached_rows_equal_eager_and_ids_equal_transformers(real_loaded: Any) -> None:
    enc = encode(real_loaded.tokenizer, QUESTION, chat=True, system="짧게 답해.")
    result = generate(real_loaded, QUESTION, chat=ChatSpec(system="짧게 답해."), max_new_tokens=12)
    new = [s.id for s in result.steps]
    assert new == hf_generate(real_loaded, enc.ids, 12, do_sample=False)
    eager = eager_attentions(real_loaded.model, torch.tensor([enc.ids + new]))  # per layer (1, H, T, T)
    worst = 0.0
    for step in result.steps:
        got = torch.tensor(step.weights)  # (L, H, keys)
        want = torch.stack([a[0, :, step.index - 1, : step.index] for a in eager])  # (L, H, keys)
        worst = max(worst, float((got - want).abs().max()))
    assert worst < 1e-4, worst
    # Each segment share is the row summed over that segment's keys.
    last = result.steps[-1]
    assert sum(last.segments[0][0]) == pytest.approx(1.0, abs=1e-5)


@pytest.mark.slow
def test_real_sampled_ids_equal_transformers(real_loaded: Any) -> None:
    enc = encode(real_loaded.tokenizer, QUESTION, chat=True)
    result = generate(real_loaded, QUESTION, chat=ChatSpec(), max_new_tokens=8, temperature=0.8, seed=7)
    torch.manual_seed(7)
    want = hf_generate(real_loaded, enc.ids, 8, do_sample=True, temperature=0.8, top_k=0, top_p=1.0)
    assert [s.id for s in result.steps] == want
