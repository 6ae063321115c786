#!/usr/bin/env bash
# Regenerate samples/ from the real model: each sample as JSON (the command's --json)
# and as SVG (drawn again from that JSON with `attnscope render`, so the two always match).
#
#   samples/regenerate.sh [MODEL]      MODEL defaults to $ATTNSCOPE_REAL_MODEL, then the
#                                      GGUF that shared/real-model/fetch.sh downloads.
#   samples/regenerate.sh --svg-only   redraw every SVG from the saved JSON (no model; after a view changes)
#   samples/regenerate.sh --explore-only [MODEL]   only the explorer pages (after the page's script,
#                                      style or catalogue changes; tests/unit/test_samples.py says when)
# Look at any of them with no model:   attnscope render samples/heads-seed.json
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--svg-only" ]; then
  for json in samples/*.json; do
    python -m attnscope render "$json" --svg "${json%.json}.svg" --width 100 >/dev/null
    echo "${json%.json}.svg" >&2
  done
  for name in weights-seed heads-seed mask-batch; do  # the Korean figures
    python -m attnscope render "samples/$name.json" --svg "samples/$name.ko.svg" --lang ko >/dev/null
    echo "samples/$name.ko.svg" >&2
  done
  exit 0
fi
EXPLORE_ONLY=
if [ "${1:-}" = "--explore-only" ]; then
  EXPLORE_ONLY=1
  shift
fi
MODEL="${1:-${ATTNSCOPE_REAL_MODEL:-$HOME/.cache/attnscope-real/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf}}"
SEED="민수는 사과를 샀다. 그는 그것을 먹었다."
export COLUMNS=100

explore_pages() {
  # The explorer pages (one self-contained HTML file each, no network): the seed sentence with
  # 그것을 as the query and 사과를 as the key of the heads grid, and the chat sample.
  python -m attnscope explore "$SEED" --query 그것을 --key 사과를 --model "$MODEL" -o samples/explore-seed.html
  python -m attnscope explore --chat --system "당신은 친절한 과학 선생님입니다." "토마토는 과일일까 채소일까?" \
    --key 토마토는 --model "$MODEL" -o samples/explore-chat.html
}
if [ -n "$EXPLORE_ONLY" ]; then
  explore_pages
  exit 0
fi

sample() {  # sample NAME COMMAND ARGS...: samples/NAME.json and samples/NAME.svg (the figure, drawn from the JSON)
  local name=$1
  shift
  python -m attnscope "$@" --json >"samples/$name.json"
  python -m attnscope render "samples/$name.json" --svg "samples/$name.svg" --width 100 >/dev/null
  echo "samples/$name.json, samples/$name.svg" >&2
}

sample_ko() {  # sample_ko NAME: samples/NAME.ko.svg, the same figure with Korean words
  python -m attnscope render "samples/$1.json" --svg "samples/$1.ko.svg" --lang ko >/dev/null
  echo "samples/$1.ko.svg" >&2
}

# The note's chart: what 그것을 mixes in, over all layers and heads.
sample weights-seed weights "$SEED" --query 그것을 --model "$MODEL"
# Which heads take 그것을 back to 사과를.
sample heads-seed heads "$SEED" --query 그것을 --key 사과를 --model "$MODEL"
# The top head's whole matrix: the causal triangle, with 그것을's row on 사과를.
sample matrix-seed matrix "$SEED" --layer 20 --head 6 --model "$MODEL"
# The note's position-15 idea: what the assistant-start position (the last token) gathers
# from the system message and the question, with the chat template applied.
sample weights-chat weights --chat --system "당신은 친절한 과학 선생님입니다." "토마토는 과일일까 채소일까?" \
  --by word --model "$MODEL"
# The same prompt by segment: how much of that position's weight goes to the template's own tokens,
# the system message and the question.
sample weights-chat-segments weights --chat --system "당신은 친절한 과학 선생님입니다." "토마토는 과일일까 채소일까?" \
  --by segment --model "$MODEL"
# A padded batch, padded on the left as in the note: the padding mask the model really
# applies, next to the causal mask.
sample mask-batch mask "$SEED" "그는 그것을 먹었다." --padding-side left --model "$MODEL"
# The config facts the note quotes (no weights loaded).
sample info info --model "$MODEL"
# The same figures in Korean.
sample_ko weights-seed
sample_ko heads-seed
sample_ko mask-batch
explore_pages
