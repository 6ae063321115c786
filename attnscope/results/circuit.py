"""Result of ``attnscope circuit``: edge scores over a dataset of prompt pairs, and their faithfulness.

The raw values are the metric (logit(target) - logit(foil) at the last position) of every pair
on its clean run, on its corrupt run and on every edge-patched run of the curve; every edge's
score; and, for ``--check``, the exact effect of each checked edge. The means, the faithfulness
of each curve point, the bootstrap intervals, CPR and CMD are derived from them by
``attnscope.results.derive`` (``circuit_numbers``), and ``attnscope.results.check`` derives them
again from a saved document. The graph (its nodes and edges, in order) is
``attnscope.results.graph``. Nothing here computes or prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from attnscope.results import Result
from attnscope.results.common import ModelInfo, ResultWarning
from attnscope.results.graph import GraphKind, InputKind

Method = Literal["eap-ig", "eap", "ifr", "random"]
METHODS: tuple[Method, ...] = ("eap-ig", "eap", "ifr", "random")
# MIB's edge fractions: the faithfulness curve is taken at each
FRACTIONS: tuple[float, ...] = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)


@dataclass(frozen=True)
class CircuitEdge:
    """One edge of the graph: an upstream node, the downstream node and the input it enters by."""

    from_: str = field(metadata={"json": "from"})  # input, a{l}.h{h} or m{l}
    to: str  # a{l}.h{h}, a{l}.kv{g}, m{l} or logits
    input: InputKind  # q, k, v, mlp or logits
    score: float  # the method's score: positive where the edge carries the clean behaviour


@dataclass(frozen=True)
class CurvePoint:
    """The circuit of one edge fraction: the top edges by |score|, pruned to paths from input to logits."""

    fraction: float  # of all edges, before pruning
    chosen: int  # edges taken by |score| (round(fraction * edges), at least 1)
    edges: int  # edges left after pruning: the circuit patched
    pair_metric: list[float]  # [pair]: the metric with only the circuit's edges from the clean run
    metric: float  # derived: the mean of pair_metric
    faithfulness: float  # derived: (metric - corrupt) / (clean - corrupt), means over pairs
    ci_low: float  # derived: the 95% bootstrap interval of faithfulness
    ci_high: float


@dataclass(frozen=True)
class MethodRun:
    """One scoring method: its edge scores, its curve and the areas under it."""

    method: Method
    edges: list[CircuitEdge]  # every edge of the graph, in the graph's order
    curve: list[CurvePoint]
    cpr: float  # derived: the area under the curve (trapezoid over the fractions, linear axis)
    cmd: float  # derived: the area between the curve and 1 (|1 - faithfulness|, the same rule)
    cpr_ci: list[float]  # derived: [low, high], 95% bootstrap over pairs
    cmd_ci: list[float]


@dataclass(frozen=True)
class CheckedEdge:
    """``--check``: one of the top edges patched exactly (corrupt for it alone, every other edge clean)."""

    index: int  # the edge's place in the graph's order
    estimate: float  # the method's score
    pair_metric: list[float]  # [pair]: the metric with this edge patched
    exact: float  # derived: mean clean metric - mean pair_metric


@dataclass(frozen=True)
class Evaluation:
    """``--evaluate``: a given edge set, patched exactly as given (no pruning)."""

    path: str
    edges: int
    pair_metric: list[float]
    metric: float  # derived
    faithfulness: float  # derived
    ci_low: float  # derived
    ci_high: float


@dataclass(frozen=True)
class SkippedPair:
    line: int  # 1-based, as an editor shows it
    reason: str


@dataclass(frozen=True)
class Pairs:
    """The pairs file and what became of its lines."""

    path: str
    lines: int  # lines in the file, blank ones included
    used: list[int]  # the line of every pair used, in order: the [pair] axis
    skipped: list[SkippedPair]
    tokens: int  # tokens of the clean prompts used


@dataclass(frozen=True)
class CircuitResult(Result):
    """Edges of the model's graph scored over prompt pairs, and the faithfulness of the top edges."""

    SCHEMA = "attnscope.circuit/1"

    model: ModelInfo
    graph: GraphKind  # gqa: K/V inputs per KV head; mib: per query head (MIB's count)
    n_edges: int  # edges of the graph
    metric: Literal["logit_diff"]  # logit(target) - logit(foil) at the last position, per pair
    pairs: Pairs
    steps: int  # eap-ig's interpolation steps
    seed: int  # random's scores and the bootstrap's weights
    bootstrap: int  # bootstrap replicates
    pair_clean: list[float]  # [pair]: the metric on the clean prompt
    pair_corrupt: list[float]  # [pair]: the metric on the corrupt prompt
    clean: float  # derived: the mean of pair_clean
    corrupt: float  # derived: the mean of pair_corrupt
    method: Method | None  # the first method asked for (None with --evaluate alone)
    edges: list[CircuitEdge]  # the first method's edges (every edge, in the graph's order)
    curve: list[CurvePoint]  # the first method's curve
    cpr: float | None  # derived: the first method's CPR
    cmd: float | None  # derived: the first method's CMD
    cpr_ci: list[float] = field(default_factory=list)  # derived: [low, high] of cpr, 95% bootstrap over pairs
    cmd_ci: list[float] = field(default_factory=list)  # derived: the same for cmd
    compare: list[MethodRun] = field(default_factory=list)  # --compare: the methods after the first, the same way
    check: list[CheckedEdge] = field(default_factory=list)  # --check: the top edges patched exactly
    check_correlation: float | None = None  # derived: Spearman of estimate and exact over the checked edges
    evaluation: Evaluation | None = None  # --evaluate
    warnings: list[ResultWarning] = field(default_factory=list)
