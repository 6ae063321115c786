"""One run of each command on the tiny model ({model} stands for its folder), for the render and width tests."""

from __future__ import annotations

from pathlib import Path

from support import SEED

MODEL = "{model}"
STATS_CORPUS = str(Path(__file__).resolve().parents[1] / "data" / "schemas" / "stats-corpus.jsonl")
CIRCUIT_PAIRS = str(Path(__file__).resolve().parents[1] / "data" / "schemas" / "circuit-pairs.jsonl")


COMMANDS = {
    "tokens": ["tokens", SEED, "--model", MODEL],
    "weights": ["weights", SEED, "--query", "그것을", "--model", MODEL],
    "weights-per-head": ["weights", SEED, "--layer", "1", "--per-head", "--by", "word", "--no-sink", "--model", MODEL],
    "heads": ["heads", SEED, "--query", "그것을", "--key", "사과를", "--top", "3", "--model", MODEL],
    "matrix": ["matrix", SEED, "--layer", "1", "--head", "2", "--model", MODEL],
    "matrix-word": ["matrix", SEED, "--layer", "0", "--head", "3", "--by", "word", "--model", MODEL],
    "matrix-window": ["matrix", SEED, "--layer", "2", "--head", "1", "--window", "10:20", "--model", MODEL],
    "info": ["info", "--model", MODEL],
    "mask": ["mask", SEED, "hello world", "--model", MODEL],
    "mask-illustration": ["mask"],
    "trace": ["trace", SEED, "--model", MODEL],
    "explain": ["explain", SEED, "--layer", "1", "--head", "2", "--model", MODEL],
    "rope": ["rope", "--model", MODEL],
    "reuse": ["reuse", "민수는 사과를 샀다.", " 그는 그것을 먹었다.", "--model", MODEL],
    "roles": ["roles", "--length", "6", "--model", MODEL],
    "stats": ["stats", "--input", STATS_CORPUS, "--bootstrap", "20", "--model", MODEL],
    "circuit": [
        "circuit",
        "--pairs",
        CIRCUIT_PAIRS,
        "--compare",
        "eap-ig,random",
        "--check",
        "3",
        "--bootstrap",
        "50",
        "--model",
        MODEL,
    ],
}
