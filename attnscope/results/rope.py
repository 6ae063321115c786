"""Result of ``attnscope rope``: rope_theta, the rotation pairs, and the relative-position check."""

from __future__ import annotations

from dataclasses import dataclass, field

from attnscope.results import Result
from attnscope.results.common import ModelInfo, ResultWarning, Token


@dataclass(frozen=True)
class Pair:
    """Rotation pair i: dims [i, i + head_dim/2] turn by ``angle`` = pos * inv_freq radians at ``pos``."""

    i: int
    dims: list[int]
    inv_freq: float  # rope_theta ** (-2 i / head_dim), radians per token
    wavelength: float  # 2 pi / inv_freq, tokens per full turn
    angle: float  # radians at the chosen --pos
    angle_deg: float  # the same angle in degrees, modulo 360


@dataclass(frozen=True)
class RelativeCheck:
    """Scores of the query at ``query_pos`` against keys 0..query_pos, with both shifted by each delta.

    ``scores[n]`` is rot(q, m) . rot(k_n, n) (unscaled); ``max_diff_per_delta[i]`` is the largest
    |score(m + d, n + d) - score(m, n)| over n for ``deltas[i]``; ``k_only_max_diff[i]`` shifts only
    the keys (the distance changes), for contrast. ``max_diff_vs_model`` compares ``scores`` with
    q . k from the forward's own post-RoPE tensors.
    """

    layer: int
    head: int
    kv_head: int
    query_pos: int
    keys: list[int]
    deltas: list[int]
    scores: list[float]
    max_diff_per_delta: list[float]
    max_diff: float
    max_abs_score: float
    max_diff_vs_model: float
    k_only_max_diff: list[float]


@dataclass(frozen=True)
class VCheck:
    """Max |difference| over every position and head of the layer: *_pre = the layer's own
    projection before RoPE, *_rotated = that projection rotated, post = what attention received."""

    k_pre_vs_post: float
    k_rotated_vs_post: float
    q_pre_vs_post: float
    q_rotated_vs_post: float
    v_pre_vs_post: float
    v_rotated_vs_post: float


@dataclass(frozen=True)
class RopeResult(Result):
    SCHEMA = "attnscope.rope/2"

    model: ModelInfo
    rope_theta: float
    rope_type: str
    head_dim: int
    pos: int
    pairs: list[Pair]
    inv_freq_max_rel_diff: float | None  # our inv_freq vs the model's rotary_emb.inv_freq
    prompt: str
    tokens: list[Token]
    relative_check: RelativeCheck
    v_check: VCheck
    tolerance: float  # the bar relative_check.max_diff is held to
    ok: bool
    warnings: list[ResultWarning] = field(default_factory=list)
