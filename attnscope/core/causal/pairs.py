"""Prompt pairs for ``attnscope circuit``: the pairs file, line by line, and the built-in tasks.

A pairs file is JSONL, one pair a line: ``{"clean", "corrupt", "target", "foil"}``, each token
given as its text (exactly one token) or its id. A line that cannot be a pair (not JSON, not an
object, a field missing or of the wrong type, a target or foil that is not one token, the two the
same token, prompts of different token counts, clean and corrupt the same text) is skipped with
its line number and the reason (an error, encoded as ``stats`` keeps a skipped line's). Blank
lines are not pairs and are not reported.

The built-in tasks (:func:`pairs`, what ``attnscope pairs TASK`` writes) are written from this project's own templates and names:
``ioi`` (English, the indirect-object pattern: the corrupt prompt names a third person in place
of the repeated subject) and ``ko-fruit`` (the note's sentence, who ate what: the corrupt
prompt buys another fruit). Names, places, objects and fruits were chosen so that with the
Qwen2.5 tokenizer each name and each answer is one token and both prompts of a pair have the same
token count. This module does not load models and does not print.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any, Literal

from attnscope.core.prompt.tokens import readable
from attnscope.errors import AttnscopeError, decoded, encoded, os_error

Task = Literal["ioi", "ko-fruit"]
TASKS: tuple[Task, ...] = ("ioi", "ko-fruit")
FIELDS = ("clean", "corrupt", "target", "foil")


@dataclass(frozen=True)
class Pair:
    """One usable pair: its line, the token ids of both prompts (the same count) and the answer ids."""

    line: int
    clean: tuple[int, ...]
    corrupt: tuple[int, ...]
    target: int
    foil: int


@dataclass(frozen=True)
class Read:
    """A pairs file read: the usable pairs, each skipped line with its reason (encoded), the line count."""

    path: str
    pairs: list[Pair]
    skipped: list[tuple[int, str]]
    lines: int


def _token(tokenizer: Any, value: object, name: str) -> int:
    size = len(tokenizer)
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise AttnscopeError("pairs_line_answer", name=name)
    if isinstance(value, int):
        if not 0 <= value < size:
            raise AttnscopeError("pairs_line_id", name=name, value=value, last=size - 1)
        return value
    ids = [int(i) for i in tokenizer(value, add_special_tokens=False)["input_ids"]]
    if len(ids) != 1:
        tokens, _ = readable(tokenizer, value, ids)
        shown = " + ".join(repr(t.label) for t in tokens) or "nothing"
        raise AttnscopeError("pairs_line_token", name=name, text=repr(value), n=len(ids), shown=shown)
    return ids[0]


def parse_pair(tokenizer: Any, number: int, text: str) -> Pair:
    """One line as a pair; an error (the reason it is skipped) otherwise."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise AttnscopeError("stats_line_json", why=exc.msg, col=exc.colno) from None
    if not isinstance(obj, dict):
        raise AttnscopeError("pairs_line_object")
    for name in FIELDS:
        if name not in obj:
            raise AttnscopeError("pairs_line_field", name=repr(name))
    for name in ("clean", "corrupt"):
        if not isinstance(obj[name], str) or not obj[name].strip():
            raise AttnscopeError("pairs_line_text", name=name)
    if obj["clean"] == obj["corrupt"]:
        raise AttnscopeError("pairs_line_same")
    target, foil = _token(tokenizer, obj["target"], "target"), _token(tokenizer, obj["foil"], "foil")
    if target == foil:
        raise AttnscopeError("pairs_line_foil", id=target)
    clean = tuple(int(i) for i in tokenizer(obj["clean"], add_special_tokens=False)["input_ids"])
    corrupt = tuple(int(i) for i in tokenizer(obj["corrupt"], add_special_tokens=False)["input_ids"])
    if len(clean) != len(corrupt):
        raise AttnscopeError("pairs_line_lengths", a=len(clean), b=len(corrupt))
    return Pair(line=number, clean=clean, corrupt=corrupt, target=target, foil=foil)


