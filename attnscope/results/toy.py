"""The toy command's result: a word and its length."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from attnscope.results import Result


@dataclass(frozen=True)
class ToyResult(Result):
    """A word and how many characters it has."""

    SCHEMA: ClassVar[str] = "attnscope.toy/1"
    word: str  # the word given
    length: int  # its characters
