"""Result of ``attnscope generate``: the answer token by token, with each token's attention rows.

``steps[i].weights[layer][head][key]`` is the raw attention row of the position that
produced generated token ``steps[i].index`` (query ``index - 1``, keys ``0..index-1``),
captured during the cached decode step itself, for the selected layers and heads.
Everything else in a step is computed from those rows: segment shares, the top words
(mean over the selection) and the heads that put the most weight on the prompt.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from attnscope.results import Result
from attnscope.results.common import ModelInfo, Word
from attnscope.results.segments import ChatTemplate, Segment, SegmentedToken

StopReason = Literal["eos", "max_new_tokens"]


@dataclass(frozen=True)
class WordShare:
    """A word (``word`` indexes the result's words) and the weight the row gives its tokens
    before the query, mean over the selected layers and heads."""

    word: int
    weight: float


@dataclass(frozen=True)
class HeadShare:
    """One head and the weight its row puts on the prompt's own text (message contents, or
    the whole plain prompt; never position 0, the attention sink, nor template tokens)."""

    layer: int
    head: int
    weight: float


@dataclass(frozen=True)
class GenerateStep:
    """One generated token. ``prob`` is its probability in the distribution it was drawn
    from (the softmax of the logits, divided by the temperature when sampling).

    ``segments[layer][head][segment]`` sums the row over each segment's keys;
    ``group_segments[group][segment]`` is the mean of that over the layers of
    ``GenerateResult.layer_groups[group]`` and the selected heads.
    """

    index: int  # the new token's own position; its row is the one of query index - 1
    id: int
    text: str  # the characters the token touches (see tokens[index] for its label)
    prob: float
    # [layer][head][key], keys 0..index-1, raw. In memory, the analysis keeps the captured fp32 array as it
    # is (a field named in ARRAYS may hold an array); the JSON holds nested lists, or a reference with --arrays
    weights: list[list[list[float]]] | npt.NDArray[np.float32]
    segments: list[list[list[float]]]  # [layer][head][segment]: the row summed over each segment's keys
    group_segments: list[list[float]]  # [group][segment]: mean over the group's layers and the heads
    top_words: list[WordShare]  # the words with the most weight, mean over layers and heads, largest first
    prompt_heads: list[HeadShare]  # the heads that put the most weight on the prompt's own text, largest first


@dataclass(frozen=True)
class GenerateResult(Result):
    SCHEMA = "attnscope.generate/1"
    ARRAYS = ("steps[].weights", "steps[].segments")

    model: ModelInfo
    text: str  # the prompt as the model read it, then the answer
    chat: bool
    tokens: list[SegmentedToken]  # prompt then answer
    words: list[Word]
    segments: list[Segment]  # the prompt's segments, then one "answer" segment
    template: ChatTemplate | None  # chat only
    prompt_len: int
    layers: list[int]
    heads: list[int]
    kv_heads: list[int]  # kv_heads[i] is the KV head that heads[i] reads
    layer_groups: list[list[int]]  # consecutive selected layers, for group_segments
    max_new_tokens: int
    temperature: float | None  # None: greedy
    seed: int | None
    stop: StopReason
    steps: list[GenerateStep]
    detail: list[int]  # the steps (0 = the first answer token) the view details
