"""`explain`: the hand computation against eager attention and o_proj's input, broken q/k/v/RoPE, CLI, render."""

from __future__ import annotations

import pytest

from attnscope.core.explain import explain

from support import SEED


@pytest.mark.slow
def test_real_model_explain(real_loaded):
    r = explain(real_loaded, SEED, query="그것을", layer=10, head=3)
    assert r.ok and r.kv_head == 0 and r.shared_heads == list(range(7))
    assert r.max_diff_weights < 1e-5 and r.max_diff_out < 1e-4
    assert r.rope.v_pre_vs_post == 0.0 and r.rope.k_rotated_vs_post < 1e-4
