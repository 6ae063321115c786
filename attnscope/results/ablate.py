"""Result of ``attnscope ablate``: the exact change in a metric when each head's output is removed.

The raw numbers are the baseline metric, ``effects[layer][head]`` (the metric with the head
removed minus the baseline) and each head's attention from the last position. The ranking
and the rank correlations are derived from them by ``attnscope.results.derive``
(``ablate_numbers``), which the analysis and ``render``'s check both call. Nothing here
computes or prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from attnscope.results import Result
from attnscope.results.common import KeySpan, Metric, ModelInfo, ResultWarning, Token, Word

Mode = Literal["zero", "mean"]


@dataclass(frozen=True)
class RankedEffect:
    """One head in the ranking: its effect and how much the last position looks at the key (or its top key)."""

    layer: int
    head: int
    kv_head: int
    effect: float  # metric(ablated) - baseline
    attention: float  # the last position's weight on the key (or on its top key)
    top_key: int | None  # without --key: the position it looks at most (position 0 left out)


@dataclass(frozen=True)
class CheckedHead:
    """A head whose first-order estimate was checked by an exact ablation (``--approx``)."""

    layer: int
    head: int
    estimated: float  # the first-order estimate of metric(ablated) - baseline
    exact: float  # the exact metric(ablated) - baseline


@dataclass(frozen=True)
class AblateResult(Result):
    """Each selected head removed in turn: the exact change in the metric (``estimated``: a first-order estimate)."""

    SCHEMA = "attnscope.ablate/1"
    ARRAYS = ("effects", "attention", "top_key")

    model: ModelInfo
    text: str
    chat: bool
    tokens: list[Token]
    words: list[Word]
    metric: Metric
    baseline: float  # the metric on the unmodified run
    mode: Mode  # zero: the head's slice of o_proj's input set to 0; mean: set to its mean over positions
    positions: list[int]  # the query positions at which the head's output was replaced
    layers: list[int]  # the selected layers (the rows of effects)
    heads: list[int]  # the selected query heads (the columns of effects)
    effects: list[list[float]]  # [layer][head]: metric(ablated) - baseline, raw
    attention: list[list[float]]  # [layer][head]: the last position's weight on the key (or on its top key)
    key: KeySpan | None = None  # --key: the text and its token span
    top_key: list[list[int]] | None = None  # without --key: [layer][head] the top key's position (not position 0)
    mean_over: str | None = None  # --mean-over: the file whose prompts gave the means
    mean_tokens: int | None = None  # mode mean: how many positions the means were taken over
    estimated: bool = False  # --approx: effects are first-order estimates (attribution patching)
    checked: list[CheckedHead] = field(default_factory=list)  # --approx: the heads ablated exactly
    ranking: list[RankedEffect] = field(default_factory=list)  # derived: every head, the largest drop first
    rank_correlation: float | None = None  # derived: Spearman of the drop (-effect) and the attention
    check_correlation: float | None = None  # derived, --approx: Spearman of estimate and exact over checked
    warnings: list[ResultWarning] = field(default_factory=list)
