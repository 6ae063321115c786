"""The first-hour timings: what a new user meets before the first result.

Typos answered (a misspelt model path, a layer or head out of range, a query not in the prompt, an
empty prompt, a hub id without network), a good run on a warm cache, ``attnscope.load`` from
Python, and a first run on a cold GGUF cache. Each command runs in a fresh process from this
checkout (``python -m attnscope``); the median wall and CPU time of the whole process are reported.
``python bench/run.py --first-hour --tag NAME`` runs it and writes ``first-hour-NAME.{json,md}``.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

import machine
import process
import report
from inputs import SENTENCE

ENV = {"PYTHONPATH": str(machine.ROOT), "COLUMNS": "100", "HF_HUB_DISABLE_TELEMETRY": "1"}


def cases(model: str) -> list[tuple[str, list[str], dict[str, str]]]:
    """(label, attnscope arguments, extra environment): the typos a new user makes, and a good run."""
    misspelt = model[:-1] if model.endswith(".gguf") else model + "x"  # one letter short: .ggu
    with_model = {"ATTNSCOPE_MODEL": model}
    return [
        ("misspelt --model path", ["weights", "--model", misspelt, SENTENCE], {}),
        ("--layer 99", ["weights", "--layer", "99", SENTENCE], with_model),
        ("--head 99", ["weights", "--head", "99", SENTENCE], with_model),
        ("-q 바나나 (not in the prompt)", ["weights", "-q", "바나나", SENTENCE], with_model),
        ("empty prompt", ["weights", ""], with_model),
        ("hub id, offline, not cached", ["weights", "--model", "Qwen/No-Such-Model-0.5B", SENTENCE], {}),
        ("a good run (warm cache)", ["weights", "-q", "그것을", SENTENCE], with_model),
    ]


def time_module(args: list[str], env: dict[str, str], runs: int) -> dict[str, Any]:
    """Median and best wall time of ``python -m attnscope ARGS`` run from this checkout, and its stderr."""
    done = [process.run_once([sys.executable, "-m", "attnscope", *args], env={**ENV, **env}) for _ in range(runs)]
    walls = [r.wall_s for r in done]
    last = done[-1]
    return {
        "median_s": process.median(walls),
        "best_s": min(walls),
        "cpu_median_s": process.median([r.cpu_s for r in done]),
        "runs": runs,
        "exit": last.exit,
        "stderr": last.stderr.strip().splitlines()[-3:],
    }


def time_api_load(model: str, runs: int) -> dict[str, Any]:
    """Wall time of ``attnscope.load(model)`` inside Python (warm cache), and of the whole process
    (wall and CPU)."""
    code = (
        "import time; t0 = time.perf_counter(); import attnscope; "
        f"attnscope.load({model!r}); print(time.perf_counter() - t0)"
    )
    done = [process.run_once([sys.executable, "-c", code], env={"PYTHONPATH": str(machine.ROOT)}) for _ in range(runs)]
    inside = [float(r.stdout.split()[-1]) for r in done]
    return {
        "median_s": process.median(inside),
        "best_s": min(inside),
        "process_median_s": process.median([r.wall_s for r in done]),
        "process_cpu_median_s": process.median([r.cpu_s for r in done]),
    }


def cold_run(model: str) -> dict[str, Any]:
    """A good run on an empty GGUF cache: the conversion a first run pays, and the entry's size."""
    with tempfile.TemporaryDirectory(prefix="attnscope-cold-") as tmp:
        args = ["weights", "-q", "그것을", SENTENCE]
        record: dict[str, Any] = {"label": "first run, cold GGUF cache", "command": "attnscope " + " ".join(args)}
        record.update(time_module(args, {"ATTNSCOPE_MODEL": model, "ATTNSCOPE_CACHE": tmp}, 1))
        record["cache_mb"] = sum(p.stat().st_size for p in Path(tmp).rglob("*") if p.is_file()) / 2**20
    return record


def run(model: str, out_dir: Path, tag: str, runs: int = 5, cold: bool = True) -> int:
    """Time every case, then the API load, then (with ``cold``) a cold cache; write after each step."""
    doc: dict[str, Any] = {
        "schema": report.FIRST_HOUR_SCHEMA,
        "tag": tag,
        "started": machine.now(),
        "model": model,
        "git": machine.git_commit(),
        "machine": machine.facts(),
        "commands": [],
    }
    name = f"first-hour-{tag}"
    for label, args, env in cases(model):
        record = {"label": label, "command": "attnscope " + " ".join(args), **time_module(args, env, runs)}
        machine.log(
            f"{label}: median {record['median_s']:.2f} s, CPU {record['cpu_median_s']:.2f} s "
            f"(exit {record['exit']}) {record['stderr'][-1:]}"
        )
        doc["commands"].append(record)
        report.write(doc, out_dir, name)
    doc["api_load"] = time_api_load(model, runs)
    machine.log(f"attnscope.load: median {doc['api_load']['median_s']:.2f} s")
    report.write(doc, out_dir, name)
    if cold:
        doc["cold"] = cold_run(model)
        machine.log(
            f"cold cache: {doc['cold']['median_s']:.1f} s, cache {doc['cold']['cache_mb']:.0f} MB; "
            f"stderr {doc['cold']['stderr']}"
        )
    doc["finished"] = machine.now()
    doc["machine"]["load_average_at_end"] = machine.load_averages()
    report.write(doc, out_dir, name)
    machine.log(f"wrote {out_dir / (name + '.json')} and {out_dir / (name + '.md')}")
    return 0
