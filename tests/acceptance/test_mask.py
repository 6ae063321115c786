"""attnscope mask: the note's figure, real padded batches against eager, and a broken mask caught."""

from __future__ import annotations

import pytest

from attnscope.core.mask import mask

from support import SEED


@pytest.mark.slow
@pytest.mark.parametrize("side", ["right", "left"])
def test_real_model_two_korean_prompts(real_loaded, side):
    r = mask(real_loaded, [SEED, "사과를 샀다."], padding_side=side)
    assert r.agrees_with_model is True and r.agrees_with_eager is True
    assert r.layers_checked == 24
    seq = r.sequences[1]
    n = len(seq.tokens)
    assert len(seq.padded_rows) == n - 7 > 0
    assert "샀 1/2" in seq.tokens
    assert r.pad_columns is not None and r.pad_columns.max_weight == 0.0
    assert r.pad_columns.heads == 14
    (p,) = r.pad_rows
    if side == "left":
        assert p.allowed_keys == 0 and p.capture_max == 0.0
        assert p.eager_min == pytest.approx(1 / n) and p.eager_max == pytest.approx(1 / n)
    else:
        assert p.allowed_keys == 7 and p.eager_vs_capture < 1e-4
