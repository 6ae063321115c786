"""The benchmarks' front door: the forward and generate benchmarks, the start-up timings, the first hour.

    python bench/run.py                         # the full table on the real 0.5B model
    python bench/run.py --lengths 256,1024 --capture-only '' --name smoke
    python bench/run.py --table-only            # rewrite the .md from the saved .json, measure nothing
    python bench/run.py --first-hour --tag after   # a new user's first hour

One measuring run times the forward kinds (bench/forward.py) at each length, then generation
(bench/generate.py), then the start-up of ``python``, ``attnscope --help`` and
``attnscope mask --size 8`` (bench/process.py; absent commands are reported as such). Each
measurement runs in a fresh process, whose whole-life peak RSS (``ru_maxrss`` from ``wait4``,
loading included) is recorded beside what it measured of itself. It writes ``<out>/<name>.json``
and, through bench/report.py, ``<out>/<name>.md``: the table, with ratios to the floor and the
targets of docs/performance.md. Nothing is tuned here; it reports.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import first_hour
import forward
import generate
import machine
import process
import report
from inputs import DEFAULT_MODEL, Setup, model_shape

HERE = Path(__file__).resolve().parent
KINDS = forward.KINDS + generate.KINDS
# (arguments, whether they go to python rather than to attnscope) of each start-up timing
STARTUP = ((["-c", "pass"], True), (["--help"], False), (["mask", "--size", "8"], False))


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--model", default=DEFAULT_MODEL)
    ap.add_argument("--lengths", default="256,1024,2048,4096,8192", help="T for every kind")
    ap.add_argument("--capture-only", default="16384", help="T for the capture kind only (memory target)")
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument(
        "--generate",
        default="1024:256",
        help="P:N,... generation of N new tokens after a P-token prompt (the generate_* kinds); '' for none",
    )
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype", default="auto")
    ap.add_argument("--threads", type=int, default=0, help="torch threads per measurement (0: torch's default)")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per measurement")
    ap.add_argument("--no-cli", action="store_true", help="skip timing attnscope --help and mask --size 8")
    ap.add_argument("--out", default=str(HERE / "results"))
    ap.add_argument("--name", default="cpu-real-0.5b")
    ap.add_argument(
        "--append",
        action="store_true",
        help="add these runs to an existing <out>/<name>.json (replacing its runs of the same T and kind)",
    )
    ap.add_argument("--reps", type=int, default=0, help="timed forwards per measurement (0: by T, 5 down to 1)")
    ap.add_argument(
        "--table-only",
        action="store_true",
        help="measure nothing: rewrite <out>/<name>.md from the existing <out>/<name>.json",
    )
    ap.add_argument(
        "--first-hour",
        action="store_true",
        help="time a new user's first hour instead (typos, attnscope.load, a cold GGUF cache); "
        "writes <out>/first-hour-<tag>.json and .md",
    )
    ap.add_argument("--tag", default="after", help="with --first-hour: the name of this measurement (before, after)")
    ap.add_argument("--no-cold", action="store_true", help="with --first-hour: skip the cold-cache run (~90 s, 2.4 GB)")
    ap.add_argument("--runs", type=int, default=5, help="with --first-hour: runs per command (the median is reported)")
    return ap


def new_doc(args: argparse.Namespace) -> dict[str, Any]:
    """An empty result for this run, or with ``--append`` the saved one's runs under this run's header."""
    shape = model_shape(args.model)
    doc: dict[str, Any] = {
        "schema": report.BENCH_SCHEMA,
        "started": machine.now(),
        "model": args.model,
        "device": args.device,
        "dtype": args.dtype,
        "machine": machine.facts(),
        "git": machine.git_commit(),
        "num_hidden_layers": shape.layers,
        "num_attention_heads": shape.heads,
        "weights_mb": shape.weights_mb,
        "runs": [],
        "cli": [],
    }
    previous = Path(args.out) / f"{args.name}.json"
    if args.append and previous.is_file():
        old = json.loads(previous.read_text())
        doc["started"], doc["runs"], doc["cli"] = old["started"], old["runs"], old.get("cli", [])
        doc["machine"]["load_average_at_start"] = old["machine"]["load_average_at_start"]
        doc["appended"] = old.get("appended", []) + [machine.now()]
    return doc


def startup(doc: dict[str, Any]) -> None:
    """Time each start-up command; new timings replace any appended-to ones."""
    doc["cli"] = []
    for cli_args, python in STARTUP:
        record = process.time_cli(cli_args, python=python)
        error = f" ({record['error']})" if "error" in record else ""
        machine.log(f"{record['command']}: best {record['best_s']:.3f} s{error}")
        doc["cli"].append(record)


def measure(args: argparse.Namespace, kinds: list[str]) -> int:
    """One measuring run: the forward kinds, then generation, then start-up, saving after each step."""
    setup = Setup(args.model, args.device, args.dtype, args.threads, args.reps, args.timeout)
    lengths = [int(x) for x in args.lengths.split(",") if x]
    capture_only = [int(x) for x in args.capture_only.split(",") if x]
    forwards = forward.plan(lengths, capture_only, kinds)
    generations = generate.parse(args.generate) if any(k in kinds for k in generate.KINDS) else []
    out_dir = Path(args.out)
    doc = new_doc(args)
    # runs measured again replace the saved ones of the same T and kind
    prompts = {p for p, _ in generations}
    doc["runs"] = [
        r
        for r in doc["runs"]
        if not ((r["T"], r["kind"]) in forwards or (r["kind"] in generate.KINDS and r["T"] in prompts))
    ]

    def save() -> None:
        report.write(doc, out_dir, args.name)

    forward.run(doc, forwards, setup, save)
    generate.run(doc, generations, setup, save)
    if not args.no_cli:
        startup(doc)
    doc["finished"] = machine.now()
    doc["machine"]["load_average_at_end"] = machine.load_averages()
    save()
    machine.log(f"wrote {out_dir / (args.name + '.json')} and {out_dir / (args.name + '.md')}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = parser()
    args = ap.parse_args(argv)
    if args.first_hour:
        return first_hour.run(args.model, Path(args.out), args.tag, runs=args.runs, cold=not args.no_cold)
    if args.table_only:
        report.rewrite(Path(args.out) / f"{args.name}.json")
        return 0
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = set(kinds) - set(KINDS)
    if unknown:
        ap.error(f"unknown kinds {sorted(unknown)}; use {','.join(KINDS)}")
    return measure(args, kinds)


if __name__ == "__main__":
    sys.exit(main())
