"""Head roles: hand-built patterns with known scores, eager patterns as reference, the CLI."""

from __future__ import annotations

import pytest
import torch

from attnscope.core import roles


def test_hand_built_patterns_have_known_scores():
    ids = torch.tensor([5, 6, 5, 6])
    prev = torch.tensor([[1.0, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]])  # a previous-token head
    uniform = torch.tril(torch.ones(4, 4)) / torch.arange(1, 5)[:, None]
    got = roles.scores(torch.stack([prev, uniform])[None], ids)  # (1, 2, 4, 4)
    # previous-token: 3 of the 4 rows' weight sits one key back
    assert got["previous_token"][0, 0] == pytest.approx(0.75)
    # duplicate: row 2 (5) sees key 0 (5), row 3 (6) sees key 1 (6); uniform puts 1/3 + 1/4 there
    assert got["duplicate_token"][0, 1] == pytest.approx((1 / 3 + 1 / 4) / 4)
    # induction (a b a b: the same head is an induction head): row 2 -> key 1, row 3 -> key 2
    assert got["induction"][0, 0] == pytest.approx(0.5)
    assert torch.equal(
        roles.induction_pattern(ids), torch.tensor([[0.0, 0, 0, 0], [0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]])
    )
    # sink: column 0 averaged over the 4 queries (Gu et al.: sum_i A[i, 0] / (T - 0))
    assert got["sink"][0, 0] == pytest.approx(0.5)
    assert got["sink"][0, 1] == pytest.approx((1 + 1 / 2 + 1 / 3 + 1 / 4) / 4)
