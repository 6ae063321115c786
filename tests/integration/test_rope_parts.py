"""`rope`: speeds against the formula and the model's buffer, the relative check against complex rotation, a broken rotary."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from attnscope.core import rope as rope_mod
from attnscope.errors import AttnscopeError


def test_missing_rope_theta():
    with pytest.raises(AttnscopeError, match="rope_theta"):
        rope_mod.rope_theta(SimpleNamespace(model_type="x", rope_parameters={"rope_type": "default"}))
    assert rope_mod.rope_theta(SimpleNamespace(rope_parameters={"rope_theta": 5.0})) == (5.0, "default")
