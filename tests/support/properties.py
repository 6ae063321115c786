"""What the property tests of the tiny tier and of the real tokenizer share: the prompt alphabet,
the text strategies, and the check that readable tokens give back the prompt."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from attnscope.core.prompt.tokens import encode

ALPHABET = "민수는사과를샀다그것을먹었책읽 abcThe.,?!\n😀é"


MARKERS = set("[] /0123456789␣↵⇥")


prompts = st.text(alphabet=ALPHABET, min_size=1, max_size=20).filter(lambda s: bool(s.strip()))


# Any Unicode but lone surrogates: control characters, combining marks, CJK, emoji...
any_text = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=30).filter(lambda s: bool(s.strip()))


def _joined(tokens: list[Any]) -> str:
    """Token texts laid back over each other: pieces of one character share its offsets."""
    out = ""
    for t in tokens:
        assert t.start <= len(out), "a gap between tokens"
        if t.end > len(out):
            out += t.text[len(out) - t.start :]
    return out


def check_readable(tok: Any, text: str, chat: bool) -> None:
    enc = encode(tok, text, chat=chat)
    n = len(enc.tokens)
    assert [t.index for t in enc.tokens] == list(range(n)) and [t.id for t in enc.tokens] == enc.ids
    assert _joined(enc.tokens) == enc.text
    if not chat:
        assert enc.text == text
    # Every token in exactly one word; words are contiguous and in order.
    members = [i for w in enc.words for i in w.tokens]
    assert members == list(range(n))
    for w in enc.words:
        assert w.tokens == list(range(w.tokens[0], w.tokens[-1] + 1))
        assert all(enc.tokens[i].word == w.index for i in w.tokens)
    allowed = set(enc.text) | MARKERS
    for t in enc.tokens:
        assert enc.text[t.start : t.end] == t.text
        if t.special:
            assert len(enc.words[t.word].tokens) == 1  # a special token is a word of its own
            continue
        assert set(t.label) <= allowed, t.label  # no byte-level mojibake such as 'ìĤ'
        if t.piece is not None:  # part of one character: '샀 1/3'
            k, of = (int(x) for x in t.piece.split("/"))
            assert 1 <= k <= of and t.label == f"{t.text.strip()} {t.piece}"
