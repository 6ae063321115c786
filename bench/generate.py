"""The generate benchmark: N new tokens after a P-token prompt, greedy, three ways.

All three run in one subprocess (this file, run with one JSON spec), interleaved, so that a
machine shared with other work slows them alike; the best of the runs counts for each:

- ``generate_plain``    transformers' own ``model.generate`` under sdpa, nothing captured;
- ``generate_loop``     attnscope's decode loop (``core.generate.decode``), nothing captured;
- ``generate_capture``  the same loop keeping every new token's rows, all layers and heads.

``python bench/run.py --generate P:N`` runs it.

``python bench/generate.py --whole --model PATH.gguf`` times whole processes instead, as a user
pays for them (start-up, loading, generation and output; ``process.run_once``), interleaved,
best of ``--reps`` each, N new tokens after a P-token prompt (default 64 after 256):

- ``plain``        this file with ``--reference``: transformers loads attnscope's converted copy of
                   the model under sdpa and calls ``model.generate``; no attnscope code at all;
- ``json``         ``attnscope generate PROMPT -n N --layer all --head all --json`` (stdout to a file);
- ``json_arrays``  the same with ``--arrays FILE.safetensors``;
- ``view``         the same without ``--json``: the terminal view.

It writes ``bench/results/generate-whole-NAME.json`` and ``.md``.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import machine
import process
from inputs import Setup, synthetic_ids

KINDS = ("generate_plain", "generate_loop", "generate_capture")


def parse(text: str) -> list[tuple[int, int]]:
    """``"P:N,P:N"`` as (prompt tokens, new tokens) pairs; ``""`` for none."""
    out = []
    for item in text.split(","):
        if item:
            prompt, new = item.split(":")
            out.append((int(prompt), int(new)))
    return out


def run(doc: dict[str, Any], todo: list[tuple[int, int]], setup: Setup, save: Callable[[], None]) -> None:
    """Measure each (P, N) in a child process, adding one record per kind to ``doc["runs"]``."""
    for n_tokens, new in todo:
        spec = {
            "kind": "generate",
            "T": n_tokens,
            "new": new,
            "model": setup.model,
            "device": setup.device,
            "dtype": setup.dtype,
            "reps": setup.reps or 2,
            "threads": setup.threads,
        }
        machine.log(
            f"T={n_tokens}+{new} generate: {spec['reps']} run(s) of each kind, load avg {machine.load_average():.1f}"
        )
        record = process.child(Path(__file__).resolve(), spec, setup.timeout)
        parts = record.pop("parts", None)
        if parts is None:
            doc["runs"] += [{**record, "kind": k, "T": n_tokens, "new": new} for k in KINDS]
        else:
            for part in parts:
                part["process_peak_rss_mb"] = record.get("process_peak_rss_mb")
                part["load_average_after"] = machine.load_average()
                machine.log(f"T={n_tokens}+{new} {part['kind']}: {part['time_s']:.2f} s")
            doc["runs"] += parts
        save()


# --- the child: the three kinds in one process -----------------------------------------------------


def _generator(loaded: Any) -> Callable[[str, list[int], int], tuple[list[int], int]]:
    """``run(kind, prompt ids, n)``: the new ids and the number of row floats kept."""
    import torch

    from attnscope.core import generate as gen

    model = loaded.model
    device = next(model.parameters()).device

    def run(kind: str, ids: list[int], n: int) -> tuple[list[int], int]:
        if kind == "generate_plain":
            model.set_attn_implementation("sdpa")
            seq = torch.tensor([ids], device=device)
            with torch.inference_mode():
                out = model.generate(
                    seq,
                    attention_mask=torch.ones_like(seq),
                    do_sample=False,
                    max_new_tokens=n,
                    min_new_tokens=n,
                    pad_token_id=0,
                )
            return [int(i) for i in out[0, len(ids) :]], 0
        decoded = gen.decode(model, ids, max_new_tokens=n, keep_rows=kind == "generate_capture")
        return decoded.ids, sum(int(r.numel()) for r in decoded.rows)

    return run


def _timed(
    run: Callable[[str, list[int], int], tuple[list[int], int]],
    kind: str,
    prompt: list[int],
    new: int,
    rec: dict[str, Any],
) -> None:
    """One timed generation of ``kind``, appended to its record."""
    gc.collect()
    rss_before = machine.status_kb("VmRSS")
    reset_ok = machine.reset_peak()
    load_before = machine.load_average()
    t0, c0 = time.perf_counter(), time.process_time()
    ids, kept = run(kind, prompt, new)
    rec["times_s"].append(time.perf_counter() - t0)
    rec["cpu_times_s"].append(time.process_time() - c0)
    rec["peaks_mb"].append(machine.status_kb("VmHWM") / 1024 if reset_ok else None)
    rec["rss_before_forward_mb"] = rss_before / 1024
    rec["ids"] = ids
    rec["rows_kept_floats"] = kept
    rec["load_averages"].append(load_before)


def measure(spec: dict[str, Any]) -> dict[str, Any]:
    """Load the model, warm up, then time ``spec["reps"]`` rounds of the three kinds; one record per kind."""
    import torch

    from attnscope.capture.engine import load

    if spec.get("threads"):
        torch.set_num_threads(int(spec["threads"]))
    t_load = time.perf_counter()
    loaded = load(spec["model"], device=spec["device"], dtype=spec["dtype"])
    load_s = time.perf_counter() - t_load
    run = _generator(loaded)
    prompt = synthetic_ids(loaded.tokenizer, spec["T"])
    new = int(spec["new"])
    for kind in KINDS:  # warm-up: kernels, allocator, lazy imports
        run(kind, prompt[:64], 4)
    records: dict[str, dict[str, Any]] = {
        k: {"times_s": [], "cpu_times_s": [], "peaks_mb": [], "load_averages": []} for k in KINDS
    }
    for _ in range(spec["reps"]):
        for kind in KINDS:
            _timed(run, kind, prompt, new, records[kind])
    plain_ids = records["generate_plain"]["ids"]
    shared = {
        "T": spec["T"],
        "new": new,
        "load_s": load_s,
        "threads": torch.get_num_threads(),
        "device": str(next(loaded.model.parameters()).device),
        "dtype": loaded.info.dtype,
        "num_hidden_layers": loaded.info.num_hidden_layers,
        "num_attention_heads": loaded.info.num_attention_heads,
    }
    return {"parts": [_part(kind, records[kind], plain_ids, shared) for kind in KINDS]}


def _part(kind: str, rec: dict[str, Any], plain_ids: list[int], shared: dict[str, Any]) -> dict[str, Any]:
    """The record of one kind: its best run, every run, and whether its ids match transformers'."""
    best = min(range(len(rec["times_s"])), key=lambda i: rec["times_s"][i])
    return {
        "kind": kind,
        "T": shared["T"],
        "new": shared["new"],
        "times_s": rec["times_s"],
        "time_s": rec["times_s"][best],
        "cpu_times_s": rec["cpu_times_s"],
        "cpu_s": min(rec["cpu_times_s"]),
        "load_s": shared["load_s"],
        "rss_before_forward_mb": rec["rss_before_forward_mb"],
        "peak_rss_forward_mb": max((p for p in rec["peaks_mb"] if p is not None), default=None),
        "gpu_peak_mb": None,
        "rows_kept_mb": rec["rows_kept_floats"] * 4 / 2**20,
        "same_ids_as_plain": rec["ids"] == plain_ids,
        "new_tokens": len(rec["ids"]),
        "load_averages": rec["load_averages"],
        **{k: shared[k] for k in ("threads", "device", "dtype", "num_hidden_layers", "num_attention_heads")},
    }


