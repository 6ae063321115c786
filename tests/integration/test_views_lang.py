"""Every view in both languages: a Korean view holds no English sentence fragment, an English
view no Korean one, apart from what the user typed or the model's own labels.

Each case runs the command twice on the tiny model: once with --json (to learn the labels
the view may print: tokens, words, the model id) and once as the view with --lang.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from support import SEED

DATA = Path(__file__).resolve().parents[1] / "data"
CLEAN = "민수는 사과를 샀다. 그는 그것을"
CORRUPT = "지수는 사과를 샀다. 그는 그것을"

CASES = [
    ["tokens", SEED],
    ["tokens", SEED, "--chat", "--system", "짧게 답한다."],
    ["weights", SEED, "-q", "그것을"],
    ["weights", SEED, "--per-head", "--layer", "1", "--head", "0,2-3"],
    ["weights", SEED, "--by", "word", "--no-sink", "--agg", "max", "-q", "그것"],
    ["weights", SEED, "--chat"],
    ["weights", SEED, "--chat", "--system", "짧게 답한다.", "--by", "segment"],
    ["weights", "--messages", str(DATA / "two-turns.json"), "--by", "segment", "--per-head", "--layer", "1"],
    ["heads", SEED, "-q", "그것을", "-k", "사과를"],
    ["heads", SEED, "-q", "그것을", "-k", "사과를", "--query-agg", "mean", "--no-sink", "--top", "3"],
    ["matrix", SEED, "--layer", "0", "--head", "0"],
    ["matrix", SEED, "--layer", "-1", "--head", "1", "--by", "word"],
    ["matrix", SEED, "--layer", "1", "--head", "3", "--window", "4:12"],
    ["mask"],
    ["mask", "--size", "6", "--pad", "2", "--side", "right"],
    ["mask", "--size", "40", "--pad", "0", "--max-size", "8"],
    ["mask", SEED, "그는 그것을 먹었다.", "--padding-side", "left"],
    ["mask", SEED],
    ["info"],
    ["trace", SEED],
    ["trace", SEED, "--pos", "3"],
    ["explain", SEED, "--layer", "0", "--head", "0", "-q", "그것을"],
    ["rope"],
    ["rope", "--prompt", SEED, "--layer", "1", "--head", "2", "--pos", "3"],
    ["reuse", SEED, " 그리고"],
    ["roles", "--length", "6"],
    ["stats", "--input", str(DATA / "schemas" / "stats-corpus.jsonl"), "--bootstrap", "20"],
    [
        "circuit",
        "--pairs",
        str(DATA / "schemas" / "circuit-pairs.jsonl"),
        "--compare",
        "eap,random",
        "--check",
        "2",
        "--bootstrap",
        "20",
    ],
    ["generate", SEED, "--max-new-tokens", "3"],
    ["generate", SEED, "--chat", "--system", "짧게 답한다.", "--max-new-tokens", "4", "--steps", "1-2"],
    ["generate", "--messages", str(DATA / "two-turns.json"), "--max-new-tokens", "2", "--layer", "0-1"],
    ["trace", "--messages", str(DATA / "two-turns.json")],
    ["flow", SEED, "--threshold", "0.01", "--verify", "3"],
    ["flow", SEED, "--threshold", "0.01", "--heads", "--by", "word"],
    ["ablate", SEED, "--target", ".", "--key", "사과를"],
    ["ablate", SEED, "--target", ".", "--approx", "--check", "4"],
    ["knockout", SEED, "--target", ".", "--foil", " 그", "--key", "사과를", "--query", "그것을", "--window", "2"],
    ["patch", "--clean", CLEAN, "--corrupt", CORRUPT, "--target", " 그", "--site", "head,resid,k"],
]


# Names the note itself writes in Latin letters, and options with their values: labels, not sentences.
KEPT = (
    "Hugging Face",
    "softmax",
    "cos",
    "head_dim",
    "lm_head",
    "hidden_states",
    "float32",
    "bfloat16",
    "float16",
    "CPU",
    "causal mask",
    "padding mask",
    "attention_mask",
    "final norm",
    "q_proj",
    "k_proj",
    "v_proj",
    "o_proj",
    "rotary_emb",
    "inv_freq",
    "rope_theta",
    "rope_type",
    "config.rope_parameters",
    "rope_parameters",
    "sdpa is_causal",
    "is_causal",
    "transformers eager",
    "attnscope: sdpa",
    "token_embd.weight",
    "output.weight",
    "attribution patching",
    "logit",
)


OPTION = re.compile(r"--[a-z][a-z-]*(?: (?:token|word|mean|max|last|\d+:\d+))?")


ENGLISH_RUN = re.compile(r"\b[A-Za-z]{2,}\b(?:[\s,;:()'/.-]+\b[A-Za-z]{2,}\b)+")


HANGUL_RUN = re.compile(r"[\uac00-\ud7a3]+")


def _labels(doc: Any) -> list[str]:
    """Every string the user or the model put into the result: tokens, words, texts, the model id."""
    out: list[str] = []

    def walk(value: Any, key: str = "") -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, str) and key not in ("schema", "attnscope_version"):
            out.append(value)

    walk(doc)
    return sorted(set(out), key=len, reverse=True)  # the longest first, so a label inside another goes with it


def _strip(text: str, labels: list[str]) -> str:
    for label in labels:
        for part in label.split():
            if len(part) > 1 or not part.isascii():
                text = text.replace(part, " ")
    for kept in KEPT:
        text = text.replace(kept, " ")
    return OPTION.sub(" ", text)


def _run(cli: Any, model_dir: Path, args: list[str], lang: str) -> tuple[str, list[str]]:
    if args[0] == "mask" and len(args) > 1 and not args[1].startswith("-") or args[0] != "mask":
        args = [*args, "--model", str(model_dir)]
    doc = cli(*args, "--json")
    assert doc.exit_code == 0, doc.stderr
    res = cli(*args, "--lang", lang, "--width", "200")
    assert res.exit_code == 0, res.stderr
    assert res.stdout.strip()
    return res.stdout + res.stderr, _labels(json.loads(doc.stdout))


@pytest.mark.parametrize("args", CASES, ids=[" ".join(a[:1] + a[2:]) for a in CASES])
def test_korean_view_has_no_english_fragment(cli: Any, model_dir: Path, args: list[str]) -> None:
    text, labels = _run(cli, model_dir, args, "ko")
    assert HANGUL_RUN.search(_strip(text, labels)), "the Korean view has no Korean words of its own"
    assert ENGLISH_RUN.findall(_strip(text, labels)) == []


@pytest.mark.parametrize("args", CASES, ids=[" ".join(a[:1] + a[2:]) for a in CASES])
def test_english_view_has_no_korean_fragment(cli: Any, model_dir: Path, args: list[str]) -> None:
    text, labels = _run(cli, model_dir, args, "en")
    assert ENGLISH_RUN.search(_strip(text, labels))
    assert HANGUL_RUN.findall(_strip(text, labels)) == []


def test_warnings_follow_the_language(cli: Any, model_dir: Path) -> None:
    args = ["weights", "그는 그는 그것을", "-q", "그는", "--model", str(model_dir), "--json"]
    en = cli(*args)
    ko = cli(*args, "--lang", "ko")
    assert en.exit_code == ko.exit_code == 0
    assert "warning: '그는' occurs 2 times; using the first (pick one with --occurrence 1..2)" in en.stderr
    assert "경고: 프롬프트에 '그는' 자리가 2곳 있다." in ko.stderr
    assert en.stdout == ko.stdout  # the JSON holds the warning as a code, in no language
    assert json.loads(en.stdout)["warnings"] == [{"code": "ambiguous_query", "text": "그는", "count": 2, "value": None}]


@pytest.mark.parametrize("args", CASES, ids=[" ".join(a[:1] + a[2:]) for a in CASES])
def test_korean_view_uses_the_notes_words(cli: Any, model_dir: Path, args: list[str]) -> None:
    """No term of the banned list (kept with the Korean catalogue) in any Korean view."""
    from attnscope.render.messages.ko import BANNED

    text, _ = _run(cli, model_dir, args, "ko")
    found = [(m.group(0), use) for pattern, use in BANNED for m in re.finditer(pattern, text)]
    assert found == []


SVG_WORDS = re.compile(r"<(text|title)[^>]*>([^<]*)</\1>")


@pytest.mark.parametrize("args", CASES, ids=[" ".join(a[:1] + a[2:]) for a in CASES])
def test_korean_figure_uses_the_notes_words(cli: Any, model_dir: Path, tmp_path: Path, args: list[str]) -> None:
    """The --svg figure in Korean (its texts and its tooltips) holds no term of the banned list."""
    from html import unescape

    from attnscope.render.messages.ko import BANNED

    if args[0] == "mask" and len(args) > 1 and not args[1].startswith("-") or args[0] != "mask":
        args = [*args, "--model", str(model_dir)]
    svg = tmp_path / "figure.svg"
    res = cli(*args, "--lang", "ko", "--svg", str(svg))
    assert res.exit_code == 0, res.stderr
    words = [unescape(m.group(2)) for m in SVG_WORDS.finditer(svg.read_text(encoding="utf-8"))]
    assert any(re.search(r"[\uac00-\ud7a3]", w) for w in words)
    found = [(w, use) for w in words for pattern, use in BANNED if re.search(pattern, w)]
    assert found == []
