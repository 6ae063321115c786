"""Captured rows against eager output_attentions, the independent reference."""

from __future__ import annotations

import pytest
import torch

from attnscope.core import capture
from attnscope.errors import AttnscopeError


def test_by_hand_two_keys():
    # q.k scores 0 and log(3) give weights 1/4 and 3/4; a later key is masked out.
    q = torch.zeros(1, 1, 3, 2)
    q[0, 0, 1] = torch.tensor([1.0, 0.0])
    k = torch.zeros(1, 1, 3, 2)
    k[0, 0, 1] = torch.tensor([torch.log(torch.tensor(3.0)).item(), 0.0])
    k[0, 0, 2] = torch.tensor([100.0, 0.0])
    rows = capture.attention_rows(q, k, torch.tensor([[1]]), 1.0, None)
    assert rows[0, 0, 0].tolist() == pytest.approx([0.25, 0.75, 0.0])


def test_nan_is_named():
    rows = {3: torch.tensor([[[[0.5, float("nan")]], [[1.0, 0.0]]]])}
    with pytest.raises(AttnscopeError, match="layer 3, head 0"):
        capture.check_finite(rows)
