"""Benchmark: ``attnscope stats`` against the floor, against the way users do it today, and on Ray.

Every row is a whole process, run one after the other in the same run and timed from outside
by ``process.run_once`` (wall, CPU, peak RSS), over the first ``--prompts`` prompts of
bench/data/stats_corpus.jsonl (1,000 prompts of 32-256 tokens built from this repository's own
text by bench/stats_corpus.py):

- ``floor``      this script with ``--floor``: plain transformers (the converted model folder,
                 sdpa), batched padded forwards over the prompts, no capture and nothing computed;
- ``stats``      ``python -m attnscope stats --input FILE --json`` (local engine);
- ``eager loop`` this script with ``--eager``: transformers ``attn_implementation="eager"`` and
                 ``output_attentions=True``, one prompt at a time, the same eight means computed
                 in numpy from the returned (layer, head, T, T) patterns (no intervals, no
                 histograms, no massive activations: less than stats does);
- ``ray``        ``stats --engine ray --workers 2`` (Ray starts and stops inside the process);
- ``stats`` again at ``--rss-prompts`` prompts, for peak RSS against corpus size.

Each row's prompts per second is over the whole process (start-up and model load included) and
over its compute alone (what the process measured of itself). It writes
``bench/results/stats-NAME.json`` and ``.md``.

Run: ``python bench/stats.py --model PATH.gguf --prompts 100 --rss-prompts 1000 [--big-ray] [--keep DIR]``
(``--big-ray`` also runs ``--engine ray`` over the ``--rss-prompts`` corpus and compares it with the
local run; ``--keep`` saves every stats document).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "data" / "stats_corpus.jsonl"
MEANS = ("sink", "self", "previous_token", "entropy", "entropy_norm", "distance", "duplicate_token", "induction")


def _prompts(path: str) -> list[str]:
    return [json.loads(line)["prompt"] for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def floor(folder: str, path: str, batch: int, out: str) -> None:
    """Plain batched sdpa forwards over the prompts: what any capture has to add to."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    tok.padding_side = "right"
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, attn_implementation="sdpa").eval()
    prompts = _prompts(path)
    start = time.perf_counter()
    with torch.inference_mode():
        for at in range(0, len(prompts), batch):
            enc = tok(prompts[at : at + batch], return_tensors="pt", padding=True)
            model.model(**enc)
    Path(out).write_text(json.dumps({"compute_s": time.perf_counter() - start, "prompts": len(prompts)}))


def eager(folder: str, path: str, out: str) -> None:
    """The loop users write today: eager attention with output_attentions, the means in numpy."""
    import numpy as np
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager").eval()
    sums: dict[str, Any] = {}
    counts = dict.fromkeys(MEANS, 0)
    start = time.perf_counter()
    for prompt in _prompts(path):
        ids = tok(prompt)["input_ids"]
        with torch.inference_mode():
            att = model(input_ids=torch.tensor([ids]), output_attentions=True).attentions
        a = np.stack([x[0].float().numpy() for x in att]).astype(np.float64)  # (L, H, T, T)
        n = len(ids)
        ids_arr = np.array(ids)
        for i in range(1, n):
            row = a[:, :, i, : i + 1]
            ent = -(np.where(row > 0, row * np.log(np.where(row > 0, row, 1.0)), 0.0)).sum(-1)
            dup = np.nonzero(ids_arr[:i] == ids_arr[i])[0]
            values = {
                "sink": row[..., 0],
                "self": row[..., i],
                "previous_token": row[..., i - 1],
                "entropy": ent,
                "entropy_norm": ent / np.log(i + 1),
                "distance": (row * (i - np.arange(i + 1))).sum(-1),
                "duplicate_token": row[..., dup].sum(-1) if dup.size else None,
                "induction": row[..., dup + 1].sum(-1) if dup.size else None,
            }
            for name, v in values.items():
                if v is not None:
                    sums[name] = sums.get(name, 0.0) + v
                    counts[name] += 1
    means = {name: (sums[name] / counts[name]).tolist() for name in sums}
    Path(out).write_text(json.dumps({"compute_s": time.perf_counter() - start, "means": means, "counts": counts}))


def converted_folder(gguf: str) -> str:
    from attnscope.model.gguf_cache import cached_entry

    found = cached_entry(Path(gguf))
    if found is None:
        raise SystemExit(f"no converted copy of {gguf} in the cache: run any attnscope command on it once")
    return str(found)


def _row(name: str, run: Any, prompts: int, compute_s: float) -> dict[str, Any]:
    if run.exit:
        raise SystemExit(f"{name} failed ({run.exit}): {run.stderr[-600:]}")
    return {
        "run": name,
        "prompts": prompts,
        "wall_s": run.wall_s,
        "cpu_s": run.cpu_s,
        "peak_rss_mb": run.peak_rss_mb,
        "compute_s": compute_s,
        "prompts_per_s": prompts / run.wall_s,
        "compute_prompts_per_s": prompts / compute_s if compute_s > 0 else None,
    }


