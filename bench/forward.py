"""The forward benchmark: attnscope's capture against a plain forward and eager ``output_attentions``.

Every measurement runs in its own subprocess (this file, run with one JSON spec), a fresh
interpreter that loads the model, warms up, then times the forward, so the peak memory of one
cannot leak into the next:

- ``plain``        the floor: the base decoder (``model.model``) under sdpa, no attentions, no logits;
- ``eager``        ``output_attentions=True`` under eager attention (what bertviz, inseq... use);
- ``capture``      attnscope's capture of the last query row, all layers and heads;
- ``capture_0_3``  the same for layers 0-3 only (the forward stops after layer 3);
- ``capture_norm`` ``capture`` plus the norm measure (``--measure norm``): ||f_h(x_j)|| for every
                   layer, head and key, and the completeness check at the query.

Each record holds the best wall time of the timed forwards and the process's peak RSS while they
ran (VmHWM after resetting it, once the model is loaded and warmed up). Eager is skipped where its
L x H x T^2 weights would not fit in the memory available. ``python bench/run.py`` runs it.
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
from inputs import Setup, Shape, synthetic_ids

KINDS = ("plain", "eager", "capture", "capture_0_3", "capture_norm")


def reps_for(n_tokens: int) -> tuple[int, bool]:
    """(timed forwards, whether to warm up at full length) for a length."""
    if n_tokens <= 256:
        return 5, True
    if n_tokens <= 1024:
        return 3, False
    if n_tokens <= 2048:
        return 2, False
    return 1, False


def plan(lengths: list[int], capture_only: list[int], kinds: list[str]) -> list[tuple[int, str]]:
    """(T, kind) in the order they run: every forward kind at every length, then capture alone."""
    out = [(t, k) for t in lengths for k in kinds if k in KINDS]
    return out + [(t, "capture") for t in capture_only if "capture" in kinds]


def eager_skip(n_tokens: int, shape: Shape, setup: Setup) -> str | None:
    """Why eager cannot run at this length here, or None when its weights fit."""
    half = setup.dtype in ("bfloat16", "float16") or (setup.dtype == "auto" and setup.device == "cuda")
    dtype_bytes = 2 if half else 4
    # every layer's weights are returned, plus one layer's scores/softmax in flight; keep 10% spare
    need_mb = (shape.layers * dtype_bytes + 3 * 4) * shape.heads * n_tokens**2 / 2**20
    free = machine.gpu_free_mb() if setup.device == "cuda" else machine.mem_available_mb() - shape.weights_mb
    free_mb = 0.9 * free
    if need_mb <= free_mb:
        return None
    return f"L×H×T² = {need_mb / 1024:.1f} GB > {free_mb / 1024:.1f} GB free"


def run(doc: dict[str, Any], todo: list[tuple[int, str]], setup: Setup, save: Callable[[], None]) -> None:
    """Measure each (T, kind) in a child process, adding its record to ``doc["runs"]``; ``save`` after each."""
    shape = Shape(doc["num_hidden_layers"], doc["num_attention_heads"], doc["weights_mb"])
    for n_tokens, kind in todo:
        reps, warmup_full = reps_for(n_tokens)
        reps = setup.reps or reps
        skipped = eager_skip(n_tokens, shape, setup) if kind == "eager" else None
        if skipped:
            machine.log(f"T={n_tokens} eager: skipped, {skipped}")
            doc["runs"].append({"kind": kind, "T": n_tokens, "skipped": skipped})
            continue
        spec = {
            "kind": kind,
            "T": n_tokens,
            "model": setup.model,
            "device": setup.device,
            "dtype": setup.dtype,
            "reps": reps,
            "warmup_full": warmup_full,
            "threads": setup.threads,
        }
        machine.log(f"T={n_tokens} {kind}: {reps} timed forward(s), load avg {machine.load_average():.1f}")
        record = process.child(Path(__file__).resolve(), spec, setup.timeout)
        record["load_average_after"] = machine.load_average()
        machine.log(
            f"T={n_tokens} {kind}: "
            + (record.get("error") or f"{record['time_s']:.2f} s, peak {record['peak_rss_forward_mb']:.0f} MB")
        )
        doc["runs"].append(record)
        save()


# --- the child: one measurement ------------------------------------------------------------------


def _forward_fn(kind: str, loaded: Any) -> Callable[[Any], Any]:
    """The call timed for ``kind``: a plain or eager decoder forward, or attnscope's capture."""
    import torch

    from attnscope.capture import anatomy, engine

    model = loaded.model
    n_layers = loaded.info.num_hidden_layers
    if kind == "plain":
        model.set_attn_implementation("sdpa")
    elif kind == "eager":
        model.set_attn_implementation("eager")
    device = next(model.parameters()).device
    decoder = anatomy.of(model).decoder

    def forward(ids: torch.Tensor) -> Any:
        mask = torch.ones_like(ids)
        if kind in ("plain", "eager"):
            with torch.inference_mode():
                return decoder(
                    input_ids=ids.to(device),
                    attention_mask=mask.to(device),
                    position_ids=engine.position_ids(mask).to(device),
                    use_cache=False,
                    output_attentions=kind == "eager",
                )
        layers = frozenset(range(n_layers)) if kind != "capture_0_3" else frozenset(range(min(4, n_layers)))
        norms = layers if kind == "capture_norm" else frozenset()
        request = engine.Request(positions=torch.tensor([[ids.shape[1] - 1]]), layers=layers, norms=norms)
        got = engine.run(model, ids, mask, request)
        engine.check_finite(got.rows)
        return got

    return forward


