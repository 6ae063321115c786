"""Progress that leaves no trace: transient lines fit the terminal, one notice stays.

A progress line longer than the terminal wraps, and erasing it clears only its last row;
so each line is cut to the width, in the middle, keeping the file name at its end.
"""

from __future__ import annotations

import io
import os

import pytest
from rich.cells import cell_len as cells

from attnscope.cli.terminal import Terminal
from attnscope.render.fit import middle

PATH = "/root/.cache/attnscope-real/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True

    def fileno(self) -> int:
        return 2


@pytest.mark.parametrize("columns", [40, 60, 100])
def test_progress_line_fits_the_terminal(monkeypatch: pytest.MonkeyPatch, columns: int) -> None:
    err = Tty()
    monkeypatch.setattr("sys.stderr", err)
    monkeypatch.setattr(os, "get_terminal_size", lambda fd=0: os.terminal_size((columns, 24)))
    terminal = Terminal()
    terminal.progress(f"loading {PATH}")
    terminal.progress("민수는 사과를 샀다. 그는 그것을 먹었다. " * 4)
    terminal.line("attnscope: error: x")
    raw = err.getvalue()
    shown = [part.removeprefix("\x1b[2K") for part in raw.split("\r") if part]
    assert shown[0].startswith("attnscope: loading") and shown[0].endswith("q4_k_m.gguf")
    for line in shown[:2]:
        assert cells(line) < columns  # never wraps, so one erase clears it
    assert raw.endswith("\r\x1b[2Kattnscope: error: x\n")  # erased before the line that stays


def test_progress_is_silent_off_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    Terminal().progress(f"loading {PATH}")
    assert err.getvalue() == ""


@pytest.mark.parametrize(
    ("text", "width"), [(PATH, 30), ("민수는 사과를 샀다. 그는 그것을 먹었다.", 15), ("short", 10)]
)
def test_a_progress_line_is_cut_in_the_middle(text: str, width: int) -> None:
    got = middle(text, width)
    assert cells(got) <= width
    if cells(text) <= width:
        assert got == text
    else:
        head, tail = got.split("…")
        assert text.startswith(head) and text.endswith(tail) and len(head) > 0 and len(tail) > 0


def test_said_is_a_key_and_values_worded_by_the_catalogue() -> None:
    """Loading hands over a catalogue key and string values; the words come from the catalogue."""
    from attnscope.model.said import Said
    from attnscope.render.i18n import t

    said = Said.of("loaded", seconds=2.4, device="cpu", dtype="float32")
    assert said == Said("loaded", {"seconds": "2.4", "device": "cpu", "dtype": "float32"})
    assert Terminal("en").worded(said) == "loaded in 2.4 s (cpu, float32)" == t("en", "progress.loaded", **said.values)


def test_progress_in_korean(monkeypatch: pytest.MonkeyPatch) -> None:
    """With --lang ko (or ATTNSCOPE_LANG=ko) the loading lines on stderr are Korean."""
    from attnscope.model.said import Said

    err = Tty()
    monkeypatch.setattr("sys.stderr", err)
    monkeypatch.setattr(os, "get_terminal_size", lambda fd=0: os.terminal_size((100, 24)))
    terminal = Terminal("ko")
    terminal.progress(Said.of("loading", model=PATH))
    terminal.progress(Said.of("loaded", seconds="2.4", device="cpu", dtype="float32"))
    terminal.say(Said.of("waiting_pid", pid=42, file="x.gguf", lock="/c/x.lock"))
    shown = [part.removeprefix("\x1b[2K") for part in err.getvalue().split("\r") if part]
    assert shown[0] == f"attnscope: 모델을 불러온다: {PATH}"
    assert shown[1] == "attnscope: 2.4초 만에 불러왔다(CPU, float32)"
    assert shown[-1] == (
        "attnscope: 다른 attnscope 프로세스(pid 42)가 x.gguf 파일을 변환하고 있다. 끝날 때까지 기다린다(/c/x.lock)\n"
    )
    monkeypatch.setenv("ATTNSCOPE_LANG", "ko")  # no --lang given: the environment decides
    assert Terminal().worded(Said.of("hashing", file="x.gguf")) == "파일 해시를 계산한다: x.gguf"
    assert Terminal().worded("a line that is not a Said") == "a line that is not a Said"
    monkeypatch.delenv("ATTNSCOPE_LANG")
    assert Terminal().worded(Said.of("loaded", seconds="1.0", device="cpu", dtype="float32")).endswith("(cpu, float32)")
