"""What the benchmarks feed the model: the default model file, the settings every measurement
shares, the model's shape read without loading it, and prompts of exactly T real tokens."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from machine import ROOT

DEFAULT_MODEL = os.environ.get(
    "ATTNSCOPE_REAL_MODEL", str(Path.home() / ".cache" / "attnscope-real" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf")
)
# The sentence every example starts from.
SENTENCE = "민수는 사과를 샀다. 그는 그것을 먹었다."
# Text the synthetic prompts are cut from: the sentence, more Korean, some English and code.
CORPUS = (
    SENTENCE + " 영희는 도서관에서 책 두 권을 빌렸다. 주말 동안 그중 한 권을 끝까지 읽고 나머지는 돌려주었다. "
    "Attention mixes earlier tokens by weights that sum to one; doubling the tokens roughly "
    "quadruples the comparisons. def softmax(x): return x.exp() / x.exp().sum(-1, keepdim=True)\n"
)


@dataclass(frozen=True)
class Setup:
    """How every measurement of one run loads the model and how long it may take."""

    model: str
    device: str
    dtype: str
    threads: int  # torch threads per measurement; 0 leaves torch's default
    reps: int  # timed runs per measurement; 0 lets each benchmark choose
    timeout: float  # seconds per measurement


@dataclass(frozen=True)
class Shape:
    """The model's size, from its converted config and weight files."""

    layers: int
    heads: int
    weights_mb: float


def synthetic_ids(tokenizer: Any, n_tokens: int) -> list[int]:
    """Exactly ``n_tokens`` real token ids: the corpus tokenized once and repeated."""
    base = list(tokenizer(CORPUS, add_special_tokens=False)["input_ids"])
    reps = n_tokens // len(base) + 1
    return (base * reps)[:n_tokens]


def model_shape(model: str) -> Shape:
    """Layers, heads and weights MB from the converted config, without loading weights (or torch)."""
    sys.path.insert(0, str(ROOT))
    from attnscope.model import cache_root, file_sha256, resolve

    spec, kind = resolve(model)
    if kind == "hub":
        raise SystemExit("bench: pass a local folder or .gguf file as --model")
    folder = Path(spec)
    if kind == "gguf":
        digest = file_sha256(Path(spec))

        def converted() -> list[Path]:
            return sorted(p for p in (cache_root() / "gguf").glob(f"{digest[:24]}-*") if (p / "config.json").is_file())

        if not converted():  # convert it once, in a child, so this process stays without torch
            code = f"from attnscope.capture.engine import load; load({spec!r}, device='cpu', dtype='float32')"
            subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
        folder = converted()[0]
    config = json.loads((folder / "config.json").read_text())
    size = sum(p.stat().st_size for p in folder.glob("*.safetensors")) / 2**20
    return Shape(int(config["num_hidden_layers"]), int(config["num_attention_heads"]), size)
