"""Result of ``attnscope heads``: every (layer, head) ranked by the weight a query puts on a key span.

Plain data only: the ranking covers all layers x heads, and the top entries carry the
query's whole (aggregated) row so the view can show where the rest of the weight went.
Nothing here computes or prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from attnscope.results import Result
from attnscope.results.common import KeySpan, ModelInfo, Query, ResultWarning, Token, Word
from attnscope.results.weights import Measure

QueryAgg = Literal["last", "mean"]


@dataclass(frozen=True)
class HeadScore:
    """One head's score: the query's weight on the key span, summed over the span's tokens."""

    layer: int
    head: int
    kv_head: int
    score: float  # the query's weight on the key, summed over the key's tokens (unrounded fp32)


@dataclass(frozen=True)
class TopHead:
    """A top-ranked head and its query row over key positions 0..query (after --query-agg and --no-sink)."""

    layer: int
    head: int
    kv_head: int
    score: float  # as in the ranking
    row: list[float]  # the (aggregated) query row over positions 0..query


@dataclass(frozen=True)
class HeadsResult(Result):
    SCHEMA = "attnscope.heads/2"

    model: ModelInfo
    text: str
    chat: bool
    tokens: list[Token]
    words: list[Word]
    query: Query  # index: the span's last token
    key: KeySpan  # the --key text and its token span
    query_agg: QueryAgg  # how a multi-token query's rows are reduced
    no_sink: bool  # position 0 dropped and each row renormalised before scoring
    ranking: list[HeadScore]  # all num_hidden_layers x num_attention_heads, score descending
    top: list[TopHead]  # the first --top entries of the ranking, each with its row
    warnings: list[ResultWarning] = field(default_factory=list)
    # weight: scores and rows are raw weights. norm: each key's share of ||alpha_ij f_h(x_j)|| (Kobayashi et al. 2020)
    measure: Measure = "weight"
    # max |sum_h sum_j alpha_ij f_h(x_j) + b_O - o_proj output| over all layers (measure norm only)
    completeness_max_diff: float | None = None
