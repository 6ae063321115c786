"""GPU check: attnscope's captured rows on CUDA (fp32 and bf16) against eager fp32 rows.

Loads the model on CUDA in float32, computes the reference with eager attention and
``output_attentions=True``, then captures every row of every layer with attnscope in
float32 and in bfloat16 and reports, per case, the largest absolute difference over
real (non-padded) query rows, how far row sums stray from 1, and how often the
most-attended key agrees. Cases: the note's sentence, a 1024-token prompt, and a
left-padded batch of two prompts. fp32 must agree within 1e-4; bf16 is reported (its
q/k come from bf16 projections, so it differs by design). Writes ``<out>/gpu_check.json``.

    python bench/gpu_check.py --model MODEL.gguf      (or: bash bench/gpu_check.sh)

It does not time anything; ``bench/run.py --device cuda`` does (bench/forward.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from inputs import DEFAULT_MODEL, SENTENCE, synthetic_ids  # noqa: E402

FP32_TOLERANCE = 1e-4


def cases(tokenizer: Any) -> dict[str, tuple[Any, Any]]:
    """name -> (input_ids, attention_mask), both (batch, T)."""
    import torch

    seed = torch.tensor([tokenizer(SENTENCE)["input_ids"]])
    long = torch.tensor([synthetic_ids(tokenizer, 1024)])
    a, b = tokenizer(SENTENCE)["input_ids"], tokenizer("The cat sat on the mat.")["input_ids"]
    width = max(len(a), len(b))
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    ids = torch.tensor([[pad] * (width - len(x)) + x for x in (a, b)])  # left padding
    mask = torch.tensor([[0] * (width - len(x)) + [1] * len(x) for x in (a, b)])
    return {
        "seed sentence": (seed, torch.ones_like(seed)),
        "1024 tokens": (long, torch.ones_like(long)),
        "left-padded batch of 2": (ids, mask),
    }


def eager_rows(model: Any, ids: Any, mask: Any) -> list[Any]:
    import torch

    from attnscope.capture import anatomy, engine

    model.set_attn_implementation("eager")
    device = next(model.parameters()).device
    try:
        with torch.inference_mode():
            out = anatomy.of(model).decoder(
                input_ids=ids.to(device),
                attention_mask=mask.to(device),
                position_ids=engine.position_ids(mask).to(device),
                use_cache=False,
                output_attentions=True,
            )
        return [a.float().cpu() for a in out.attentions]  # per layer (B, H, T, T)
    finally:
        engine.prepare(model)


def compare(loaded: Any, ids: Any, mask: Any, ref: list[Any]) -> dict[str, float]:
    import torch

    from attnscope.capture import engine

    n_layers = loaded.info.num_hidden_layers
    batch, n_tokens = ids.shape
    positions = torch.arange(n_tokens).expand(batch, n_tokens)  # (B, T): every row
    got = engine.run(loaded.model, ids, mask, engine.Request(positions=positions, layers=frozenset(range(n_layers))))
    real = mask.bool()[:, None, :].expand(batch, loaded.info.num_attention_heads, n_tokens)  # (B, H, T) real rows
    worst = mean = sums = 0.0
    agree = total = 0
    for layer in range(n_layers):
        rows, expected = got.rows[layer], ref[layer]  # (B, H, T, T)
        diff = (rows - expected).abs().amax(dim=-1)[real]  # (n_real_rows,)
        worst = max(worst, float(diff.max()))
        mean += float(diff.mean()) / n_layers
        sums = max(sums, float((rows.sum(-1)[real] - 1).abs().max()))
        agree += int((rows.argmax(-1) == expected.argmax(-1))[real].sum())
        total += int(real.sum())
    return {
        "max_abs_diff": worst,
        "mean_row_max_diff": mean,
        "max_row_sum_error": sums,
        "top1_agreement": agree / total,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=DEFAULT_MODEL)
    ap.add_argument("--out", default=str(HERE / "results"))
    ap.add_argument("--device", default="cuda", help="cuda (the check); cpu only to smoke-test this script")
    args = ap.parse_args()

    import torch

    from attnscope.capture.engine import load

    cuda = args.device == "cuda"
    if cuda and not torch.cuda.is_available():
        print("gpu_check: no CUDA device here", file=sys.stderr)
        return 2
    name = torch.cuda.get_device_name(0) if cuda else "cpu (smoke test of this script)"
    report: dict[str, Any] = {"device": name, "model": args.model, "cases": {}}
    fp32 = load(args.model, device=args.device, dtype="float32")
    bf16 = load(args.model, device=args.device, dtype="bfloat16")
    ok = True
    for name, (ids, mask) in cases(fp32.tokenizer).items():
        ref = eager_rows(fp32.model, ids, mask)
        row: dict[str, Any] = {"T": int(ids.shape[1]), "batch": int(ids.shape[0])}
        for label, loaded in (("float32", fp32), ("bfloat16", bf16)):
            row[label] = compare(loaded, ids, mask, ref)
        fp32_ok = row["float32"]["max_abs_diff"] <= FP32_TOLERANCE
        ok &= fp32_ok
        row["float32_within_tolerance"] = fp32_ok
        report["cases"][name] = row
        print(
            f"{name:>24}: fp32 max |diff| {row['float32']['max_abs_diff']:.2e} "
            f"({'ok' if fp32_ok else 'FAIL'} at {FP32_TOLERANCE:g}); bf16 max |diff| "
            f"{row['bfloat16']['max_abs_diff']:.2e}, top-1 key agrees {row['bfloat16']['top1_agreement']:.1%}",
            flush=True,
        )
        if cuda:
            torch.cuda.empty_cache()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "gpu_check.json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
