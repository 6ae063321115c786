"""Result of ``attnscope tokens``."""

from __future__ import annotations

from dataclasses import dataclass

from attnscope.results import Result
from attnscope.results.common import Token, Word


@dataclass(frozen=True)
class TokensResult(Result):
    SCHEMA = "attnscope.tokens/1"

    model: str
    text: str
    chat: bool
    tokens: list[Token]
    words: list[Word]
