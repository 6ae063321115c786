"""Result of ``attnscope explore``: every stored query row of every layer and head, quantised.

``weights`` holds unsigned bytes: for each (layer, head) in order, one block of
``sum(p + 1 for p in positions)`` bytes, the row of each stored query position ``p``
over key positions ``0..p`` in turn. A byte ``k`` stands for the weight ``k / levels``;
each row was rounded so that its bytes add up to exactly ``levels`` (largest remainder),
so every stored weight is within ``1 / levels`` of the model's fp32 weight. With
``full`` set, ``positions`` is every position of the prompt. This is not a JSON
schema (the page is its only face) and holds no words.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from attnscope.results.common import ModelInfo, ResultWarning, Token, Word


@dataclass(frozen=True)
class ExploreData:
    model: ModelInfo
    text: str
    chat: bool
    tokens: list[Token]
    words: list[Word]
    positions: list[int]  # stored query positions, ascending
    full: bool  # every position is stored (the prompt is within ``limit``)
    limit: int  # the longest prompt whose every row is stored
    query: int  # the query shown first
    key: list[int]  # token indices of the key shown first in the heads grid
    levels: int  # a byte k is the weight k / levels
    weights: bytes = field(repr=False)
    # with a target: [layer][head] the exact change in the metric when the head is removed (``ablate``)
    effects: list[list[float]] | None = None
    metric: str | None = None  # the metric of ``effects`` as the views name it: log P(' 사')
    warnings: list[ResultWarning] = field(default_factory=list)
