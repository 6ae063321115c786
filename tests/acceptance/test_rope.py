"""`rope`: speeds against the formula and the model's buffer, the relative check against complex rotation, a broken rotary."""

from __future__ import annotations

import pytest

from attnscope.core.rope import rope


@pytest.mark.slow
def test_real_model_rope(real_loaded):
    r = rope(real_loaded, layer=5, head=3)
    assert r.rope_theta == 1000000.0 and r.head_dim == 64 and len(r.pairs) == 32
    assert r.ok and r.relative_check.max_diff < 1e-5 * r.relative_check.max_abs_score + 1e-4
    assert r.v_check.v_pre_vs_post == 0.0
