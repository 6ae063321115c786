"""Pieces shared by several results: a token, the model facts, a query, a key span, a warning."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Token:
    """One token of the (possibly chat-templated) text.

    ``start``/``end`` are character offsets into ``text`` of the whole input; ``text`` is
    ``input[start:end]``: every character the token touches. A byte-level BPE token that
    holds only some of a character's UTF-8 bytes has ``piece`` set to ``"k/n"``. ``label``
    is the readable form the views print (``샀 1/2``, ``↵``, ``<|im_start|>``).
    """

    index: int
    id: int
    text: str
    start: int
    end: int
    word: int
    label: str
    piece: str | None = None
    special: bool = False


@dataclass(frozen=True)
class Word:
    """A whitespace-separated span (or one special token) and the tokens in it."""

    index: int
    text: str
    tokens: list[int]


@dataclass(frozen=True)
class ModelInfo:
    id: str
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    dtype: str
    device: str
    model_type: str = ""
    head_dim: int = 0


@dataclass(frozen=True)
class Query:
    """The chosen query position and the span it came from (token indices)."""

    index: int
    text: str
    span: list[int]


@dataclass(frozen=True)
class KeySpan:
    """A span of text in the prompt that is not the query (``heads --key``): its text and token indices."""

    text: str
    span: list[int]


WarningCode = Literal[
    "ambiguous_query",  # text occurs count times; the first was used (--occurrence picks one)
    "ambiguous_key",  # the same for heads --key (--key-occurrence)
    "sink_key_excluded",  # heads --no-sink: the key span holds position 0, which adds nothing
    "padded_by_attnscope",  # mask: the tokenizer did not pad the batch; padded with token id ``value``
    "boundary_tokens_differ",  # reuse: prefix+suffix tokenized as one text differs at the boundary
]


@dataclass(frozen=True)
class ResultWarning:
    """Something a user must see next to the result: a code and its data (render puts it into words)."""

    code: WarningCode
    text: str | None = None
    count: int | None = None
    value: int | None = None
