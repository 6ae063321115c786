"""Batch mode, the Python API and --device-map, against one-prompt-at-a-time and eager rows."""

from __future__ import annotations

import json

import pytest

from attnscope.core.weights import batch
from attnscope.errors import AttnscopeError, ExitCode

from support import SEED


def test_read_plain_lines_skips_blanks_and_keeps_line_numbers():
    raw = [b"first prompt\n", b"\n", b"   \n", "둘째 줄\r\n".encode(), b"{not json but plain}\n"]
    got = list(batch.read_entries(raw, "lines"))
    assert got == [batch.Item(1, "first prompt"), batch.Item(4, "둘째 줄"), batch.Item(5, "{not json but plain}")]


def test_read_jsonl_auto_detected_and_bad_lines_named():
    raw = [
        b"\n",
        json.dumps({"prompt": SEED, "query": "그것을", "occurrence": 1}, ensure_ascii=False).encode() + b"\n",
        b'{"prompt": "x", "pos": true}\n',
        b'{"prompt": "x", "qeury": "x"}\n',
        b"[1, 2]\n",
        b'{"prompt": 3}\n',
        b'{"prompt": "ok", "pos": -2}\n',
        b'{"prompt": "broken\n',
        b'{"prompt": "\xff"}\n',
    ]
    got = list(batch.read_entries(raw, "auto"))
    assert got[0] == batch.Item(2, SEED, query="그것을", occurrence=1)
    assert got[5] == batch.Item(7, "ok", pos=-2)
    bad = {e.line: e.error.message for e in got if isinstance(e, batch.BadLine)}
    assert sorted(bad) == [3, 4, 5, 6, 8, 9]
    assert "'pos' must be an integer" in bad[3]
    assert "unknown key(s) 'qeury'" in bad[4]
    assert "expected a JSON object" in bad[5]
    assert "'prompt' is missing or not a string" in bad[6]
    assert bad[8].startswith("line 8: not valid JSON")
    assert bad[9].startswith("line 9: not valid UTF-8")
    assert all(e.error.code == ExitCode.INPUT_FILE for e in got if isinstance(e, batch.BadLine))


def test_jsonl_by_file_name_even_when_first_line_is_odd():
    got = list(batch.read_entries([b"plain text\n"], "auto", name="x.jsonl"))
    assert isinstance(got[0], batch.BadLine)
    with pytest.raises(AttnscopeError, match="input_format"):
        list(batch.read_entries([b"x"], "csv"))
