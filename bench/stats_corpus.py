"""Build bench/data/stats_corpus.jsonl: 1,000 prompts of 32-256 tokens from attnscope's own text.

The sentences come from this repository only (README.md and docs/*.md in English, the Korean
catalogue ``attnscope/render/messages/ko.py``), so the corpus may be shipped with it and
nothing is downloaded. Each prompt is a run of consecutive sentences from one source, from a
seeded start, grown until it reaches a seeded target length in tokens (32-256, by the real
model's tokenizer) and cut back to whole sentences below 256 tokens. About a third are Korean.

    python bench/stats_corpus.py [--model PATH] [--prompts 1000] [--out bench/data/stats_corpus.jsonl]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LOW, HIGH = 32, 256


def english_sentences() -> list[list[str]]:
    """One list of sentences per page: prose only (no code blocks, tables or headings)."""
    pages = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        text = re.sub(r"```.*?```", " ", text, flags=re.S)
        text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
        lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith(("#", "|", ">"))]
        prose = " ".join(line.strip().lstrip("-* ").strip() for line in lines)
        prose = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", prose)
        prose = prose.replace("`", "").replace("**", "")
        sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", prose) if len(s.split()) >= 4]
        if len(sentences) >= 10:
            pages.append(sentences)
    return pages


def korean_sentences() -> list[list[str]]:
    """The Korean catalogue's sentences, in catalogue order, with their placeholders filled by small numbers."""
    from attnscope.render.messages.ko import MESSAGES

    out = []
    for value in MESSAGES.values():
        if not re.search(r"[\uac00-\ud7a3]", value):
            continue
        filled = re.sub(r"\{[^{}]*\}", lambda m: str(len(m.group(0)) % 9 + 1), value)
        out += [s.strip() for s in re.split(r"(?<=다\.)\s+", filled) if len(s) >= 8]
    return [out[i : i + 200] for i in range(0, len(out), 200)]


def build(tokenizer: object, n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    english, korean = english_sentences(), korean_sentences()

    def count(text: str) -> int:
        return len(tokenizer(text)["input_ids"])  # type: ignore[operator]

    prompts: list[str] = []
    while len(prompts) < n:
        source = rng.choice(korean if rng.random() < 1 / 3 else english)
        target = rng.randint(LOW, HIGH)
        start = rng.randrange(len(source))
        picked: list[str] = []
        for sentence in source[start:] + source[:start]:
            trial = " ".join([*picked, sentence])
            if count(trial) > HIGH:
                break
            picked.append(sentence)
            if count(trial) >= target:
                break
        text = " ".join(picked)
        if LOW <= count(text) <= HIGH:
            prompts.append(text)
    return prompts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="the model whose tokenizer counts tokens ($ATTNSCOPE_MODEL)")
    parser.add_argument("--prompts", type=int, default=1000)
    parser.add_argument("--out", default=str(ROOT / "bench" / "data" / "stats_corpus.jsonl"))
    args = parser.parse_args()
    from attnscope.model import load_tokenizer

    tokenizer = load_tokenizer(args.model)
    prompts = build(tokenizer, args.prompts)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps({"prompt": p}, ensure_ascii=False) + "\n" for p in prompts), encoding="utf-8")
    lengths = [len(tokenizer(p)["input_ids"]) for p in prompts]
    print(
        f"{out}: {len(prompts)} prompts, {min(lengths)}-{max(lengths)} tokens, mean {sum(lengths) / len(lengths):.0f}"
    )


if __name__ == "__main__":
    main()
