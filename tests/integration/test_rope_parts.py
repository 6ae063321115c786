"""`rope`: speeds against the formula and the model's buffer, the relative check against complex rotation, a broken rotary."""

from __future__ import annotations

import pytest

from attnscope.core import rope as rope_mod
from attnscope.errors import AttnscopeError

from support import families


def test_missing_rope_theta(tokenizer):
    model = families.model("qwen2", len(tokenizer))
    model.config.rope_parameters = {"rope_theta": 5.0}
    assert rope_mod.rope_theta(model, 0) == (5.0, "default")
    model.config.rope_parameters = {"rope_type": "default"}
    with pytest.raises(AttnscopeError, match="qwen2: config.rope_parameters has no rope_theta"):
        rope_mod.rope_theta(model, 0)
