"""The note's own model shape on a 24 GB machine: Qwen2.5-7B (hidden 3584, 28 layers, 28 query heads
sharing 4 KV heads, intermediate 18944, vocab 152064) in bfloat16, random weights.

``python bench/seven_b.py build DIR`` saves the model once as an HF folder (about 15 GB: check
``df -h`` and ``free -g`` first); ``python bench/seven_b.py run DIR [T ...]`` then runs, one process
at a time, a plain bf16 forward (``model(ids, logits_to_keep=1)`` under inference mode, sdpa) and
``attnscope weights --layer all --head all --dtype bfloat16`` on the same T tokens, each timed from
outside by ``process.run_once`` (wall, CPU, peak RSS of the whole process), and prints a table side
by side with the target: attnscope's peak RSS at most 1.10x the plain forward's, and under 24 GB.
Delete DIR afterwards. Not a CI test; it needs about 16 GB of free memory.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from process import run_once

SHAPE = {
    "hidden_size": 3584,
    "num_hidden_layers": 28,
    "num_attention_heads": 28,
    "num_key_value_heads": 4,
    "intermediate_size": 18944,
    "vocab_size": 152064,
    "max_position_embeddings": 32768,
    "tie_word_embeddings": False,
}
RSS_RATIO = 1.10
RSS_LIMIT_MB = 24 * 1024
PLAIN = """
import sys, torch
from transformers import AutoModelForCausalLM
model = AutoModelForCausalLM.from_pretrained(sys.argv[1], dtype=torch.bfloat16, attn_implementation="sdpa").eval()
ids = torch.tensor([[int(i) for i in sys.argv[2].split(",")]])
with torch.inference_mode():
    model(input_ids=ids, logits_to_keep=1)
"""


def build(folder: Path) -> None:
    """Random bf16 weights of the 7B shape, initialised tensor by tensor, saved with a tiny tokenizer."""
    import torch
    from transformers import AutoModelForCausalLM, Qwen2Config

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from support.tiny import train_tokenizer

    config = Qwen2Config(**SHAPE, rope_parameters={"rope_type": "default", "rope_theta": 1000000.0}, dtype="bfloat16")
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    model = model.to_empty(device="cpu")
    torch.manual_seed(0)
    with torch.no_grad():
        for param in model.parameters():
            param.normal_(0.0, 0.02)
    model.save_pretrained(folder)
    train_tokenizer().save_pretrained(folder)


def prompt(folder: Path, tokens: int) -> tuple[str, list[int]]:
    """A text of exactly ``tokens`` tokens for the folder's tokenizer, and its ids."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    ids: list[int] = []
    line = "민수는 사과를 샀다. 그는 그것을 먹었다. The cat sat on the mat. "
    while len(ids) < tokens:
        ids += tok(line, add_special_tokens=False)["input_ids"]
    text = tok.decode(ids[:tokens])
    ids = tok(text, add_special_tokens=False)["input_ids"]
    return text, ids


def run(folder: Path, lengths: list[int]) -> list[dict[str, object]]:
    rows = []
    for t in lengths:
        text, ids = prompt(folder, t)
        plain = run_once([sys.executable, "-c", PLAIN, str(folder), ",".join(map(str, ids))])
        ours = run_once(
            [sys.executable, "-m", "attnscope", "weights", text, "--model", str(folder)]
            + ["--layer", "all", "--head", "all", "--dtype", "bfloat16", "--json"]
        )
        row = {
            "T": len(ids),
            "plain_wall_s": round(plain.wall_s, 1),
            "plain_peak_rss_mb": round(plain.peak_rss_mb),
            "attnscope_wall_s": round(ours.wall_s, 1),
            "attnscope_peak_rss_mb": round(ours.peak_rss_mb),
            "rss_ratio": round(ours.peak_rss_mb / plain.peak_rss_mb, 3),
            "plain_exit": plain.exit,
            "attnscope_exit": ours.exit,
        }
        row["meets_target"] = (
            ours.exit == 0 and row["rss_ratio"] <= RSS_RATIO and ours.peak_rss_mb <= RSS_LIMIT_MB  # type: ignore[operator]
        )
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] not in ("build", "run"):
        print(__doc__)
        return 2
    folder = Path(argv[1])
    if argv[0] == "build":
        build(folder)
        return 0
    run(folder, [int(t) for t in argv[2:]] or [512, 2048])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
