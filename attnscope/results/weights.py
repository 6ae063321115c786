"""Result of ``attnscope weights``: raw query rows plus the view computed from them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from attnscope.results import Result
from attnscope.results.common import ModelInfo, Query, ResultWarning, Token, Word

By = Literal["token", "word"]
Agg = Literal["mean", "max"]


@dataclass(frozen=True)
class Bar:
    """One key (a token, or a word with ``--by word``) and the weight the query gives it."""

    label: str  # the token's label, or the word's text
    tokens: list[int]
    weight: float
    is_query: bool = False
    excluded: bool = False  # position 0 under --no-sink
    partial: bool = False  # a word cut at the query: only its tokens up to the query are keys


@dataclass(frozen=True)
class Chart:
    """Bars for one head (``layer``/``head`` set) or for the aggregate of the selection."""

    bars: list[Bar]
    total: float
    layer: int | None = None
    head: int | None = None
    kv_head: int | None = None


@dataclass(frozen=True)
class Strip:
    """keys x layers heat strip: values[key][i] is the mean over selected heads at layers[i]."""

    layers: list[int]
    keys: list[str]
    values: list[list[float]]


@dataclass(frozen=True)
class WeightsView:
    by: By = "token"
    agg: Agg = "mean"  # over the selected layers and heads
    no_sink: bool = False
    per_head: bool = False


@dataclass(frozen=True)
class WeightsResult(Result):
    SCHEMA = "attnscope.weights/2"

    model: ModelInfo
    text: str
    chat: bool
    tokens: list[Token]
    words: list[Word]
    query: Query
    layers: list[int]
    heads: list[int]
    kv_heads: list[int]  # kv_heads[i] is the KV head that heads[i] reads
    weights: list[list[list[float]]]  # [len(layers)][len(heads)][query.index + 1], raw, token space
    view: WeightsView
    chart: Chart
    strip: Strip
    per_head: list[Chart] = field(default_factory=list)
    warnings: list[ResultWarning] = field(default_factory=list)