def read_pairs(path: str, tokenizer: Any, limit: int | None = None) -> Read:
    """Every line of ``path`` as a pair or a skipped line (``limit``: stop after that many pairs);
    an error for a file that cannot be read, is empty, or holds no usable pair."""
    try:
        with open(path, "rb") as fh:
            raw_lines = fh.read().splitlines()
    except OSError as exc:
        raise os_error("pairs", path, exc) from None
    found: list[Pair] = []
    skipped: list[tuple[int, str]] = []
    for number, raw in enumerate(raw_lines, start=1):
        if limit is not None and len(found) >= limit:
            break
        try:
            text = raw.decode("utf-8").removeprefix("\ufeff" if number == 1 else "")
        except UnicodeDecodeError as exc:
            skipped.append((number, encoded(AttnscopeError("line_utf8", n=exc.start + 1))))
            continue
        if not text.strip():
            continue
        try:
            found.append(parse_pair(tokenizer, number, text))
        except AttnscopeError as exc:
            skipped.append((number, encoded(exc)))
    if not any(raw.strip() for raw in raw_lines):
        raise AttnscopeError("input_empty", arg="pairs", path=path)
    if not found:
        line, reason = skipped[0]
        raise AttnscopeError("circuit_no_pairs", arg="pairs", path=path, n=len(skipped), line=line, why=decoded(reason))
    return Read(path=path, pairs=found, skipped=skipped, lines=len(raw_lines))


# -- the built-in tasks ----------------------------------------------------------------------

_NAMES = (
    "Mary John Anna Peter Sarah David Emma James Laura Michael Lisa Paul Kate Mark Alice Tom "
    "Rachel Daniel Julia Robert Helen Steven Nancy Frank Grace Henry Clara Oscar Diana Victor"
).split()
_PLACES = "store park station office school market garden library".split()
_OBJECTS = "drink book ball gift letter key".split()
_IOI = (
    "When {a} and {b} went to the {place}, {s} gave a {object} to",
    "After {a} and {b} met at the {place}, {s} handed the {object} to",
    "While {a} and {b} were at the {place}, {s} passed a {object} to",
    "{a} and {b} walked to the {place}. Then {s} gave the {object} to",
)
# Korean names without a final consonant (는 and 가 follow them) and fruits whose first syllable is
# one token and whose object form (을/를 as the last syllable wants) is three tokens with Qwen2.5.
_KO_NAMES = ("민수", "지수", "철수", "영희", "유나", "서아", "지우", "준호")
_FRUITS = (("사과", "를"), ("포도", "를"), ("수박", "을"), ("참외", "를"), ("자두", "를"), ("대추", "를"))
_KO = "{name}는 {fruit}{particle} 샀다. 그는 그것을 먹었다. {name}가 먹은 것은"


def pairs(task: Task, n: int = 200, seed: int = 0) -> list[dict[str, str]]:
    """``n`` pairs of a built-in task, reproducible from ``seed``: each ``{clean, corrupt, target, foil}``."""
    if task not in TASKS:
        raise AttnscopeError("use_choices", arg="task", value=repr(task), choices=", ".join(TASKS))
    if isinstance(n, bool) or n < 1:
        raise AttnscopeError("give_or_more", arg="n", value=n, k=1)
    rng = random.Random(f"{task}:{seed}")
    return [_ioi(rng) if task == "ioi" else _fruit(rng, i == 0) for i in range(n)]


def _ioi(rng: random.Random) -> dict[str, str]:
    io, s, other = rng.sample(_NAMES, 3)
    template = rng.choice(_IOI)
    first, second = (io, s) if rng.random() < 0.5 else (s, io)
    fill = {"a": first, "b": second, "place": rng.choice(_PLACES), "object": rng.choice(_OBJECTS)}
    return {
        "clean": template.format(s=s, **fill),
        "corrupt": template.format(s=other, **fill),
        "target": f" {io}",
        "foil": f" {s}",
    }


def _fruit(rng: random.Random, note: bool) -> dict[str, str]:
    name = "민수" if note else rng.choice(_KO_NAMES)
    eaten = _FRUITS[0] if note else rng.choice(_FRUITS)
    other = rng.choice([f for f in _FRUITS if f != eaten])

    def prompt(fruit: tuple[str, str]) -> str:
        return _KO.format(name=name, fruit=fruit[0], particle=fruit[1])

    return {"clean": prompt(eaten), "corrupt": prompt(other), "target": f" {eaten[0][0]}", "foil": f" {other[0][0]}"}
