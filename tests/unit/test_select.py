from __future__ import annotations

import pytest

from attnscope.core.select import parse_indices
from attnscope.errors import AttnscopeError


@pytest.mark.parametrize(
    "spec,expected",
    [
        ("all", list(range(24))),
        ("5", [5]),
        ("-1", [23]),
        ("0,3,20-23", [0, 3, 20, 21, 22, 23]),
        ("-2,1", [1, 22]),
        ("3-3", [3]),
    ],
)
def test_specs(spec, expected):
    assert parse_indices(spec, 24, "layer") == expected


@pytest.mark.parametrize(
    "spec,message",
    [
        ("24", "out of range: the model has 24 layers"),
        ("3-", "not a range"),
        ("a", "not a number"),
        ("5-2", "backwards"),
        ("1,,2", "empty"),
    ],
)
def test_bad_specs(spec, message):
    with pytest.raises(AttnscopeError, match=message):
        parse_indices(spec, 24, "layer")
