"""The first conversion of a GGUF file into the cache, measured as a whole process.

``python bench/gguf_convert.py PATH.gguf [--src TREE] [--dtype float32]`` converts the file into
a fresh, temporary cache (``ATTNSCOPE_CACHE``) in a new interpreter that imports attnscope from
``TREE`` (default: this checkout; point it at an older checkout to measure that one), and prints
the wall time, CPU time and peak RSS (``wait4``'s ru_maxrss, start-up and imports included) as
one JSON line. ``--keep DIR`` keeps the converted entry in ``DIR`` for a tensor-by-tensor
comparison (``--compare A B``: every tensor of two entries, bit for bit).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from machine import ROOT, now
from process import run_once

CONVERT = (
    "import sys; from pathlib import Path; from attnscope.model.gguf_cache import converted; "
    "print(converted(Path(sys.argv[1]), sys.argv[2]))"
)


def measure(gguf: Path, src: Path, dtype: str, keep: Path | None) -> dict[str, object]:
    cache = Path(tempfile.mkdtemp(prefix="attnscope-convert-"))
    try:
        env = {"PYTHONPATH": str(src), "ATTNSCOPE_CACHE": str(cache)}
        run = run_once([sys.executable, "-c", CONVERT, str(gguf), dtype], env=env)
        if run.exit != 0:
            raise SystemExit(f"conversion failed ({run.exit}): {run.stderr[-2000:]}")
        entry = Path(run.stdout.strip().splitlines()[-1])
        if keep is not None:
            shutil.rmtree(keep, ignore_errors=True)
            shutil.move(str(entry), keep)
        files = sorted(p.name for p in (keep or entry).iterdir())
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return {
        "when": now(),
        "gguf": str(gguf),
        "src": str(src),
        "dtype": dtype,
        "wall_s": round(run.wall_s, 1),
        "cpu_s": round(run.cpu_s, 1),
        "peak_rss_mb": round(run.peak_rss_mb),
        "files": files,
    }


def compare(a: Path, b: Path) -> dict[str, object]:
    """Every tensor of entry ``a`` against entry ``b``: same names, dtypes, shapes and bytes."""
    import torch
    from safetensors import safe_open

    def tensors(entry: Path) -> dict[str, tuple[Path, str]]:
        found: dict[str, tuple[Path, str]] = {}
        for file in sorted(entry.glob("*.safetensors")):
            with safe_open(str(file), framework="pt") as fh:
                found.update({name: (file, name) for name in fh.keys()})
        return found

    ta, tb = tensors(a), tensors(b)
    differ = []
    for name in sorted(set(ta) & set(tb)):
        with safe_open(str(ta[name][0]), framework="pt") as fa, safe_open(str(tb[name][0]), framework="pt") as fb:
            x, y = fa.get_tensor(name), fb.get_tensor(name)
        if x.dtype != y.dtype or x.shape != y.shape or not torch.equal(x.view(torch.uint8), y.view(torch.uint8)):
            differ.append(name)
    config_a = json.loads((a / "config.json").read_text())
    config_b = json.loads((b / "config.json").read_text())
    return {
        "tensors": len(set(ta) & set(tb)),
        "only_in_a": sorted(set(ta) - set(tb)),
        "only_in_b": sorted(set(tb) - set(ta)),
        "differ": differ,
        "config_differs": sorted(k for k in set(config_a) | set(config_b) if config_a.get(k) != config_b.get(k)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gguf", nargs="?", type=Path)
    parser.add_argument("--src", type=Path, default=ROOT)
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--keep", type=Path)
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"))
    args = parser.parse_args()
    if args.compare:
        print(json.dumps(compare(*args.compare)))
        return
    if args.gguf is None:
        parser.error("give a GGUF file, or --compare A B")
    print(json.dumps(measure(args.gguf, args.src, args.dtype, args.keep)))


if __name__ == "__main__":
    main()
