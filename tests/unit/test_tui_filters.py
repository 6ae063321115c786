"""The heads table's filter and its per-head numbers, with no model and no Textual."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnscope.errors import AttnscopeError
from attnscope.results.derive import head_rows
from attnscope.tui.filters import Term, keep, parse


def test_terms_parse_as_written() -> None:
    assert parse("L20") == [Term("layer", "=", 20.0)]
    assert parse("l20h6") == [Term("layer", "=", 20.0), Term("head", "=", 6.0)]
    assert parse("sink>0.5, kv=1") == [Term("sink", ">", 0.5), Term("kv", "=", 1.0)]
    assert parse("effect<=-.25 entropy<1") == [Term("effect", "<=", -0.25), Term("entropy", "<", 1.0)]
    assert parse("  ") == []


@pytest.mark.parametrize("bad", ["sink>>0.5", "L", "nope=1", "sink>", "20", "kv=one"])
def test_a_term_that_does_not_parse_is_named(bad: str) -> None:
    with pytest.raises(AttnscopeError) as got:
        parse(f"L1 {bad}")
    assert got.value.kind == "tui_filter" and got.value.values["term"] == bad


def test_every_term_must_hold_and_a_missing_value_fails() -> None:
    row = {"layer": 20.0, "head": 6.0, "kv": 1.0, "sink": 0.7, "effect": None}
    assert keep(parse("L20 H6 kv=1 sink>0.5"), row)
    assert not keep(parse("L20 sink<0.5"), row)
    assert not keep(parse("effect<0"), row)


def test_head_rows_by_hand() -> None:
    rows = np.array([[[0.5, 0.25, 0.25, 0.0], [0.0, 1.0, 0.0, 0.0]]], dtype=np.float32)  # (1, 2, 4)
    got = head_rows(rows, [1, 2])
    assert got.on_key.tolist() == [[0.5, 1.0]]
    assert got.top.tolist() == [[0, 1]]
    assert got.first.tolist() == [[0.5, 0.0]]
    want = -(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25))
    assert got.entropy[0, 0] == pytest.approx(want, rel=1e-6) and got.entropy[0, 1] == 0.0
