"""Benchmark: ``attnscope ablate`` over every head beside a batched plain-transformers reference.

Both run as whole processes in the same run, one after the other, timed from outside by
``process.run_once`` (wall, CPU, peak RSS), so a machine shared with other work slows them alike:

- ``attnscope``  ``python -m attnscope ablate PROMPT --target T --json`` (start-up and loading included);
- ``reference``  this script with ``--reference``: no attnscope code at all. transformers loads the
                 converted model folder under sdpa; a forward pre-hook on o_proj zeroes one head
                 per batch row, ``--rows`` rows a batch, every (layer, head) of the model, the whole
                 model run for each batch, log P(target) at the last position (``logits_to_keep=1``).

Two prompts: the 24-token seed prompt (target " 사") and its first 5 tokens (target "를"),
where the fixed costs (start-up, loading, batch set-up) weigh most. Each repetition runs, for
each prompt, attnscope and then the reference; the table gives the medians over the repetitions
and the load average (``/proc/loadavg``, 1 minute) before and after each pair. It reports the
time and RSS ratios and the largest |difference| between the two sets of effects, and writes
``bench/results/ablate-NAME.json`` and ``.md``. ``--before REPO`` adds a third side, attnscope
from another checkout (the code before a change), run first in each repetition, with its own
ratios and whether its JSON equals this checkout's byte for byte.

Run: ``python bench/ablate.py --model PATH.gguf [--folder CONVERTED_FOLDER] [--name cpu-real-0.5b]
[--repeats N] [--only 24|5] [--before REPO]`` (``--folder`` defaults to attnscope's converted copy
of the GGUF file in its cache).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

PROMPT = "민수는 사과를 샀다. 그는 그것을 먹었다. 민수가 먹은 것은"
TARGET = " 사"
PROMPTS = {"24": (PROMPT, TARGET), "5": ("민수는 사과", "를")}  # by their token counts


def reference(folder: str, prompt: str, target: str, rows: int, out: str) -> None:
    """Every head zeroed in its own batch row, the whole model run for each batch: plain transformers only."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, attn_implementation="sdpa").eval()
    cfg = model.config
    n_layers, n_heads = cfg.num_hidden_layers, cfg.num_attention_heads
    d = getattr(cfg, "head_dim", None) or cfg.hidden_size // n_heads
    ids = torch.tensor([tok(prompt)["input_ids"]])
    (tid,) = tok(target, add_special_tokens=False)["input_ids"]
    start = time.perf_counter()
    with torch.no_grad():
        base = float(torch.log_softmax(model(input_ids=ids, logits_to_keep=1).logits[0, -1].float(), -1)[tid])
        pairs = [(layer, head) for layer in range(n_layers) for head in range(n_heads)]
        effects: dict[str, float] = {}
        for at in range(0, len(pairs), rows):
            chunk = pairs[at : at + rows]
            handles = []
            for layer in sorted({lay for lay, _ in chunk}):
                mine = [(b, h) for b, (lay, h) in enumerate(chunk) if lay == layer]

                def hook(_m: Any, args: Any, mine: list[tuple[int, int]] = mine) -> Any:
                    x = args[0].clone()
                    for b, h in mine:
                        x[b, :, h * d : (h + 1) * d] = 0.0
                    return (x,)

                handles.append(model.model.layers[layer].self_attn.o_proj.register_forward_pre_hook(hook))
            try:
                logits = model(input_ids=ids.expand(len(chunk), -1), logits_to_keep=1).logits[:, -1].float()
            finally:
                for handle in handles:
                    handle.remove()
            values = torch.log_softmax(logits, -1)[:, tid]
            for (layer, head), v in zip(chunk, values.tolist(), strict=True):
                effects[f"{layer},{head}"] = v - base
    Path(out).write_text(
        json.dumps(
            {"baseline": base, "effects": effects, "tokens": ids.shape[1], "compute_s": time.perf_counter() - start}
        )
    )


def converted_folder(gguf: str) -> str:
    """attnscope's converted copy of ``gguf`` (float32), found by the file's hash in its cache."""
    from attnscope.model.gguf_cache import cached_entry

    found = cached_entry(Path(gguf))
    if found is None:
        raise SystemExit(f"no converted copy of {gguf} in the cache: run any attnscope command on it once")
    return str(found)


