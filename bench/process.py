"""Whole-process timing: a command run as a user pays for it.

A fresh process pays for its interpreter start-up, its imports, the model load, the work and the
output. ``run_once`` measures all of it from the outside: wall time, CPU time (user + system) and
peak RSS from ``wait4``. The benchmarks build on it: ``child`` runs one measurement in a fresh
interpreter and reads its JSON answer, ``time_cli`` times the installed ``attnscope`` script.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from machine import ROOT


@dataclass(frozen=True)
class Run:
    """One finished process, seen from outside."""

    wall_s: float
    cpu_s: float  # user + system
    peak_rss_mb: float  # ru_maxrss: the whole life of the process, start-up and loading included
    exit: int | None  # None when it was killed for running past its timeout
    stdout: str
    stderr: str


def run_once(
    cmd: list[str], env: dict[str, str] | None = None, timeout: float | None = None, cwd: Path | None = None
) -> Run:
    """Run ``cmd`` from ``cwd`` (the repository root) with ``env`` added to this environment, and wait for it."""
    killed = threading.Event()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=cwd or ROOT, env={**os.environ, **(env or {})})

        def kill() -> None:
            killed.set()
            proc.kill()

        timer = threading.Timer(timeout, kill) if timeout else None
        if timer:
            timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        if timer:
            timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    return Run(
        wall_s=wall,
        cpu_s=usage.ru_utime + usage.ru_stime,
        peak_rss_mb=usage.ru_maxrss / 1024,
        exit=None if killed.is_set() else proc.returncode,
        stdout=stdout,
        stderr=stderr,
    )


def median(values: list[float]) -> float:
    """The upper median, as every table reports it."""
    return sorted(values)[len(values) // 2]


def child(script: Path, spec: dict[str, Any], timeout: float) -> dict[str, Any]:
    """One measurement: ``python SCRIPT SPEC`` in a fresh interpreter, whose last stdout line is a JSON
    record; adds the process's wall time and its own peak RSS, or the error when it failed."""
    run = run_once([sys.executable, str(script), json.dumps(spec)], timeout=timeout)
    record: dict[str, Any] = {"kind": spec["kind"], "T": spec["T"], "process_wall_s": run.wall_s}
    record["process_peak_rss_mb"] = run.peak_rss_mb
    if run.exit != 0:
        reason = "timed out" if run.exit is None else f"exit {run.exit}"
        tail = " ".join(run.stderr.strip().splitlines()[-2:])[-300:]
        record["error"] = f"{reason}: {tail}"
        return record
    record.update(json.loads(run.stdout.strip().splitlines()[-1]))
    return record


def time_cli(args: list[str], runs: int = 9, python: bool = False) -> dict[str, Any]:
    """Best and median wall time of the installed ``attnscope`` script (no shell, no pyenv shim),
    or with ``python=True`` of ``python ARGS`` (the interpreter's own start-up, for reference)."""
    script = Path(sys.executable).with_name("attnscope")
    if python:
        cmd, name = [sys.executable], "python " + " ".join(args)
    else:
        cmd = [str(script)] if script.is_file() else [sys.executable, "-m", "attnscope"]
        name = "attnscope " + " ".join(args)
    done = [run_once(cmd + args, env={"COLUMNS": "100"}) for _ in range(runs)]
    walls = [r.wall_s for r in done]
    record: dict[str, Any] = {"command": name, "best_s": min(walls), "median_s": median(walls), "runs": runs}
    record["peak_rss_mb"] = max(r.peak_rss_mb for r in done)
    last = done[-1]
    if last.exit != 0:
        record["error"] = f"exit {last.exit}: {' '.join(last.stderr.split())[:200]}"
    return record
