"""The toy analysis: count a word's characters."""

from __future__ import annotations

from attnscope.results.toy import ToyResult


def toy(word: str) -> ToyResult:
    """The word and its length."""
    return ToyResult(word=word, length=len(word))
