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

    layer: int  # layers applied: 0 = the embedding, n = the output of layer n - 1 (hidden_states[n])
    norm: float  # L2 norm
    cos_prev: float | None  # cosine to the previous row; null for the embedding
    head_dims: list[float]  # the first dims values
    top: list[TopToken]  # the logit lens: softmax over the vocabulary, top candidates


@dataclass(frozen=True)
class CompareRow:
    """The same stage at the two positions: cosine and largest |difference| between the vectors."""

    layer: int  # as in TraceRow: 0 = the embedding, n = the output of layer n - 1
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
    SCHEMA = "attnscope.trace/3"

    model: ModelInfo
    text: str
    chat: bool
    tokens: list[Token]
    position: int  # the traced position
    token: Token  # its token
    dims: int  # how many leading dims head_dims holds
    rows: list[TraceRow]  # one per stage: the embedding, then after each layer
    next_token: TopToken  # the full forward's top-1 at position
    check: NextCheck  # the logit lens's last row against the full forward
    compare: Compare | None = None  # null, or the same rows compared with a second position
    warnings: list[ResultWarning] = field(default_factory=list)
