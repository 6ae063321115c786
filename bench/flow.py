"""Benchmark: ``attnscope flow`` at T tokens beside a plain forward over the same tokens.

Both run as whole processes in the same run, one after the other, timed from outside by
``process.run_once`` (wall, CPU, peak RSS), so a machine shared with other work slows them alike:

- ``attnscope``  ``python -m attnscope flow PROMPT --pos T-1 --json`` (start-up, loading, the one
                 kept forward, the walk and the decomposition of every reached position);
- ``forward``    this script with ``--forward``: no attnscope code at all. transformers loads the
                 converted model folder under sdpa and runs one forward over the same T tokens
                 (``logits_to_keep=1``).

The prompt is the benchmark corpus repeated until it has at least T tokens; ``--pos T-1`` makes
flow read exactly the first T. The target is a peak RSS at most 1.5x the forward's. Writes
``bench/results/flow-NAME.json`` and ``.md``.

Run: ``python bench/flow.py --model PATH.gguf [--tokens 1024] [--name cpu-real-0.5b]``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

TARGET_RSS = 1.5  # flow's peak RSS over the forward's, at most


def prompt_of(tokenizer_folder: str, tokens: int) -> str:
    """The corpus repeated until it is at least ``tokens`` tokens long."""
    from inputs import CORPUS
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tokenizer_folder)
    text = CORPUS
    while len(tok(text)["input_ids"]) < tokens:
        text += CORPUS
    return text


def forward(folder: str, prompt: str, tokens: int, out: str) -> None:
    """One plain forward over the prompt's first ``tokens`` tokens: plain transformers only."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, attn_implementation="sdpa").eval()
    ids = torch.tensor([tok(prompt)["input_ids"][:tokens]])
    start = time.perf_counter()
    with torch.no_grad():
        logits = model(input_ids=ids, logits_to_keep=1).logits[0, -1].float()
    top = int(logits.argmax())
    Path(out).write_text(json.dumps({"tokens": ids.shape[1], "top": top, "compute_s": time.perf_counter() - start}))


def main() -> None:
    from ablate import converted_folder
    from process import run_once

    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", default=os.environ.get("ATTNSCOPE_MODEL"))
    parser.add_argument("--folder", help="the converted HF folder the forward loads")
    parser.add_argument("--tokens", type=int, default=1024)
    parser.add_argument("--name", default="cpu-real-0.5b")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"))
    parser.add_argument("--forward", metavar="FILE", help=argparse.SUPPRESS)
    parser.add_argument("--prompt", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.forward:
        forward(args.folder, args.prompt, args.tokens, args.forward)
        return
    if not args.model:
        parser.error("give --model or set ATTNSCOPE_MODEL")
    folder = args.folder or converted_folder(args.model)
    prompt = prompt_of(folder, args.tokens)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fwd_json = out / f"flow-{args.name}.forward.tmp.json"
    mine_cmd = [sys.executable, "-m", "attnscope", "flow", prompt, "--pos", str(args.tokens - 1), "--json"]
    mine_cmd += ["--model", args.model, "--device", "cpu", "--dtype", "float32"]
    fwd_cmd = [sys.executable, __file__, "--folder", folder, "--prompt", prompt, "--tokens", str(args.tokens)]
    fwd_cmd += ["--forward", str(fwd_json)]
    mine_run = run_once(mine_cmd, env={"PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    fwd_run = run_once(fwd_cmd, env={"PYTHONPATH": ""})
    if mine_run.exit or fwd_run.exit:
        raise SystemExit(
            f"a run failed: attnscope {mine_run.exit} {mine_run.stderr[-300:]}, forward {fwd_run.exit} {fwd_run.stderr[-300:]}"
        )
    mine, fwd = json.loads(mine_run.stdout), json.loads(fwd_json.read_text())
    fwd_json.unlink()
    decomposed = sum(len(c["attention"]) + len(c["mlp"]) for c in mine["layers"])
    report = {
        "tokens": fwd["tokens"],
        "attnscope": {"wall_s": mine_run.wall_s, "cpu_s": mine_run.cpu_s, "peak_rss_mb": mine_run.peak_rss_mb},
        "forward": {
            "wall_s": fwd_run.wall_s,
            "cpu_s": fwd_run.cpu_s,
            "peak_rss_mb": fwd_run.peak_rss_mb,
            "compute_s": fwd["compute_s"],
        },
        "time_ratio": mine_run.wall_s / fwd_run.wall_s,
        "cpu_ratio": mine_run.cpu_s / fwd_run.cpu_s,
        "rss_ratio": mine_run.peak_rss_mb / fwd_run.peak_rss_mb,
        "target_rss_ratio": TARGET_RSS,
        "same_prediction": mine["prediction"] == fwd["top"],
        "edges": len(mine["edges"]),
        "sums_decomposed": decomposed,
        "largest_completeness_error": max(max(c["attention_error"], c["mlp_error"]) for c in mine["layers"]),
        "cpu_count": os.cpu_count(),
        "load_average_at_end": os.getloadavg()[0],
    }
    (out / f"flow-{args.name}.json").write_text(json.dumps(report, indent=2) + "\n")
    a, f = report["attnscope"], report["forward"]
    md = [
        f"# flow at {report['tokens']} tokens beside a plain forward ({args.name})",
        "",
        "| run (whole process, one after the other) | wall s | CPU s | peak RSS MB |",
        "|---|---:|---:|---:|",
        f"| attnscope flow --pos {args.tokens - 1} | {a['wall_s']:.1f} | {a['cpu_s']:.1f} | {a['peak_rss_mb']:.0f} |",
        f"| plain transformers, sdpa, one forward | {f['wall_s']:.1f} | {f['cpu_s']:.1f} | {f['peak_rss_mb']:.0f} |",
        "",
        f"time ratio {report['time_ratio']:.2f} (CPU {report['cpu_ratio']:.2f}), RSS ratio {report['rss_ratio']:.2f} "
        f"(target at most {TARGET_RSS}); {report['sums_decomposed']} sums decomposed, {report['edges']} edges kept, "
        f"largest completeness error {report['largest_completeness_error']:.1e}; same prediction: "
        f"{report['same_prediction']}",
    ]
    (out / f"flow-{args.name}.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
