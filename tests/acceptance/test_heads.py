"""``heads``: the ranking against eager output_attentions (tiny model, and the real one in the slow tier)."""

from __future__ import annotations

import pytest
import torch

from attnscope.core.heads import heads

from support import SEED, reference


def eager_attentions(loaded, ids):
    """Per layer (1, H, T, T) from eager output_attentions: the independent reference."""
    return reference.eager_attentions(loaded.model, torch.tensor([ids]))


@pytest.mark.slow
def test_real_model_ranking_matches_eager(real_loaded):
    r = heads(real_loaded, SEED, query="그것을", key="사과를")
    enc_ids = real_loaded.tokenizer(SEED)["input_ids"]
    ref = reference.heads_scores(eager_attentions(real_loaded, enc_ids), r.query.span, r.key.span, "last")
    assert len(r.ranking) == 24 * 14
    for s in r.ranking:
        assert s.score == pytest.approx(float(ref[s.layer, s.head]), abs=1e-4)
    order = sorted(((float(ref[a, b]), a, b) for a in range(24) for b in range(14)), key=lambda x: (-x[0], x[1], x[2]))
    assert [(s.layer, s.head) for s in r.ranking[:5]] == [(a, b) for _, a, b in order[:5]]
    # The note's claim: several heads put more than half their weight on 사과를.
    assert sum(1 for s in r.ranking if s.score > 0.5) >= 3
