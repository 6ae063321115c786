"""Result of ``attnscope tokens``: every token, its word and its segment, and what the chat template did."""

from __future__ import annotations

from dataclasses import dataclass

from attnscope.results import Result
from attnscope.results.common import Word
from attnscope.results.segments import ChatTemplate, Segment, SegmentedToken


@dataclass(frozen=True)
class TokensResult(Result):
    SCHEMA = "attnscope.tokens/2"

    model: str
    text: str
    chat: bool
    tokens: list[SegmentedToken]
    words: list[Word]
    segments: list[Segment]  # chat: template, system, each turn; a plain prompt: one "prompt" segment
    template: ChatTemplate | None = None  # chat only
