"""Result of ``attnscope explain``: one head's scaled dot-product attention, step by step."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from attnscope.results import Result
from attnscope.results.common import ModelInfo, Query, ResultWarning, Token


@dataclass(frozen=True)
class RopeEvidence:
    """Max |difference| over positions 0..query of this head (and its KV head).

    *_pre_vs_post: the layer's own q_proj/k_proj/v_proj output against what attention used
    (large for q and k: they were rotated; zero at position 0, whose angle is 0).
    *_rotated_vs_post: that projection rotated by RoPE against what attention used (about 0).
    """

    q_pre_vs_post: float
    q_rotated_vs_post: float
    k_pre_vs_post: float
    k_rotated_vs_post: float
    v_pre_vs_post: float


@dataclass(frozen=True)
class Check:
    """One comparison: ``value`` = max |difference| (or |sum - 1|), ``ok`` = value <= limit.

    kind ``independent``: two different computations of the same numbers (it fails when either
    is wrong); ``arithmetic``: true by construction of the formula (shown, not evidence).
    name: q_recomputed / k_recomputed / v_recomputed (q_proj/k_proj/v_proj of the layer's input,
    RoPE by the model's own function, vs what the model handed attention), weights (recomputed vs
    the captured row), out (vs the model's own attention output), masked_keys (captured weight on
    keys after the query), rows_sum_to_one.
    """

    name: str
    kind: Literal["independent", "arithmetic"]
    value: float
    limit: float
    ok: bool


@dataclass(frozen=True)
class ExplainResult(Result):
    """Everything indexed by key j runs over ``keys`` = 0..query.index (the keys the query may see).

    scores[j] = q . k_j; scaled[j] = scores[j] * scaling (= / sqrt(head_dim)); weights = softmax(scaled);
    captured[j] is the row the capture engine (``attnscope weights``) returned; out = sum_j weights[j] v_j
    and model_out is the model's attention output for this head before o_proj. q, k and v are
    recomputed from the layer's input (projections, then the model's own RoPE), not the captured ones. ``masked`` lists the
    key positions after the query that the mask removed (set to -inf), and ``masked_captured_max`` the
    largest weight the capture gave any of them (0 when the mask works).
    """

    SCHEMA = "attnscope.explain/3"

    model: ModelInfo
    text: str
    chat: bool
    tokens: list[Token]
    query: Query
    layer: int
    head: int
    kv_head: int
    shared_heads: list[int]  # query heads that read the same KV head
    head_dim: int
    scaling: float
    keys: list[int]
    q: list[float]
    k: list[list[float]]  # [len(keys)][head_dim]
    v: list[list[float]]  # [len(keys)][head_dim]
    scores: list[float]
    scaled: list[float]
    masked: list[int]
    masked_captured_max: float
    weights: list[float]
    captured: list[float]
    out: list[float]
    model_out: list[float]
    max_diff_weights: float
    max_diff_out: float
    rope: RopeEvidence
    qk_norm: bool  # q and k went through the layer's q_norm, k_norm before RoPE: *_pre is after them
    tolerance: float
    ok: bool
    checks: list[Check] = field(default_factory=list)
    dims: int = 4  # how many dims the view shows
    warnings: list[ResultWarning] = field(default_factory=list)
