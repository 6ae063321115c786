#!/usr/bin/env bash
# The GPU check, one command, about 6 minutes on one H100/H200:
#   bash bench/gpu_check.sh [MODEL]
# 1. captured rows on CUDA in fp32 and bf16 against eager fp32 rows (bench/gpu_check.py);
# 2. the forward benchmark at T = 2048 and 8192 (and 16384 capture-only) on CUDA (bench/run.py).
# Results: bench/results/gpu_check.json, bench/results/gpu-cuda.{json,md} (or under $OUT).
# MODEL defaults to $ATTNSCOPE_REAL_MODEL or the fetch.sh path; the machine needs the file
# (copy it there: the GPU machines here reach no network).
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL="${1:-${ATTNSCOPE_REAL_MODEL:-$HOME/.cache/attnscope-real/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf}}"
OUT="${OUT:-bench/results}"
nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv || true
status=0
python bench/gpu_check.py --model "$MODEL" --out "$OUT" || status=$?   # the benchmark runs even if this fails
python bench/run.py --model "$MODEL" --device cuda --lengths 2048,8192 --capture-only 16384 \
  --no-cli --timeout 240 --name gpu-cuda --out "$OUT"
cat "$OUT/gpu-cuda.md"
exit "$status"