def _checks(kind: str, out: Any) -> tuple[float | None, float | None]:
    """(mean sum of the last row in the last layer, largest completeness difference) of one forward."""
    if kind == "eager":
        return float(out.attentions[-1][0, :, -1].sum(-1).mean()), None
    if kind.startswith("capture"):
        check = float(out.rows[max(out.rows)][0, :, 0].sum(-1).mean())
        return check, max(out.completeness.values()) if out.completeness else None
    return None, None


def measure(spec: dict[str, Any]) -> dict[str, Any]:
    """Load the model, warm up, then time ``spec["reps"]`` forwards of ``spec["kind"]`` at ``spec["T"]`` tokens."""
    import torch

    from attnscope.capture.engine import load

    if spec.get("threads"):
        torch.set_num_threads(int(spec["threads"]))
    t_load = time.perf_counter()
    loaded = load(spec["model"], device=spec["device"], dtype=spec["dtype"])
    load_s = time.perf_counter() - t_load
    kind, n_tokens = spec["kind"], spec["T"]
    forward = _forward_fn(kind, loaded)
    device = next(loaded.model.parameters()).device
    cuda = device.type == "cuda"
    ids_all = torch.tensor([synthetic_ids(loaded.tokenizer, n_tokens)])  # (1, T)

    forward(ids_all[:, :64])  # warm-up: kernels, allocator, lazy imports
    if spec["warmup_full"]:
        forward(ids_all)
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    gc.collect()
    rss_before = machine.status_kb("VmRSS")
    reset_ok = machine.reset_peak()
    times, cpu_times = [], []
    check: float | None = None
    completeness: float | None = None
    for _ in range(spec["reps"]):
        t0, c0 = time.perf_counter(), time.process_time()
        out = forward(ids_all)
        if cuda:
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        cpu_times.append(time.process_time() - c0)
        check, diff = _checks(kind, out)
        completeness = diff if diff is not None else completeness
        del out
    peak_kb = machine.status_kb("VmHWM")
    return {
        "kind": kind,
        "T": n_tokens,
        "times_s": times,
        "time_s": min(times),
        "cpu_times_s": cpu_times,
        "cpu_s": min(cpu_times),
        "load_s": load_s,
        "rss_before_forward_mb": rss_before / 1024,
        "peak_rss_forward_mb": peak_kb / 1024 if reset_ok else None,
        "gpu_peak_mb": torch.cuda.max_memory_allocated() / 2**20 if cuda else None,
        "row_sum_check": check,
        "completeness_max_diff": completeness,
        "threads": torch.get_num_threads(),
        "device": str(device),
        "dtype": loaded.info.dtype,
        "num_hidden_layers": loaded.info.num_hidden_layers,
        "num_attention_heads": loaded.info.num_attention_heads,
    }


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: python {sys.argv[0]} SPEC_JSON (one forward measurement; bench/run.py runs it)")
    sys.path.insert(0, str(machine.ROOT))
    print(json.dumps(measure(json.loads(sys.argv[1]))))
