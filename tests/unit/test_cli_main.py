"""The real entry point (`python -m attnscope`): option-parsing errors are one line too."""

from __future__ import annotations

import subprocess
import sys

import pytest


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "attnscope", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    "args,needle",
    [
        (("weights", "x", "--width", "10"), "--width"),
        (("nosuch",), "No such command 'nosuch'"),
        (("weights", "x", "--bogus"), "No such option: --bogus"),
        (("heads", "x", "--query", "x"), "--key"),
    ],
)
def test_usage_errors_are_one_line(args, needle):
    res = run(*args)
    assert res.returncode == 2
    assert res.stdout == ""
    assert res.stderr.count("\n") == 1 and res.stderr.startswith("attnscope: error: ") and needle in res.stderr


def test_no_arguments_prints_help():
    res = run()
    assert res.returncode == 0 and "Commands:" in res.stdout and "weights" in res.stdout


def test_command_errors_keep_their_exit_code():
    res = run("mask", "--size", "0")
    assert res.returncode == 2 and res.stderr.strip() == "attnscope: error: --size 0: use 1..256"
