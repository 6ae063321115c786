"""The core speaks its own terms; the CLI adds its flags. Shared helpers have one home each."""

from __future__ import annotations

import pytest

from attnscope.cli.parse import parse_one
from attnscope.core.prompt.spec import Selection, one_of
from attnscope.errors import AttnscopeError
from attnscope.render.common import ranges, span


@pytest.mark.parametrize(
    ("values", "en", "ko"),
    [
        ([], "-", "-"),
        ([4], "4", "4"),
        ([0, 1, 2, 3], "0-3", "0~3"),
        ([0, 1, 2, 3, 5, 7, 8], "0-3,5,7-8", "0~3, 5, 7~8"),  # gaps: each run on its own
        ([1, 3, 5], "1,3,5", "1, 3, 5"),
        ([9, 10, 11, 20], "9-11,20", "9~11, 20"),
    ],
)
def test_ranges_with_gaps(values: list[int], en: str, ko: str) -> None:
    assert ranges("en", values) == en and ranges("ko", values) == ko
    assert span("ko", 3, 3) == "3" and span("en", 0, 23) == "0-23"


def test_core_errors_name_the_value_not_the_flag() -> None:
    with pytest.raises(AttnscopeError) as bad:
        Selection(layers=[99]).layer_indices(24)
    assert bad.value.message == "layer 99 is out of range: the model has 24 layers (0-23, or -1 to -24)"
    assert bad.value.cli_message() == "--layer 99 is out of range: the model has 24 layers (0-23, or -1 to -24)"
    with pytest.raises(AttnscopeError) as bad:
        parse_one("0-3", "head")  # the CLI's own parsing names its flag itself
    assert bad.value.cli_message().startswith("--head '0-3': give one head here")
    with pytest.raises(AttnscopeError) as bad:
        one_of("avg", ("last", "mean"), "query_agg")
    assert bad.value.message == "query_agg 'avg': use last or mean"
    assert bad.value.cli_message() == "--query-agg 'avg': use last or mean"


def test_a_line_prefix_keeps_the_flag() -> None:
    err = AttnscopeError("line 3: pos 40 is out of range: the prompt has 5 tokens", option="pos")
    assert err.cli_message() == "line 3: --pos 40 is out of range: the prompt has 5 tokens"
    assert AttnscopeError("a system message needs chat=True", cli="--system needs --chat").cli_message() == (
        "--system needs --chat"
    )
