"""Captured rows against eager output_attentions, the independent reference."""

from __future__ import annotations

import pytest
import torch

from attnscope.capture import engine
from attnscope.errors import AttnscopeError


def test_by_hand_two_keys():
    # q.k scores 0 and log(3) give weights 1/4 and 3/4; a later key is masked out.
    q = torch.zeros(1, 1, 3, 2)
    q[0, 0, 1] = torch.tensor([1.0, 0.0])
    k = torch.zeros(1, 1, 3, 2)
    k[0, 0, 1] = torch.tensor([torch.log(torch.tensor(3.0)).item(), 0.0])
    k[0, 0, 2] = torch.tensor([100.0, 0.0])
    rows = engine.attention_rows(q, k, torch.tensor([[1]]), 1.0, None)
    assert rows[0, 0, 0].tolist() == pytest.approx([0.25, 0.75, 0.0])


def test_decode_step_by_hand_and_against_the_masked_path():
    # One query against a cache of three keys (the decode step's shortcut): scores 0, log(3), 0
    # give 1/5, 3/5, 1/5, and the same row comes out of the general path with an all-true mask.
    torch.manual_seed(0)
    q = torch.zeros(1, 2, 1, 2)  # (B, H, 1, D): two query heads share one KV head
    q[0, :, 0] = torch.tensor([1.0, 0.0])
    k = torch.zeros(1, 1, 3, 2)
    k[0, 0, 1] = torch.tensor([torch.log(torch.tensor(3.0)).item(), 0.0])
    rows = engine.attention_rows(q, k, torch.tensor([[0]]), 1.0, None)
    assert rows.shape == (1, 2, 1, 3)
    assert rows[0, 1, 0].tolist() == pytest.approx([0.2, 0.6, 0.2])
    q, k = torch.randn(2, 6, 1, 4), torch.randn(2, 3, 5, 4)
    fast = engine.attention_rows(q, k, torch.tensor([[0], [0]]), 0.5, None)
    general = engine.attention_rows(q, k, torch.tensor([[0], [0]]), 0.5, torch.ones(2, 1, 1, 5, dtype=torch.bool))
    torch.testing.assert_close(fast, general, rtol=0, atol=1e-7)
    window = engine.attention_rows(q, k, torch.tensor([[0], [0]]), 0.5, None, sliding_window=2)
    assert (window[..., :3] == 0).all() and torch.allclose(window.sum(-1), torch.ones(2, 6, 1))


def test_nan_is_named():
    rows = {3: torch.tensor([[[[0.5, float("nan")]], [[1.0, 0.0]]]])}
    with pytest.raises(AttnscopeError, match="layer 3, head 0"):
        engine.check_finite(rows)
