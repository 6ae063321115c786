"""Errors in the reader's language: with ATTNSCOPE_LANG=ko (or --lang ko) every row of the
bad-input table (docs/reliability.md) prints one Korean line, with the exit code it has in English.

The words come from the ``errors`` section of the catalogues; a message kind the Korean catalogue
does not know would come out in English and fail here (no English sentence may be left once the
user's own values, file paths and the flags are taken out).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from support import SEED

ROOT = Path(__file__).resolve().parents[2]

# (arguments, exit code); "MODEL" is replaced by the tiny model's folder.
CASES: list[tuple[list[str], int]] = [
    (["weights", "", "--model", "MODEL"], 2),
    (["weights", SEED, "--query", "바나나", "--model", "MODEL"], 2),
    (["weights", SEED, "--query", "그", "--occurrence", "3", "--model", "MODEL"], 2),
    (["weights", SEED, "--pos", "99", "--model", "MODEL"], 2),
    (["weights", SEED, "--query", "그는", "--pos", "1", "--model", "MODEL"], 2),
    (["weights", SEED, "--occurrence", "2", "--model", "MODEL"], 2),
    (["weights", SEED, "--query", " ", "--model", "MODEL"], 2),
    (["weights", SEED, "--layer", "99", "--model", "MODEL"], 2),
    (["weights", SEED, "--head", "14", "--model", "MODEL"], 2),
    (["weights", SEED, "--layer", "2-", "--model", "MODEL"], 2),
    (["weights", SEED, "--layer", "a", "--model", "MODEL"], 2),
    (["weights", SEED, "--layer", "2-1", "--model", "MODEL"], 2),
    (["weights", SEED, "--head", "0,,1", "--model", "MODEL"], 2),
    (["weights", "사과 " * 200, "--model", "MODEL"], 2),
    (["weights", SEED, "--model", "./no-such-folder"], 3),
    (["weights", SEED, "--model", "missing.gguf"], 3),
    (["weights", SEED, "--device", "tpu", "--model", "MODEL"], 2),
    (["weights", SEED, "--dtype", "int8", "--model", "MODEL"], 2),
    (["weights", SEED, "--by", "letter", "--model", "MODEL"], 2),
    (["weights", SEED, "--agg", "sum", "--model", "MODEL"], 2),
    (["weights", SEED, "--system", "짧게", "--model", "MODEL"], 2),
    (["weights", SEED, "--pos", "0", "--no-sink", "--model", "MODEL"], 2),
    (["weights", SEED, "--svg", "/no/such/dir/x.svg", "--model", "MODEL"], 2),
    (["heads", SEED, "-q", "사과를", "-k", "그것을", "--model", "MODEL"], 2),
    (["matrix", SEED, "--layer", "all", "--head", "0", "--model", "MODEL"], 2),
    (["matrix", SEED, "--layer", "0", "--head", "0", "--window", "5:2", "--model", "MODEL"], 2),
    (["trace", SEED, "--compare-pos", "-1", "--model", "MODEL"], 2),
    (["explain", SEED, "--layer", "0", "--head", "0,1", "--model", "MODEL"], 2),
    (["rope", "--deltas", "x", "--model", "MODEL"], 2),
    (["reuse", SEED, "", "--model", "MODEL"], 2),
    (["mask", "--size", "0"], 2),
    (["mask", "--size", "4", "--pad", "9"], 2),
    (["generate", SEED, "--seed", "3", "--model", "MODEL"], 2),
    (["render", "no-such-result.json"], 6),
    (["flow", SEED, "--threshold", "1.5", "--model", "MODEL"], 2),
    (["flow", SEED, "--pos", "40", "--model", "MODEL"], 2),
    (["flow", SEED, "--verify", "-2", "--model", "MODEL"], 2),
    (["flow", SEED, "--by", "segment", "--model", "MODEL"], 2),
    (["weights", SEED, "--lang", "fr", "--model", "MODEL"], 2),
    (["weights", SEED, "--arrays", "rows.h5", "--model", "MODEL"], 2),
    (["generate", SEED, "--arrays", "/no/such/dir/x.npz", "--model", "MODEL"], 2),
    (["weights", "--input", "prompts.txt", "--arrays", "rows.npz", "--model", "MODEL"], 2),
    (["stats", "--model", "MODEL"], 2),
    (["stats", "--input", "no-such-corpus.jsonl", "--model", "MODEL"], 6),
    (["stats", "--input", "no-such-corpus.jsonl", "--resume", "--model", "MODEL"], 2),
    (["stats", "--input", "no-such-corpus.jsonl", "--engine", "ray", "--workers", "0", "--model", "MODEL"], 2),
    (["stats", "--input", "no-such-corpus.jsonl", "--workers", "2", "--model", "MODEL"], 2),
    (["stats", "--input", "no-such-corpus.jsonl", "--table", "out.svg", "--model", "MODEL"], 2),
    (["circuit", "--pairs", str(ROOT / "tests" / "data" / "circuit" / "no-usable-pair.jsonl"), "--model", "MODEL"], 6),
    (["circuit", "--pairs", str(ROOT / "tests" / "data" / "circuit" / "no-usable-pair.jsonl"), "--steps", "0"], 2),
]

# What may stay in Latin letters: the user's values and paths, option names, and the names the
# note itself writes (as in the views' language test).
LATIN_OK = re.compile(
    r"--[a-z][a-z-]*|'[^']*'|/[^\s,()]+|\S+\.(?:gguf|json|svg)|[A-Za-z_]+=\S+|"
    r"max_position_embeddings|HF|GGUF|JSON|UTF-8|PROMPT|FILE|float32|bfloat16|float16|auto|cpu|cuda|mps|"
    r"token|word|segment|mean|max|left|right|en|ko|all|attnscope|softmax"
)
ENGLISH_RUN = re.compile(r"\b[A-Za-z]{2,}\b(?:[\s,;:()'/.-]+\b[A-Za-z]{2,}\b)+")


def _korean_error(res: Any, code: int) -> str:
    assert res.exit_code == code, (res.exit_code, res.stderr)
    assert res.stdout == ""
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("attnscope: 오류: "), lines
    line = lines[0].removeprefix("attnscope: 오류: ")
    assert re.search(r"[\uac00-\ud7a3]", line), line
    assert ENGLISH_RUN.findall(LATIN_OK.sub(" ", line)) == [], line
    return line


@pytest.mark.parametrize("args,code", CASES, ids=[" ".join(a[:1] + a[2:4]) for a, _ in CASES])
def test_bad_input_speaks_korean(
    cli: Any, model_dir: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], code: int
) -> None:
    args = [str(model_dir) if a == "MODEL" else a for a in args]
    english = cli(*args)
    assert english.exit_code == code and english.stderr.startswith("attnscope: error: "), english.stderr
    monkeypatch.setenv("ATTNSCOPE_LANG", "ko")
    _korean_error(cli(*args), code)


def test_lang_option_words_the_error(cli: Any, model_dir: Path) -> None:
    res = cli("weights", SEED, "--layer", "99", "--lang", "ko", "--model", str(model_dir))
    line = _korean_error(res, 2)
    assert line == "--layer 99는 범위를 벗어난다. 이 모델의 레이어는 3개다(0~2, 또는 -1~-3)."


def _main(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "attnscope", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        timeout=60,
    )


@pytest.mark.parametrize(
    "args,words",
    [
        (["heads", SEED], "'--query' / '-q' 옵션이 빠졌다."),
        (["weights", SEED, "--bogus"], "--bogus라는 옵션은 없다"),
        (["weights", SEED, "--width", "10"], "'--width' 값 10은 x>=40 범위 밖이다."),
        (["weights", SEED, "--occurrence", "x"], "'--occurrence' 값 'x'는 정수가 아니다."),
        (["weights", SEED, "--pos"], "'--pos' 옵션에는 값을 줘야 한다."),
    ],
)
def test_option_parser_errors_speak_korean(args: list[str], words: str) -> None:
    english = _main(*args, env={"ATTNSCOPE_LANG": "en"})
    korean = _main(*args, env={"ATTNSCOPE_LANG": "ko"})
    assert english.returncode == korean.returncode == 2
    assert korean.stdout == ""
    lines = korean.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"attnscope: 오류: {words}"), lines
    assert lines[0].endswith(" (--help를 본다)")
    on_the_line = _main(args[0], "--lang", "ko", *args[1:], env={"ATTNSCOPE_LANG": "en"})
    assert on_the_line.stderr == korean.stderr
