"""attnscope explore: the page's data against eager attention, its size limit, its bad input."""

from __future__ import annotations

import torch

from attnscope.core.explore import quantise


def test_quantise_by_hand():
    rows = torch.tensor([[0.5, 0.25, 0.25], [1 / 3, 1 / 3, 1 / 3], [0.999, 0.001, 0.0]])
    q = quantise(rows, levels=4)
    assert q.tolist() == [[2, 1, 1], [2, 1, 1], [4, 0, 0]]  # 4/3 each: one unit goes to the first of the tied
    rnd = torch.softmax(torch.randn(50, 30) * 4, dim=-1)
    q = quantise(rnd)
    assert q.sum(-1).tolist() == [255] * 50  # every row adds up to exactly 1
    assert float((q.float() / 255 - rnd).abs().max()) < 1 / 255