def main() -> None:
    from process import run_once

    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", default=os.environ.get("ATTNSCOPE_MODEL"))
    parser.add_argument("--folder", help="the converted HF folder the floor and the eager loop load")
    parser.add_argument("--prompts", type=int, default=100)
    parser.add_argument("--rss-prompts", type=int, default=1000, help="a second stats run this long (0: none)")
    parser.add_argument("--batch-size", type=int, default=1)
    parser.add_argument("--skip", default="", help="comma list of rows to leave out: floor,eager,ray")
    parser.add_argument(
        "--big-ray", action="store_true", help="run --engine ray at --rss-prompts too and compare it with local"
    )
    parser.add_argument("--keep", metavar="DIR", help="keep every stats run's JSON document in DIR")
    parser.add_argument("--name", default="cpu-real-0.5b")
    parser.add_argument("--out", default=str(HERE / "results"))
    parser.add_argument("--floor", metavar="FILE", help=argparse.SUPPRESS)
    parser.add_argument("--eager", metavar="FILE", help=argparse.SUPPRESS)
    parser.add_argument("--input", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.floor:
        floor(args.folder, args.input, args.batch_size, args.floor)
        return
    if args.eager:
        eager(args.folder, args.input, args.eager)
        return
    if not args.model:
        parser.error("give --model or set ATTNSCOPE_MODEL")
    folder = args.folder or converted_folder(args.model)
    skip = set(filter(None, args.skip.split(",")))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    lines = CORPUS.read_text(encoding="utf-8").splitlines()
    env = {"PYTHONPATH": str(HERE.parent)}
    rows: list[dict[str, Any]] = []
    stats_doc: dict[str, Any] = {}
    eager_means: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        small = Path(tmp) / "small.jsonl"
        small.write_text("\n".join(lines[: args.prompts]) + "\n", encoding="utf-8")
        answer = Path(tmp) / "answer.json"
        base = [sys.executable, "-m", "attnscope", "stats", "--model", args.model, "--json", "--bootstrap", "200"]
        base += ["--batch-size", str(args.batch_size)]
        if "floor" not in skip:
            cmd = [sys.executable, __file__, "--folder", folder, "--input", str(small), "--floor", str(answer)]
            run = run_once(cmd + ["--batch-size", str(args.batch_size)], env={"PYTHONPATH": ""})
            rows.append(_row("floor", run, args.prompts, json.loads(answer.read_text())["compute_s"]))
        run = run_once([*base, "--input", str(small)], env=env)
        if not run.exit:
            stats_doc = json.loads(run.stdout)
            _keep(args.keep, f"stats-{args.prompts}.json", run.stdout)
        rows.append(_row("stats", run, args.prompts, stats_doc.get("elapsed", 0.0)))
        if "eager" not in skip:
            cmd = [sys.executable, __file__, "--folder", folder, "--input", str(small), "--eager", str(answer)]
            run = run_once(cmd, env={"PYTHONPATH": ""})
            got = json.loads(answer.read_text()) if not run.exit else {}
            eager_means = got.get("means", {})
            rows.append(_row("eager loop", run, args.prompts, got.get("compute_s", 0.0)))
        if "ray" not in skip:
            run = run_once([*base, "--input", str(small), "--engine", "ray", "--workers", "2"], env=env)
            ray_doc = json.loads(run.stdout) if not run.exit else {}
            row = _row("ray, 2 workers", run, args.prompts, ray_doc.get("elapsed", 0.0))
            row["max_rel_diff_vs_stats"] = _max_rel(stats_doc, ray_doc)
            rows.append(row)
        if args.rss_prompts:
            big = Path(tmp) / "big.jsonl"
            big.write_text("\n".join(lines[: args.rss_prompts]) + "\n", encoding="utf-8")
            run = run_once([*base, "--input", str(big)], env=env)
            big_doc = json.loads(run.stdout) if not run.exit else {}
            _keep(args.keep, f"stats-{args.rss_prompts}.json", run.stdout)
            rows.append(_row("stats", run, args.rss_prompts, big_doc.get("elapsed", 0.0)))
            if args.big_ray:
                run = run_once([*base, "--input", str(big), "--engine", "ray", "--workers", "2"], env=env)
                ray_big = json.loads(run.stdout) if not run.exit else {}
                _keep(args.keep, f"stats-{args.rss_prompts}-ray.json", run.stdout)
                row = _row("ray, 2 workers", run, args.rss_prompts, ray_big.get("elapsed", 0.0))
                row["max_rel_diff_vs_stats"] = _max_rel(big_doc, ray_big)
                rows.append(row)
    report = {
        "model": args.model,
        "corpus": str(CORPUS.relative_to(HERE.parent)),
        "prompts": args.prompts,
        "batch_size": args.batch_size,
        "rows": rows,
        "eager_max_rel_diff_vs_stats": _max_rel_means(stats_doc, eager_means),
        "cpu_count": os.cpu_count(),
        "load_average_at_end": os.getloadavg()[0],
    }
    (out / f"stats-{args.name}.json").write_text(json.dumps(report, indent=2) + "\n")
    md = render(report, args.name)
    (out / f"stats-{args.name}.md").write_text(md)
    print(md)


def _keep(folder: str | None, name: str, text: str) -> None:
    if folder and text:
        Path(folder).mkdir(parents=True, exist_ok=True)
        (Path(folder) / name).write_text(text, encoding="utf-8")


def _max_rel(a: dict[str, Any], b: dict[str, Any]) -> float | None:
    import numpy as np

    if not a or not b:
        return None
    worst = 0.0
    for name, stat in a["stats"].items():
        for part in ("mean", "ci_low", "ci_high"):
            x = np.array(stat[part], float)
            y = np.array(b["stats"][name][part], float)
            worst = max(worst, float(np.nanmax(np.abs(x - y) / np.maximum(np.abs(x), 1e-12))))
    return worst


def _max_rel_means(doc: dict[str, Any], means: dict[str, Any]) -> float | None:
    import numpy as np

    if not doc or not means:
        return None
    return max(
        float(np.nanmax(np.abs(np.array(doc["stats"][k]["mean"], float) - np.array(v)) / np.abs(np.array(v))))
        for k, v in means.items()
    )


def render(report: dict[str, Any], name: str) -> str:
    rows = report["rows"]
    by = {r["run"]: r for r in rows if r["prompts"] == report["prompts"]}
    md = [
        f"# stats over {report['prompts']} prompts of {report['corpus']} ({name}, batch size {report['batch_size']})",
        "",
        "| run (whole process, one after the other) | prompts | wall s | CPU s | peak RSS MB | prompts/s | compute s | compute prompts/s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        compute = f"{r['compute_prompts_per_s']:.2f}" if r["compute_prompts_per_s"] else "-"
        md.append(
            f"| {r['run']} | {r['prompts']} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['peak_rss_mb']:.0f} "
            f"| {r['prompts_per_s']:.2f} | {r['compute_s']:.1f} | {compute} |"
        )
    md.append("")
    stats = by.get("stats")
    if stats and "floor" in by:
        f = by["floor"]
        md.append(
            f"- stats / floor, prompts per second: {stats['prompts_per_s'] / f['prompts_per_s']:.2f} whole process, "
            f"{stats['compute_prompts_per_s'] / f['compute_prompts_per_s']:.2f} compute only (target >= 0.9)"
        )
    if stats and "eager loop" in by:
        e = by["eager loop"]
        md.append(
            f"- stats vs the eager loop: {e['wall_s'] / stats['wall_s']:.2f}x faster whole process, "
            f"{e['compute_s'] / stats['compute_s']:.2f}x compute only (target >= 3x); largest relative difference "
            f"of the eight means: {report['eager_max_rel_diff_vs_stats']:.1e}"
        )
    if stats and "ray, 2 workers" in by:
        r = by["ray, 2 workers"]
        md.append(
            f"- ray with 2 workers vs local: {r['wall_s'] / stats['wall_s']:.2f}x the wall time (overhead; target <= 1.3x); "
            f"largest relative difference of means and intervals {r['max_rel_diff_vs_stats']:.1e}; peak RSS is the "
            "driver's only (the workers are Ray's processes)"
        )
    big = [r for r in rows if r["run"] == "stats" and r["prompts"] != report["prompts"]]
    if stats and big:
        b = big[0]
        md.append(
            f"- peak RSS at {report['prompts']} prompts {stats['peak_rss_mb']:.0f} MB, at {b['prompts']} prompts "
            f"{b['peak_rss_mb']:.0f} MB: {b['peak_rss_mb'] / stats['peak_rss_mb']:.3f}x (target: within 5%)"
        )
        big_ray = [r for r in rows if r["run"] == "ray, 2 workers" and r["prompts"] == b["prompts"]]
        if big_ray:
            r = big_ray[0]
            diff = r["max_rel_diff_vs_stats"]
            md.append(
                f"- at {b['prompts']} prompts, ray with 2 workers vs local: {r['wall_s'] / b['wall_s']:.2f}x the wall "
                f"time; largest relative difference of means and intervals "
                f"{'(no result)' if diff is None else f'{diff:.1e}'}"
            )
    md.append(
        f"- {report['cpu_count']} CPU cores; load average at the end {report['load_average_at_end']:.1f} "
        "(other work on the machine slows every row alike)"
    )
    return "\n".join(md) + "\n"


if __name__ == "__main__":
    main()