# --- whole processes: attnscope generate beside plain transformers ---------------------------

WHOLE = ("plain", "json", "json_arrays", "view")


def reference(folder: str, prompt_file: str, new: int, out: str) -> None:
    """Plain transformers: load the converted folder under sdpa, greedy ``generate``; no attnscope code."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, attn_implementation="sdpa").eval()
    ids = torch.tensor([tok(Path(prompt_file).read_text(encoding="utf-8"))["input_ids"]])
    with torch.inference_mode():
        seq = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False, max_new_tokens=new)
    Path(out).write_text(json.dumps({"prompt_tokens": ids.shape[1], "ids": seq[0, ids.shape[1] :].tolist()}))


def whole(
    model: str,
    folder: str,
    n_prompt: int,
    new: int,
    reps: int,
    name: str,
    out: Path,
    kinds: tuple[str, ...] = WHOLE,
    root: Path = machine.ROOT,
    threads: int = 0,
) -> dict[str, Any]:
    """Each kind ``reps`` times, interleaved, as whole processes; the record of every run.
    ``root`` is the attnscope checkout the attnscope runs import (another one: a "before" run)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    prompt = tokenizer.decode(synthetic_ids(tokenizer, n_prompt))
    out.mkdir(parents=True, exist_ok=True)
    work = out / f".generate-whole-{name}"
    work.mkdir(exist_ok=True)
    prompt_file = work / "prompt.txt"
    prompt_file.write_text(prompt, encoding="utf-8")
    mine = [sys.executable, "-m", "attnscope", "generate", prompt, "-n", str(new), "--layer", "all", "--head", "all"]
    mine += ["--model", model, "--device", "cpu", "--dtype", "float32"]
    commands = {
        "plain": [
            sys.executable,
            __file__,
            "--reference",
            folder,
            str(prompt_file),
            str(new),
            str(work / "plain.json"),
        ],
        "json": [*mine, "--json"],
        "json_arrays": [*mine, "--json", "--arrays", str(work / "rows.safetensors")],
        "view": mine,
    }
    # torch's threads (OMP_NUM_THREADS), the same for every run; 0 leaves torch's default
    limit = {"OMP_NUM_THREADS": str(threads)} if threads else {}
    env = {"PYTHONPATH": str(root), "COLUMNS": "100", "NO_COLOR": "1", **limit}
    runs: dict[str, list[dict[str, Any]]] = {kind: [] for kind in kinds}
    for rep in range(reps):
        for kind in kinds:
            run = process.run_once(commands[kind], env={"PYTHONPATH": "", **limit} if kind == "plain" else env)
            if run.exit != 0:
                raise SystemExit(f"{kind} failed (exit {run.exit}): {run.stderr[-500:]}")
            record = {"wall_s": run.wall_s, "cpu_s": run.cpu_s, "peak_rss_mb": run.peak_rss_mb}
            record["stdout_mb"] = len(run.stdout.encode()) / 2**20
            if kind == "plain":
                record["ids"] = json.loads((work / "plain.json").read_text())["ids"]
            elif kind.startswith("json"):
                doc = json.loads(run.stdout)
                record["ids"] = [step["id"] for step in doc["steps"]]
                if kind == "json_arrays":
                    record["arrays_mb"] = (work / "rows.safetensors").stat().st_size / 2**20
            record["load_average_after"] = machine.load_average()
            runs[kind].append(record)
            machine.log(f"round {rep + 1} {kind}: {run.wall_s:.1f} s wall, {run.cpu_s:.1f} s CPU")
    for leftover in work.iterdir():
        leftover.unlink()
    work.rmdir()
    return {
        "schema": "attnscope.bench-generate-whole/1",
        "model": model,
        "prompt_tokens": n_prompt,
        "new_tokens": new,
        "reps": reps,
        "cpu_count": os.cpu_count(),
        "git": machine.git_commit(),
        "root": str(root),
        "threads": threads or None,
        "runs": runs,
    }


