"""Result of ``attnscope knockout``: the metric's change when query -> key attention edges are
blocked in windows of layers (as in Geva et al. 2023).

The raw numbers are the baseline and, per window, the metric with the edges blocked; each
window's effect is derived from them by ``attnscope.results.derive`` (``knockout_effects``).
Nothing here computes or prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from attnscope.results import Result
from attnscope.results.common import KeySpan, Metric, ModelInfo, ResultWarning, Token, Word


@dataclass(frozen=True)
class Window:
    """One window of layers in which the edges were blocked."""

    layers: list[int]  # the layers whose masks had the edges removed
    metric: float  # the metric with the edges blocked in these layers
    effect: float  # derived: metric - baseline


@dataclass(frozen=True)
class KnockoutResult(Result):
    """The metric's change when the edges from the query's tokens to the key's tokens are blocked."""

    SCHEMA = "attnscope.knockout/1"

    model: ModelInfo
    text: str
    chat: bool
    tokens: list[Token]
    words: list[Word]
    metric: Metric
    baseline: float  # the metric on the unmodified run
    query: KeySpan  # the query text (or position) and the positions whose edges are blocked
    key: KeySpan  # the key text and its positions
    heads: list[int]  # the query heads whose edges are blocked
    window: int  # W, layers per window (each window centred on one layer); 0 with --layers
    windows: list[Window]
    warnings: list[ResultWarning] = field(default_factory=list)
