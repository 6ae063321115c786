from __future__ import annotations

import pytest

from attnscope.cli.flags import cli_text
from attnscope.cli.parse import parse_indices, parse_one
from attnscope.core.prompt.spec import IndexRange, Selection, resolve
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
        ("-3--1", [21, 22, 23]),
        ("20--1", [20, 21, 22, 23]),
    ],
)
def test_specs(spec, expected):
    assert resolve(parse_indices(spec, "layer"), 24, "layer") == expected


def test_the_cli_parses_and_the_core_resolves():
    assert parse_indices("0,3,20-23", "layer") == [0, 3, IndexRange(20, 23)]
    assert parse_indices(" all ", "head") is None
    assert Selection(layers=[0, -1], heads=None).layer_indices(24) == [0, 23]
    assert Selection(layers=[*range(20, 24)]).layer_indices(24) == [20, 21, 22, 23]
    assert Selection().head_indices(4) == [0, 1, 2, 3]
    assert parse_one("-1", "layer") == -1


@pytest.mark.parametrize(
    "spec,message",
    [
        ("3-", "--layer '3-' is not a range"),
        ("a", "--layer 'a' is not a number"),
        ("5-2", "--layer '5-2' runs backwards"),
        ("1,,2", "has an empty item"),
    ],
)
def test_bad_specs(spec, message):
    with pytest.raises(AttnscopeError) as bad:
        parse_indices(spec, "layer")
    assert message in cli_text(bad.value)  # the CLI's line names its flag


@pytest.mark.parametrize(
    "items,message",
    [
        ([24], "layer 24 is out of range: the model has 24 layers"),
        ([IndexRange(-1, 3)], "layer '-1-3' runs backwards"),
        ([], "layers is empty"),
    ],
)
def test_bad_selections(items, message):
    with pytest.raises(AttnscopeError, match=message) as bad:
        Selection(layers=items).layer_indices(24)
    assert "--" not in bad.value.message


@pytest.mark.parametrize("spec", ["all", "0,1", "0-3"])
def test_one_index(spec):
    with pytest.raises(AttnscopeError) as bad:
        parse_one(spec, "head")
    assert cli_text(bad.value).startswith(f"--head '{spec}': give one head here")


def test_pos_is_one_grammar_wherever_it_is_given():
    """--pos: the layers' grammar, its values joined when given twice; one position where a command
    takes one; stats' ``last`` is -1 and its positions count from 1."""
    from attnscope.cli.parse import parse_pos, parse_positions
    from attnscope.core.prompt.params import STATS_POS
    from attnscope.core.stats.options import StatsConfig

    assert parse_positions(["0,3", "5-8"]) == parse_positions(["0,3,5-8"]) == [0, 3, IndexRange(5, 8)]
    assert parse_positions(["all"]) is None and parse_positions(None) is None
    assert parse_pos(["-1"]) == -1 and parse_pos(None) is None
    for spec in (["all"], ["0,3"], ["3", "5"], ["1-2"]):
        with pytest.raises(AttnscopeError) as bad:
            parse_pos(spec)
        assert cli_text(bad.value).startswith(f"--pos '{','.join(spec)}': give one position here")
    with pytest.raises(AttnscopeError) as bad:
        parse_pos(["x"])
    assert cli_text(bad.value).startswith("--pos 'x' is not a number")
    assert STATS_POS.parse("pos", "last") == [-1] == STATS_POS.parse("pos", -1)
    for zero in ("0", "0-3", "2,0", 0):
        with pytest.raises(AttnscopeError, match="position 0 can only attend to itself"):
            STATS_POS.parse("pos", zero)
    keys = {spec: StatsConfig(pos=spec).pos_key() for spec in ("all", "ALL", "last", "-1", " 1 , 3-5 ", "-3--1")}
    assert keys == {"all": "all", "ALL": "all", "last": "last", "-1": "last", " 1 , 3-5 ": "1,3-5", "-3--1": "-3--1"}
    assert StatsConfig(pos="-1").fingerprint(None)["pos"] == "last" == StatsConfig(pos="-1").record(None).pos
