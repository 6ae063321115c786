"""Pieces shared by several results: a token, the model facts, a query, a key span, a warning."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
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
    start: int  # character offset of the token's first character in text
    end: int  # character offset just after its last character
    word: int  # index of the word it belongs to
    label: str  # the readable form the views print
    piece: str | None = None  # "k/n" when the token holds part of one character's UTF-8 bytes
    special: bool = False  # a special token of the tokenizer (<|im_start|>, ...)


def prepended_bos(tokens: Sequence[Token]) -> bool:
    """Position 0 is a special token the tokenizer put before the text on its own (Gemma's and
    Llama's BOS): it holds none of the text. A BOS that a chat template writes into the text is a
    special token of the text instead, and Qwen's tokenizer prepends nothing."""
    return bool(tokens) and tokens[0].special and tokens[0].start == tokens[0].end == 0


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
    # each layer's attention: "full", "sliding" (a window of sliding_window keys) or "linear" (a
    # linear-attention layer: no attention weights, never captured); empty in documents saved before
    layer_kinds: list[str] = field(default_factory=list)
    sliding_window: int | None = None  # the window of the "sliding" layers, in keys
    sink_logits: bool = False  # the attention has a learned sink logit per head: rows sum to 1 minus its share

    def linear_layers(self) -> list[int]:
        """The linear-attention layers: attnscope captures no rows there."""
        return [i for i, kind in enumerate(self.layer_kinds) if kind == "linear"]

    def sliding_layers(self) -> list[int]:
        """The layers that attend over a sliding window of ``sliding_window`` keys."""
        if not self.sliding_window:
            return []
        return [i for i, kind in enumerate(self.layer_kinds) if kind == "sliding"]

    def window_first(self, layer: int, query_pos: int) -> int:
        """The first key position ``query_pos`` reads at ``layer``: 0, or in a sliding layer the
        first of the last ``sliding_window`` positions (a key k is read when k > query_pos - window,
        as transformers' sliding-window mask has it)."""
        if self.sliding_window and layer in self.sliding_layers():
            return max(0, query_pos - self.sliding_window + 1)
        return 0

    def windowed(self, layers: Sequence[int], query_pos: int) -> list[int]:
        """The layers of ``layers`` whose window hides some keys from ``query_pos``."""
        return [layer for layer in layers if self.window_first(layer, query_pos) > 0]

    def mixes_windows(self, n_tokens: int) -> bool:
        """A prompt of ``n_tokens`` is longer than the sliding window, and the model has
        full-attention layers too: the two kinds of layer read different keys."""
        sliding = self.sliding_layers()
        full = [i for i, kind in enumerate(self.layer_kinds) if kind == "full"]
        return bool(sliding and full and self.sliding_window and n_tokens > self.sliding_window)


@dataclass(frozen=True)
class Query:
    """The chosen query position and the span it came from (token indices)."""

    index: int
    text: str
    span: list[int]  # token indices of the text span; index is its last token


@dataclass(frozen=True)
class KeySpan:
    """A span of text in the prompt that is not the query (``heads --key``): its text and token indices."""

    text: str
    span: list[int]  # token indices of the key text


WarningCode = Literal[
    "ambiguous_query",  # text occurs count times; the first was used (--occurrence picks one)
    "ambiguous_key",  # the same for heads --key (--key-occurrence)
    "sink_key_excluded",  # heads --no-sink: the key span holds position 0, which adds nothing
    "padded_by_attnscope",  # mask: the tokenizer did not pad the batch; padded with token id ``value``
    "boundary_tokens_differ",  # reuse: prefix+suffix tokenized as one text differs at the boundary
    # heads: the sliding-window layers read only the last ``value`` keys (from position ``count``) at
    # the query, the full-attention layers every key, and both are ranked together
    "mixed_windows",
    # roles, stats: ``count`` tokens (the longest prompt) are more than the ``value`` keys a sliding
    # layer reads, and its scores are ranked or listed together with the full-attention layers'
    "mixed_windows_length",
]


@dataclass(frozen=True)
class ResultWarning:
    """Something a user must see next to the result: a code and its data (render puts it into words)."""

    code: WarningCode
    text: str | None = None
    count: int | None = None
    value: int | None = None


MetricKind = Literal["logprob", "logit_diff"]


@dataclass(frozen=True)
class Metric:
    """What is measured at the last position: log P(target), or logit(target) - logit(foil)."""

    kind: MetricKind  # logprob: log P(target); logit_diff: logit(target) - logit(foil)
    target_id: int
    foil_id: int | None
    target: str  # the target token's text, as the views print it
    foil: str | None = None  # the foil token's text


PaddingSide = Literal["left", "right"]  # where a padded batch puts its pads
PADDING_SIDES: tuple[PaddingSide, ...] = ("left", "right")