def load_average() -> float:
    """The 1-minute load average."""
    return os.getloadavg()[0]


def pair(args: argparse.Namespace, folder: str, prompt: str, target: str, out: Path) -> dict[str, Any]:
    """One run of attnscope and then one of the reference on ``prompt``: times, RSS, effects compared."""
    from process import run_once

    ref_json = out / f"ablate-{args.name}.reference.tmp.json"
    mine_cmd = [sys.executable, "-m", "attnscope", "ablate", prompt, "--target", target, "--json"]
    mine_cmd += ["--model", args.model, "--device", "cpu", "--dtype", "float32", "--batch", str(args.rows)]
    ref_cmd = [sys.executable, __file__, "--folder", folder, "--prompt", prompt, "--target", target]
    ref_cmd += ["--rows", str(args.rows), "--reference", str(ref_json)]
    env = {"PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    load_before = load_average()
    before_run = run_once(mine_cmd, env={"PYTHONPATH": args.before}, cwd=Path(args.before)) if args.before else None
    mine_run = run_once(mine_cmd, env=env)
    ref_run = run_once(ref_cmd, env={"PYTHONPATH": ""})
    if mine_run.exit or ref_run.exit or (before_run is not None and before_run.exit):
        raise SystemExit(
            f"a run failed: attnscope {mine_run.exit} {mine_run.stderr[-300:]}, reference {ref_run.exit} {ref_run.stderr[-300:]}"
            + ("" if before_run is None else f", before {before_run.exit} {before_run.stderr[-300:]}")
        )
    mine, ref = json.loads(mine_run.stdout), json.loads(ref_json.read_text())
    ref_json.unlink()
    diffs = [
        abs(mine["effects"][i][j] - ref["effects"][f"{layer},{head}"])
        for i, layer in enumerate(mine["layers"])
        for j, head in enumerate(mine["heads"])
    ]
    result = {
        "tokens": ref["tokens"],
        "heads": len(diffs),
        "attnscope": {"wall_s": mine_run.wall_s, "cpu_s": mine_run.cpu_s, "peak_rss_mb": mine_run.peak_rss_mb},
        "reference": {
            "wall_s": ref_run.wall_s,
            "cpu_s": ref_run.cpu_s,
            "peak_rss_mb": ref_run.peak_rss_mb,
            "compute_s": ref["compute_s"],
        },
        "max_abs_diff": max(diffs),
        "baseline": {"attnscope": mine["baseline"], "reference": ref["baseline"]},
        "load_average": [load_before, load_average()],
    }
    if before_run is not None:
        result["before"] = {
            "wall_s": before_run.wall_s,
            "cpu_s": before_run.cpu_s,
            "peak_rss_mb": before_run.peak_rss_mb,
            "same_json": before_run.stdout == mine_run.stdout,
        }
    return result


def summary(prompt: str, target: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The medians of one prompt's repetitions, with every repetition kept."""
    from process import median

    def med(side: str, key: str) -> float:
        return median([run[side][key] for run in runs])

    mine = {key: med("attnscope", key) for key in ("wall_s", "cpu_s", "peak_rss_mb")}
    ref = {key: med("reference", key) for key in ("wall_s", "cpu_s", "peak_rss_mb", "compute_s")}
    before: dict[str, Any] = {}
    if "before" in runs[0]:
        before = {key: med("before", key) for key in ("wall_s", "cpu_s", "peak_rss_mb")}
        before["time_ratio"] = median([run["before"]["wall_s"] / run["reference"]["wall_s"] for run in runs])
        before["cpu_ratio"] = median([run["before"]["cpu_s"] / run["reference"]["cpu_s"] for run in runs])
        before["same_json"] = all(run["before"]["same_json"] for run in runs)
    return {
        "prompt": prompt,
        "target": target,
        "tokens": runs[0]["tokens"],
        "heads": runs[0]["heads"],
        "attnscope": mine,
        "reference": ref,
        "time_ratio": median([run["attnscope"]["wall_s"] / run["reference"]["wall_s"] for run in runs]),
        "cpu_ratio": median([run["attnscope"]["cpu_s"] / run["reference"]["cpu_s"] for run in runs]),
        "rss_ratio": mine["peak_rss_mb"] / ref["peak_rss_mb"],
        "max_abs_diff": max(run["max_abs_diff"] for run in runs),
        "load_average": [min(min(run["load_average"]) for run in runs), max(max(run["load_average"]) for run in runs)],
        **({"before": before} if before else {}),
        "runs": runs,
    }


def table(report: dict[str, Any], name: str) -> list[str]:
    """The Markdown report: one row per prompt and side, medians over the repetitions."""
    rows = report["rows_per_batch"]
    md = [
        f"# ablate, all {report['prompts'][0]['heads']} heads ({name})",
        "",
        f"Whole processes, attnscope then the reference (plain transformers, sdpa, one head zeroed per row, "
        f"{rows} rows a batch), medians of {report['repeats']} repetition(s); the ratios are medians of each "
        "repetition's ratio.",
        "",
        "| tokens | run | wall s | CPU s | peak RSS MB | time ratio | CPU ratio | load average |",
        "|---:|---|---:|---:|---:|---:|---:|---|",
    ]
    for row in report["prompts"]:
        a, r, low, high = row["attnscope"], row["reference"], *row["load_average"]
        if "before" in row:
            b = row["before"]
            md.append(
                f"| {row['tokens']} | attnscope before | {b['wall_s']:.1f} | {b['cpu_s']:.1f} | {b['peak_rss_mb']:.0f} "
                f"| {b['time_ratio']:.2f} | {b['cpu_ratio']:.2f} | |"
            )
        md.append(
            f"| {row['tokens']} | attnscope ablate | {a['wall_s']:.1f} | {a['cpu_s']:.1f} | {a['peak_rss_mb']:.0f} "
            f"| {row['time_ratio']:.2f} | {row['cpu_ratio']:.2f} | {low:.1f}-{high:.1f} |"
        )
        md.append(
            f"| {row['tokens']} | reference | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['peak_rss_mb']:.0f} | | | |"
        )
    md.append("")
    for row in report["prompts"]:
        md.append(
            f"{row['tokens']} tokens: RSS ratio {row['rss_ratio']:.2f}, largest |effect difference| "
            f"{row['max_abs_diff']:.2e} over {row['heads']} heads"
            + ("" if "before" not in row else f"; JSON equal to before's: {row['before']['same_json']}")
        )
    return md


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", default=os.environ.get("ATTNSCOPE_MODEL"))
    parser.add_argument("--folder", help="the converted HF folder the reference loads")
    parser.add_argument("--prompt", default=PROMPT, help=argparse.SUPPRESS)  # the reference's
    parser.add_argument("--target", default=TARGET, help=argparse.SUPPRESS)
    parser.add_argument("--only", choices=sorted(PROMPTS), action="append", help="only this prompt (token count)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rows", type=int, default=48)
    parser.add_argument("--name", default="cpu-real-0.5b")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"))
    parser.add_argument("--reference", metavar="FILE", help=argparse.SUPPRESS)
    parser.add_argument(
        "--before", metavar="REPO", help="also time attnscope from this checkout, first in each repetition"
    )
    args = parser.parse_args()
    if args.reference:
        reference(args.folder, args.prompt, args.target, args.rows, args.reference)
        return
    if not args.model:
        parser.error("give --model or set ATTNSCOPE_MODEL")
    folder = args.folder or converted_folder(args.model)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    chosen = [PROMPTS[key] for key in PROMPTS if not args.only or key in args.only]
    runs: list[list[dict[str, Any]]] = [[] for _ in chosen]
    for _ in range(args.repeats):
        for kept, (prompt, target) in zip(runs, chosen, strict=True):
            kept.append(pair(args, folder, prompt, target, out))
    report = {
        "prompts": [summary(prompt, target, kept) for (prompt, target), kept in zip(chosen, runs, strict=True)],
        "rows_per_batch": args.rows,
        "repeats": args.repeats,
        "cpu_count": os.cpu_count(),
        **({"before": args.before} if args.before else {}),
    }
    (out / f"ablate-{args.name}.json").write_text(json.dumps(report, indent=2) + "\n")
    md = table(report, args.name)
    (out / f"ablate-{args.name}.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
