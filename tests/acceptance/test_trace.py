"""`trace`: rows against the model's own hidden states and logits, the compare rows, a broken lens, CLI, render."""

from __future__ import annotations

import pytest

from attnscope.core.trace import trace

from support import SEED


@pytest.mark.slow
def test_real_model_trace(real_loaded):
    r = trace(real_loaded, SEED)
    assert len(r.rows) == 25 and r.check.ok and r.check.hidden_states_last_normed == 0.0
    assert r.compare is not None and r.compare.same_id  # the two '.' tokens
    assert r.compare.rows[0].max_abs_diff == 0.0 and r.compare.rows[1].max_abs_diff > 0
