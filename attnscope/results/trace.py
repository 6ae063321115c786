"""Result of ``attnscope trace``: one position's vector from the embedding through every layer."""

from __future__ import annotations

from dataclasses import dataclass, field

from attnscope.results import Result
from attnscope.results.common import ModelInfo, ResultWarning, Token


@dataclass(frozen=True)
class TopToken:
    """A vocabulary entry: readable text (bytes of a split character shown as ``\\xNN``), id, probability."""

    token: str
    id: int
    prob: float


@dataclass(frozen=True)
class TraceRow:
    """The vector at ``position`` after ``layer`` layers (0 = the embedding, token id only).

    ``head_dims`` are its first dims; ``norm`` its L2 norm; ``cos_prev`` the cosine to the row
    before (None for the embedding); ``top`` the logit lens: final norm + lm_head on this vector.
    """

    stage: str
    layer: int
    norm: float
    cos_prev: float | None
    head_dims: list[float]
    top: list[TopToken]


@dataclass(frozen=True)
class CompareRow:
    """The same stage at the two positions: cosine and largest |difference| between the vectors."""

    stage: str
    layer: int
    cos: float
    max_abs_diff: float


@dataclass(frozen=True)
class Compare:
    """A second position; ``same_id`` says whether it holds the same token id as ``position``."""

    position: int
    token: Token
    same_id: bool
    rows: list[CompareRow]


@dataclass(frozen=True)
class NextCheck:
    """The last row's logit lens against a full forward's logits at the same position.

    ``lens`` is the last row's top-1, ``model`` the full forward's top-1; ``max_diff_logits`` the
    largest |difference| over the vocabulary. ``hidden_states_last_normed`` is the max |difference|
    between transformers' ``hidden_states[-1]`` and final_norm(raw output of the last layer):
    0 means that entry is already normed, so the trace uses the raw layer output instead.
    """

    lens: TopToken
    model: TopToken
    match: bool
    max_diff_logits: float
    hidden_states_last_normed: float
    tolerance: float
    ok: bool


@dataclass(frozen=True)
class TraceResult(Result):
    SCHEMA = "attnscope.trace/2"

    model: ModelInfo
    text: str
    chat: bool
    tokens: list[Token]
    position: int
    token: Token
    dims: int
    rows: list[TraceRow]
    next_token: TopToken
    check: NextCheck
    compare: Compare | None = None
    warnings: list[ResultWarning] = field(default_factory=list)
