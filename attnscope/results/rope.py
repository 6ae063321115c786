"""Result of ``attnscope rope``: rope_theta, the rotation pairs, and the relative-position check."""

from __future__ import annotations

from dataclasses import dataclass, field

from attnscope.results import Result
from attnscope.results.common import ModelInfo, ResultWarning, Token


@dataclass(frozen=True)
class Pair:
    """Rotation pair i: dims [i, i + head_dim/2] turn by ``angle`` = pos * inv_freq radians at ``pos``."""

    i: int  # the pair index
    dims: list[int]  # [i, i + d/2]: Hugging Face pairs dim i with i + d/2
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
    query_pos: int  # m
    keys: list[int]  # n = 0..m
    deltas: list[int]  # the shifts Δ
    scores: list[float]  # score(m, n) per key
    max_diff_per_delta: list[float]  # max |score(m+Δ, n+Δ) - score(m, n)| per Δ
    max_diff: float  # the largest of those
    max_abs_score: float  # the largest |score|: the scale the tolerance is relative to
    max_diff_vs_model: float  # score(m, n) against q·k from the forward itself
    k_only_max_diff: list[float]  # per Δ, shifting only the keys (the scores must change)


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
class RopeBase:
    """The RoPE of one layer type (``config.layer_types``): Gemma 3 gives its full and sliding
    layers bases of their own, most models one for every layer."""

    layer_type: str  # the config's name: full_attention, sliding_attention
    rope_theta: float
    rope_type: str
    layers: list[int]  # the layers of this type


@dataclass(frozen=True)
class RopeResult(Result):
    SCHEMA = "attnscope.rope/3"

    model: ModelInfo
    rope_theta: float  # from config.rope_parameters, for the checked layer's type
    rope_type: str  # from config.rope_parameters, for the checked layer's type
    bases: list[RopeBase]  # every layer type's RoPE, with its layers
    head_dim: int
    pos: int  # the --pos whose angles are listed
    pairs: list[Pair]  # one per pair of dims
    inv_freq_max_rel_diff: float | None  # our inv_freq vs the model's rotary_emb.inv_freq
    prompt: str  # the prompt the real q/k came from
    tokens: list[Token]
    relative_check: RelativeCheck  # score(m+Δ, n+Δ) against score(m, n) on the model's real q/k
    v_check: VCheck  # max |difference| over the layer: which of q, k, v are rotated
    qk_norm: bool  # q and k went through the layer's q_norm, k_norm before RoPE: *_pre is after them
    tolerance: float  # the bar relative_check.max_diff is held to
    ok: bool
    warnings: list[ResultWarning] = field(default_factory=list)
