"""``matrix``: one head's T x T weights against eager output_attentions, grouping rules, memory refusal."""

from __future__ import annotations

import pytest

from attnscope.cli.flags import cli_text
from attnscope.cli.parse import parse_window
from attnscope.core.matrix import check_memory, check_window
from attnscope.errors import AttnscopeError, ExitCode


def test_memory_refusal_gives_an_estimate(monkeypatch):
    monkeypatch.setenv("ATTNSCOPE_MEMORY_LIMIT", "8G")
    with pytest.raises(AttnscopeError) as exc:
        check_memory(100_000, 100_000)
    assert exc.value.code == ExitCode.RESOURCE
    assert "10,000,000,000 weights" in exc.value.message and "need about 931 GiB" in exc.value.message
    assert "use window A:B" in exc.value.message and "--" not in exc.value.message  # the library names its argument
    assert "--window A:B" in cli_text(exc.value)
    check_memory(1000, 1000)  # 100 MB fits


def test_parse_window():
    assert parse_window(None) is None and check_window(None, 10) == (0, 10)
    assert parse_window(":4") == (None, 4) and check_window((None, 4), 10) == (0, 4)
    assert parse_window("3:") == (3, None) and check_window((3, None), 10) == (3, 10)
    with pytest.raises(AttnscopeError, match="window '3:11' is out of range"):
        check_window((3, 11), 10)
    with pytest.raises(AttnscopeError, match="--window '3-4': write it as A:B"):
        parse_window("3-4")
