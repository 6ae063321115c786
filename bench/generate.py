"""The generate benchmark: N new tokens after a P-token prompt, greedy, three ways.

All three run in one subprocess (this file, run with one JSON spec), interleaved, so that a
machine shared with other work slows them alike; the best of the runs counts for each:

- ``generate_plain``    transformers' own ``model.generate`` under sdpa, nothing captured;
- ``generate_loop``     attnscope's decode loop (``core.generate.decode``), nothing captured;
- ``generate_capture``  the same loop keeping every new token's rows, all layers and heads.

``python bench/run.py --generate P:N`` runs it.
"""

from __future__ import annotations

import gc
import json
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


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: python {sys.argv[0]} SPEC_JSON (one generation measurement; bench/run.py runs it)")
    sys.path.insert(0, str(machine.ROOT))
    print(json.dumps(measure(json.loads(sys.argv[1]))))
