"""attnscope tui in a real terminal (tmux, 160x48) on the real model: the mean chart of 그것을 shows the
keys and weights `weights --query 그것을` prints, sorting on the weight on 사과를 puts L20 H6 first
(the note's head), and q leaves the terminal as it was."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support import SEED

ROOT = Path(__file__).resolve().parents[2]
BAR = re.compile(r"^\s*(\S+)\s+(\d\.\d\d)\s+[█▏▎▍▌▋▊▉]")


def chart(lines: list[str]) -> list[tuple[str, str]]:
    """(key, weight) of each bar of the note's chart in ``lines``."""
    return [(m.group(1), m.group(2)) for line in lines if (m := BAR.match(line))]


def tmux(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    """tmux on a server of this test's own (``-L``), so no other tmux session is touched."""
    return subprocess.run(["tmux", "-L", name, *args], capture_output=True, text=True, check=True)


def pane(name: str) -> list[str]:
    return tmux(name, "capture-pane", "-t", name, "-p").stdout.splitlines()


def wait_for(name: str, seen: str, timeout: float) -> list[str]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        lines = pane(name)
        if any(seen in line for line in lines):
            return lines
        time.sleep(1)
    raise AssertionError(f"{seen!r} never showed:\n" + "\n".join(pane(name)))


@pytest.mark.slow
def test_tui_under_tmux(real_model: Path) -> None:
    pytest.importorskip("textual")
    if shutil.which("tmux") is None:
        if os.environ.get("CI"):
            raise AssertionError("tmux is missing (.ci/run installs it)")
        pytest.skip("tmux is not installed")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}
    env.pop("ATTNSCOPE_LANG", None)
    weights = subprocess.run(
        [sys.executable, "-m", "attnscope", "weights", SEED, "--query", "그것을", "--model", str(real_model)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=900,
    )
    assert weights.returncode == 0, weights.stderr
    want = chart(weights.stdout.splitlines())
    assert len(want) >= 4

    name = f"attnscope-tui-{os.getpid()}"
    command = " ".join(
        shlex.quote(a)
        for a in [
            sys.executable,
            "-m",
            "attnscope",
            "tui",
            SEED,
            "--query",
            "그것을",
            "--key",
            "사과를",
            "--model",
            str(real_model),
        ]
    )
    script = f"cd {shlex.quote(str(ROOT))} && PYTHONPATH={shlex.quote(str(ROOT))} {command}; echo EXITED $?; sleep 300"
    tmux(
        name,
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-s",
        name,
        "-x",
        "160",
        "-y",
        "48",
        "unset COLUMNS LINES; " + script,
    )
    try:
        wait_for(name, "mean over every layer and head", 900)
        time.sleep(1)
        lines = pane(name)
        right = [line.split("▏", 1)[1] for line in lines if "▏" in line]
        assert chart(right) == want, "\n".join(lines)
        tmux(name, "send-keys", "-t", name, "o", "o")
        lines = wait_for(name, "on K ↓", 30)
        time.sleep(1)
        rows = [line for line in pane(name) if re.match(r"^ L\d+ H\d+ ", line)]
        assert rows[0].split()[:2] == ["L20", "H6"], rows[:3]
        tmux(name, "send-keys", "-t", name, "q")
        lines = wait_for(name, "EXITED", 60)
        assert [line for line in lines if line.strip()] == ["EXITED 0"], lines
    finally:
        subprocess.run(["tmux", "-L", name, "kill-server"], check=False, capture_output=True)
