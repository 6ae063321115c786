"""Segments of a chat-templated prompt, and what the chat template did: facts only.

A segment is a set of tokens with one origin: the template's own tokens (special
tokens, role headers, the generation prompt), the system message (given by the user or
inserted by the template), one user or assistant turn, a plain prompt, or the answer a
model generated. ``SegmentedToken.segment`` is an index into the result's ``segments``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from attnscope.results.common import Token

Role = Literal["system", "user", "assistant"]
SegmentKind = Literal["template", "system", "user", "assistant", "prompt", "answer"]


@dataclass(frozen=True)
class Message:
    """One chat message as in the Hugging Face chat format."""

    role: Role
    content: str


@dataclass(frozen=True)
class SegmentedToken(Token):
    """A token and the segment it belongs to (an index into the result's ``segments``)."""

    segment: int = 0


@dataclass(frozen=True)
class Segment:
    """Tokens with one origin. ``message`` indexes the messages as given (None for the
    template, an inserted system message, a plain prompt and the answer); ``turn``
    counts the messages of the same role from 1; ``inserted`` marks a system message
    that the template wrote, not the user."""

    index: int
    kind: SegmentKind
    tokens: list[int]
    message: int | None = None
    turn: int | None = None
    inserted: bool = False


@dataclass(frozen=True)
class ChatTemplate:
    """What the chat template did to the messages.

    ``inserted_system``: the system message the template added when none was given, or
    None. ``reencode_matches``: tokenizing the rendered text the usual way
    (``tokenizer(text)``, special tokens added) gives the same ids as
    ``apply_chat_template(tokenize=True)`` (attnscope reads the text with no special tokens added, as
    that call does). ``generation_prompt``: the template added
    the generation prompt (the assistant's header) at the end.
    """

    inserted_system: str | None
    reencode_matches: bool
    generation_prompt: bool