def whole_table(doc: dict[str, Any]) -> str:
    """The Markdown table of a whole-process record: best wall and CPU of each kind, × plain."""
    names = {
        "plain": "plain transformers `generate` (sdpa, nothing captured)",
        "json": "`attnscope generate --layer all --head all --json`",
        "json_arrays": "the same with `--arrays rows.safetensors`",
        "view": "the same without `--json` (the view)",
    }
    best = {kind: min(runs, key=lambda r: r["wall_s"]) for kind, runs in doc["runs"].items()}
    best_cpu = {kind: min(r["cpu_s"] for r in runs) for kind, runs in doc["runs"].items()}
    plain, plain_cpu = best["plain"]["wall_s"], best_cpu["plain"]
    lines = [
        f"# generate, {doc['new_tokens']} new tokens after a {doc['prompt_tokens']}-token prompt, whole processes",
        "",
        "| run | wall s | × plain | CPU s | × plain | peak RSS MB | output |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for kind in [k for k in WHOLE if k in best]:
        b = best[kind]
        output = f"{b['stdout_mb']:.1f} MB on stdout"
        if "arrays_mb" in b:
            output += f", {b['arrays_mb']:.1f} MB arrays file"
        lines.append(
            f"| {names[kind]} | {b['wall_s']:.1f} | {b['wall_s'] / plain:.2f} | {best_cpu[kind]:.1f} "
            f"| {best_cpu[kind] / plain_cpu:.2f} | {b['peak_rss_mb']:.0f} | {output} |"
        )
    same = all(r["ids"] == best["plain"]["ids"] for k in ("json", "json_arrays") for r in doc["runs"].get(k, []))
    lines += [
        "",
        f"Best of {doc['reps']} interleaved run(s) of each; {doc['cpu_count']} CPU cores, "
        f"{doc.get('threads') or 'default'} torch thread(s); the answers' token ids "
        + ("equal transformers' in every run." if same else "DIFFER from transformers'."),
    ]
    return "\n".join(lines) + "\n"


def whole_main(argv: list[str]) -> None:
    import argparse

    from ablate import converted_folder
    from inputs import DEFAULT_MODEL

    ap = argparse.ArgumentParser(description="attnscope generate as whole processes, beside plain transformers")
    ap.add_argument("--whole", action="store_true", required=True)
    ap.add_argument("--model", default=os.environ.get("ATTNSCOPE_MODEL") or DEFAULT_MODEL)
    ap.add_argument("--folder", help="the converted HF folder the plain run loads (default: attnscope's cache)")
    ap.add_argument("--prompt-tokens", type=int, default=256)
    ap.add_argument("--new", type=int, default=64)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--kinds", default=",".join(WHOLE), help="which runs, of " + ",".join(WHOLE))
    ap.add_argument("--root", default=str(machine.ROOT), help="the attnscope checkout to time (default: this one)")
    ap.add_argument("--threads", type=int, default=0, help="torch threads of every run (0: torch's default)")
    ap.add_argument("--name", default="cpu-real-0.5b")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"))
    args = ap.parse_args(argv)
    out = Path(args.out)
    folder = args.folder or converted_folder(args.model)
    kinds = tuple(k for k in args.kinds.split(",") if k)
    unknown = sorted(set(kinds) - set(WHOLE))
    if unknown:
        ap.error(f"--kinds: unknown {', '.join(unknown)}")
    doc = whole(
        args.model,
        folder,
        args.prompt_tokens,
        args.new,
        args.reps,
        args.name,
        out,
        kinds,
        Path(args.root),
        args.threads,
    )
    (out / f"generate-whole-{args.name}.json").write_text(json.dumps(doc, indent=2) + "\n")
    table = whole_table(doc)
    (out / f"generate-whole-{args.name}.md").write_text(table)
    print(table)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--reference":
        reference(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
        sys.exit(0)
    if "--whole" in sys.argv[1:]:
        sys.path.insert(0, str(machine.ROOT))
        whole_main(sys.argv[1:])
        sys.exit(0)
    if len(sys.argv) != 2:
        sys.exit(f"usage: python {sys.argv[0]} SPEC_JSON (one generation measurement; bench/run.py runs it)")
    sys.path.insert(0, str(machine.ROOT))
    print(json.dumps(measure(json.loads(sys.argv[1]))))
