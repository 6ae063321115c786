"""The CLI as a pipe and a terminal sees it: fast --help, quiet broken pipes, NO_COLOR, --width.

``--help`` and the pipe test run ``python -m attnscope`` in a subprocess (a real pipe, a
fresh interpreter); the rest go through ``CliRunner``, whose stdout is not a TTY.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len

from support import SEED
from support.commands import CIRCUIT_PAIRS

ROOT = Path(__file__).resolve().parents[2]


ANSI = re.compile(r"\x1b\[[0-9;]*m")


COLOUR = re.compile(r"\x1b\[[0-9;]*(?:38|48);[25];[0-9;]*m")  # a foreground/background colour


def test_broken_pipe_exits_quietly(model_dir: Path, tmp_path: Path) -> None:
    # ~12k tokens: far more than a pipe buffer holds, so writes continue after head exits.
    long_prompt = tmp_path / "long.txt"
    long_prompt.write_text(" ".join([SEED] * 400), encoding="utf-8")
    stdout, stderr = _first_line_through_head(f'tokens - --model "{model_dir}" < "{long_prompt}"', tmp_path)
    assert stdout.count("\n") == 1 and "tokens" in stdout  # head got its one line
    assert stderr == ""


def _first_line_through_head(args: str, tmp_path: Path) -> tuple[str, str]:
    """``python -m attnscope ARGS | head -1`` in bash: (what head printed, attnscope's stderr), after
    checking that attnscope exited 0 with no broken-pipe noise once head closed the pipe."""
    err, rc = tmp_path / "err.txt", tmp_path / "rc.txt"
    script = f'"{sys.executable}" -m attnscope {args} 2> "{err}" | head -1; echo "${{PIPESTATUS[0]}}" > "{rc}"'
    res = subprocess.run(
        ["bash", "-c", script],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert rc.read_text().strip() == "0"
    stderr = err.read_text()
    assert "BrokenPipe" not in stderr and "Traceback" not in stderr and "Exception ignored" not in stderr
    return res.stdout, stderr


def test_non_tty_output_is_plain_text_and_korean(cli: Any, model_dir: Path) -> None:
    res = cli("weights", SEED, "--model", str(model_dir), "--layer", "0-1")
    assert res.exit_code == 0, res.stderr
    assert not ANSI.search(res.stdout)
    assert "사과를" in res.stdout or "사 1/2" in res.stdout
    assert "ì" not in res.stdout and "�" not in res.stdout  # no byte-level mojibake
    tokens = cli("tokens", SEED, "--model", str(model_dir))
    assert not ANSI.search(tokens.stdout) and "민 1/3" in tokens.stdout


def test_colour_when_forced_and_none_with_no_color(cli: Any, model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    args = ("weights", SEED, "--model", str(model_dir), "--layer", "0-2")
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("COLORTERM", "truecolor")
    forced = cli(*args)
    assert forced.exit_code == 0
    assert COLOUR.search(forced.stdout)  # the heat strip is coloured on a terminal
    monkeypatch.setenv("NO_COLOR", "1")
    plain = cli(*args)
    assert plain.exit_code == 0
    assert not COLOUR.search(plain.stdout)
    assert ANSI.sub("", plain.stdout) == ANSI.sub("", forced.stdout)  # same view, colour aside


EVERY_VIEW = [
    ["weights", SEED, "--per-head", "--layer", "1"],
    ["tokens", SEED],
    ["mask", SEED, "hello world"],
    ["heads", SEED, "-q", "그것을", "-k", "사과를"],
    ["matrix", SEED, "--layer", "0", "--head", "0"],
    ["info"],
    ["trace", SEED],
    ["explain", SEED, "--layer", "0", "--head", "0"],
    ["rope"],
    ["reuse", SEED, " 그리고"],
    ["circuit", "--pairs", CIRCUIT_PAIRS, "--method", "eap", "--check", "2", "--bootstrap", "20"],
]


CHAT_COMMANDS = [a for a in EVERY_VIEW if a[0] in ("weights", "tokens", "mask", "heads", "matrix", "trace", "explain")]


@pytest.mark.parametrize("args", CHAT_COMMANDS, ids=[a[0] for a in CHAT_COMMANDS])
def test_chat_and_system_reach_every_command(cli: Any, model_dir: Path, args: list[str]) -> None:
    # The shared options arrive through one option group; each command must pass both on.
    system = "규칙: 짧게 답한다."
    res = cli(*args, "--model", str(model_dir), "--chat", "--system", system, "--json")
    assert res.exit_code == 0, res.stderr
    text = json.dumps(json.loads(res.stdout), ensure_ascii=False)
    assert system in text and "<|im_start|>system" in text
    plain = cli(*args, "--model", str(model_dir), "--json")
    assert plain.exit_code == 0, plain.stderr
    assert "<|im_start|>" not in json.dumps(json.loads(plain.stdout), ensure_ascii=False)


@pytest.mark.parametrize("args", EVERY_VIEW, ids=[a[0] for a in EVERY_VIEW])
def test_width_bounds_every_line_and_no_colour_off_a_tty(
    cli: Any, model_dir: Path, args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for width in (40, 60, 100):
        res = cli(*args, "--model", str(model_dir), "--width", str(width))
        assert res.exit_code == 0, res.stderr
        assert not ANSI.search(res.stdout)  # CliRunner's stdout is not a TTY: plain text
        widest = max(cell_len(line) for line in res.stdout.splitlines())  # Korean is two cells wide
        assert widest <= width, (args[0], width, widest)
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("NO_COLOR", "1")
    res = cli(*args, "--model", str(model_dir), "--width", "100")
    assert res.exit_code == 0 and not COLOUR.search(res.stdout)


def test_json_is_one_document_in_one_line(cli: Any, model_dir: Path) -> None:
    res = cli("weights", SEED, "--model", str(model_dir), "--json")
    assert res.exit_code == 0
    assert res.stdout.endswith("\n") and res.stdout.count("\n") == 1
    doc = json.loads(res.stdout)
    assert doc["schema"] == "attnscope.weights/3"
    assert "민수는" in res.stdout  # ensure_ascii=False: Korean stays Korean in JSON too


def test_failure_after_computing_leaves_stdout_empty(cli: Any, model_dir: Path) -> None:
    # The SVG export fails after the rows were computed; the JSON must not have been written.
    res = cli("weights", SEED, "--model", str(model_dir), "--json", "--svg", "/no/such/dir/view.svg")
    assert res.exit_code == 2
    assert res.stdout == ""
    assert res.stderr.splitlines()[-1].startswith("attnscope: error: cannot write /no/such/dir/view.svg")


def test_svg_and_html_export_keep_korean(cli: Any, model_dir: Path, tmp_path: Path) -> None:
    svg, html = tmp_path / "v.svg", tmp_path / "v.html"
    res = cli("weights", SEED, "--model", str(model_dir), "--layer", "0", "--svg", str(svg), "--html", str(html))
    assert res.exit_code == 0
    assert "<svg" in svg.read_text(encoding="utf-8") and "<html" in html.read_text(encoding="utf-8").lower()
    assert "민" in svg.read_text(encoding="utf-8") and "민" in html.read_text(encoding="utf-8")
    assert "http://" not in html.read_text(encoding="utf-8").replace("http://www.w3.org", "")  # no CDN


def test_internal_error_is_one_line_not_a_traceback(cli: Any, model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import attnscope.core.weights as core_weights

    def boom(*_a: Any, **_k: Any) -> Any:
        raise RuntimeError("something\nwent wrong")

    monkeypatch.setattr(core_weights, "weights", boom)
    monkeypatch.delenv("ATTNSCOPE_DEBUG", raising=False)
    res = cli("weights", SEED, "--model", str(model_dir))
    assert res.exit_code == 70 and res.stdout == ""
    last = res.stderr.splitlines()[-1]
    assert last == (
        "attnscope: internal error: RuntimeError: something went wrong (set ATTNSCOPE_DEBUG=1 for the traceback)"
    )
    assert "Traceback" not in res.stderr


@pytest.mark.parametrize("args", EVERY_VIEW, ids=[a[0] for a in EVERY_VIEW])
def test_every_command_writes_one_json_line(cli: Any, model_dir: Path, args: list[str]) -> None:
    res = cli(*args, "--model", str(model_dir), "--json")
    assert res.exit_code == 0, res.stderr
    assert res.stdout.count("\n") == 1
    assert json.loads(res.stdout)["schema"].startswith(f"attnscope.{args[0]}/")


def test_broken_pipe_in_batch_mode_exits_quietly(model_dir: Path, tmp_path: Path) -> None:
    # Batch mode writes one JSON line per prompt as it goes; head closes the pipe after the first.
    prompts = tmp_path / "many.txt"
    prompts.write_text((SEED + "\n") * 300, encoding="utf-8")
    stdout, stderr = _first_line_through_head(f'weights --input "{prompts}" --json --model "{model_dir}"', tmp_path)
    assert json.loads(stdout)["input_line"] == 1
    assert all(line.startswith("attnscope: ") for line in stderr.splitlines())
