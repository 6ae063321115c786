"""Result of ``attnscope weights``: raw query rows plus the view computed from them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from attnscope.results import Result
from attnscope.results.common import ModelInfo, Query, ResultWarning, Token, Word
from attnscope.results.segments import ChatTemplate, Segment

By = Literal["token", "word", "segment"]
Agg = Literal["mean", "max"]
Measure = Literal["weight", "norm"]


@dataclass(frozen=True)
class Bar:
    """One key (a token, a word with ``--by word``, a chat segment with ``--by segment``) and the
    weight the query gives it."""

    label: str  # the token's label, the word's text, or the segment's kind and turn ("user 2")
    tokens: list[int]
    weight: float  # the weight summed over the bar's tokens
    is_query: bool = False  # the query's own bar
    excluded: bool = False  # position 0 under --no-sink
    partial: bool = False  # a word or segment cut at the query: only its tokens up to the query are keys
    segment: int | None = None  # --by segment: the index of the bar's segment in the result's segments


@dataclass(frozen=True)
class Chart:
    """Bars for one head (``layer``/``head`` set) or for the aggregate of the selection."""

    bars: list[Bar]  # one per key (token, word with --by word, segment with --by segment), in order
    total: float  # the sum of the bars
    layer: int | None = None
    head: int | None = None
    kv_head: int | None = None


@dataclass(frozen=True)
class Strip:
    """keys x layers heat strip: values[key][i] is the mean over selected heads at layers[i]."""

    layers: list[int]
    keys: list[str]  # one label per key row
    values: list[list[float]]  # values[key][i]: the mean over the selected heads at layers[i]


@dataclass(frozen=True)
class WeightsView:
    by: By = "token"  # token | word | segment: how keys are grouped in the chart
    agg: Agg = "mean"  # over the selected layers and heads
    no_sink: bool = False  # position 0 excluded and each head's row renormalised
    per_head: bool = False  # one chart per (layer, head)
    all_keys: bool = False  # draw every key; else the top keys and one row for the rest


@dataclass(frozen=True)
class Hardest:
    """Who looks hardest at one key: of the selected layers and heads, the head whose row puts the most
    on it (``weight``, in the chart's measure, position 0 left out of the key's tokens)."""

    label: str
    tokens: list[int]  # the key's tokens that count (position 0 left out)
    layer: int
    head: int
    kv_head: int
    weight: float
    segment: int | None = None  # --by segment: the key's segment (an index into the result's segments)


@dataclass(frozen=True)
class WeightsResult(Result):
    SCHEMA = "attnscope.weights/3"
    ARRAYS = ("weights", "norms", "learned_sink")

    model: ModelInfo
    text: str
    chat: bool
    tokens: list[Token]
    words: list[Word]
    query: Query  # the query position and the text span it came from
    layers: list[int]
    heads: list[int]
    kv_heads: list[int]  # kv_heads[i] is the KV head that heads[i] reads
    weights: list[list[list[float]]]  # [len(layers)][len(heads)][query.index + 1], raw, token space
    view: WeightsView  # the view options the chart was made with
    chart: Chart  # the chart drawn: the bars for the selection (mean or max over layers x heads)
    strip: Strip  # the keys x layers heat strip
    per_head: list[Chart] = field(default_factory=list)
    warnings: list[ResultWarning] = field(default_factory=list)
    # weight: charts show the raw weights. norm: they show each key's share of ||alpha_ij f_h(x_j)||
    # (norm / sum over keys, per layer and head), Kobayashi et al. 2020.
    measure: Measure = "weight"
    # [len(layers)][len(heads)][query.index + 1]: raw ||alpha_ij f_h(x_j)|| (measure norm only)
    norms: list[list[list[float]]] = field(default_factory=list)
    # max |sum_h sum_j alpha_ij f_h(x_j) + b_O - o_proj output| over the selected layers (measure norm only)
    completeness_max_diff: float | None = None
    # position 0's share in the chart when it is the largest of all tokens (an attention sink); else None
    sink_share: float | None = None
    # per key (position 0 and the query's own key left out): the head that looks hardest at it, weight descending
    hardest: list[Hardest] = field(default_factory=list)
    # every token's origin: a chat prompt's segments (template, system, each turn), or one "prompt" segment
    segments: list[Segment] = field(default_factory=list)
    template: ChatTemplate | None = None  # chat prompts: what the chat template did; None for a plain prompt
    # [len(layers)][len(heads)]: the share of each row taken by the head's learned sink logit (models whose
    # attention has one, e.g. gpt-oss: an extra softmax column that is no key); the row's weights sum to 1
    # minus it. Empty for models without sink logits.
    learned_sink: list[list[float]] = field(default_factory=list)
