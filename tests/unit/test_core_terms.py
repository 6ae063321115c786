"""The core speaks its own terms; the CLI adds its flags. Shared helpers have one home each."""

from __future__ import annotations

import pytest

from attnscope.cli.flags import cli_text
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
    assert cli_text(bad.value) == "--layer 99 is out of range: the model has 24 layers (0-23, or -1 to -24)"
    with pytest.raises(AttnscopeError) as bad:
        parse_one("0-3", "head")  # the CLI's own parsing names its flag itself
    assert cli_text(bad.value).startswith("--head '0-3': give one head here")
    with pytest.raises(AttnscopeError) as bad:
        one_of("avg", ("last", "mean"), "query_agg")
    assert bad.value.message == "query_agg 'avg': use last or mean"
    assert cli_text(bad.value) == "--query-agg 'avg': use last or mean"


def test_a_line_prefix_keeps_the_flag() -> None:
    inner = AttnscopeError("pos_range", arg="pos", n=40, count=5, last=4, neg=5)
    err = AttnscopeError("line", line=3, message=inner)
    assert str(err) == "line 3: pos 40 is out of range: the prompt has 5 tokens (0-4, or -1 to -5)"
    assert cli_text(err) == "line 3: --pos 40 is out of range: the prompt has 5 tokens (0-4, or -1 to -5)"
    assert str(AttnscopeError("needs", arg="system", other="chat")) == "system needs chat"
    assert cli_text(AttnscopeError("needs", arg="system", other="chat")) == "--system needs --chat"
    assert cli_text(AttnscopeError("needs", arg="key_occurrence", other="key"), "ko") == (
        "--key-occurrence는 --key와 함께 쓴다."
    )


def test_the_exit_code_belongs_to_the_kind() -> None:
    from attnscope.errors import ExitCode

    assert AttnscopeError("no_such_path", spec="x").code == ExitCode.MODEL
    assert AttnscopeError("prompt_empty").code == ExitCode.USAGE
    bad = AttnscopeError("line_utf8", n=3)  # a line's error exits with the wrapped error's code
    assert AttnscopeError("line", line=2, message=bad).code == bad.code == ExitCode.INPUT_FILE
    assert AttnscopeError("lines_failed", n=2, line=4, cause=bad).code == ExitCode.INPUT_FILE
