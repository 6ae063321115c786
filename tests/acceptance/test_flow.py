"""``flow`` on the real model: the note's sentence, against the reference that materialises every part."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from attnscope.core.causal.flow import flow

from support.flow import reference, value, walk

PROMPT = "민수는 사과를 샀다. 그는 그것을 먹었다. 민수가 먹은 것은"


@pytest.mark.slow
def test_real_model_routes_equal_the_reference(real_loaded: Any) -> None:
    r = flow(real_loaded, PROMPT)
    assert r.prediction_text == " 사"
    for c in r.layers:
        assert c.attention_error < 1e-4 and c.mlp_error < 1e-4, c
    groups = [[j] for j in range(r.pos + 1)]
    ref = reference(Path(real_loaded.path), r.token_ids, groups, False)
    assert {(e.layer, e.kind, e.block, e.from_, e.to, e.head) for e in r.edges} == walk(
        ref, r.pos, groups, r.threshold, False
    )
    for e in r.edges:
        assert abs(e.importance - value(ref, groups, e)) < 1e-5
    # the note's question: 사과를 (positions 3-5) reaches the prediction through attention
    assert any(e.kind == "attention" and e.from_ in (3, 4, 5) for e in r.edges)
