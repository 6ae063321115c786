"""``heads``: the ranking against eager output_attentions (tiny model, and the real one in the slow tier)."""

from __future__ import annotations

import pytest
import torch

from attnscope.core.heads import heads

import reference
from conftest import SEED


def eager_attentions(loaded, ids):
    """Per layer (1, H, T, T) from eager output_attentions: the independent reference."""
    return reference.eager_attentions(loaded.model, torch.tensor([ids]))


def reference_scores(attn, q_span, k_span, agg, no_sink=False):
    """(L, H) scores by hand from eager rows."""
    rows = torch.stack([a[0][:, q_span, :] for a in attn])  # (L, H, P, T)
    if no_sink:
        rows = rows.clone()
        rows[..., 0] = 0
        rows = rows / rows.sum(-1, keepdim=True)
    row = rows[:, :, -1, :] if agg == "last" else rows.mean(dim=2)  # (L, H, T)
    return row[:, :, k_span].sum(-1)


@pytest.mark.slow
def test_real_model_ranking_matches_eager(real_loaded):
    r = heads(real_loaded, SEED, query="그것을", key="사과를")
    enc_ids = real_loaded.tokenizer(SEED)["input_ids"]
    ref = reference_scores(eager_attentions(real_loaded, enc_ids), r.query.span, r.key.span, "last")
    assert len(r.ranking) == 24 * 14
    for s in r.ranking:
        assert s.score == pytest.approx(float(ref[s.layer, s.head]), abs=1e-4)
    order = sorted(((float(ref[a, b]), a, b) for a in range(24) for b in range(14)), key=lambda x: (-x[0], x[1], x[2]))
    assert [(s.layer, s.head) for s in r.ranking[:5]] == [(a, b) for _, a, b in order[:5]]
    # The note's claim: several heads put more than half their weight on 사과를.
    assert sum(1 for s in r.ranking if s.score > 0.5) >= 3
