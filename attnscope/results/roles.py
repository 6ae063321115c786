"""Result of ``attnscope roles``: previous-token, duplicate-token, induction and sink scores of every head.

``scores`` holds four ``[layer][head]`` grids over all layers and heads; ``tokens`` holds
the token ids the scores were computed on, so anyone can recompute them. ``top`` is the
ranking the view prints (every role's heads by score, highest first, ``top`` entries).
Nothing here computes or prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from attnscope.results import Result
from attnscope.results.common import ModelInfo, ResultWarning, Token

Role = Literal["previous_token", "duplicate_token", "induction", "sink"]
ROLES: tuple[Role, ...] = ("previous_token", "duplicate_token", "induction", "sink")


@dataclass(frozen=True)
class RoleScores:
    """Each grid is [layer][head]. The first three are TransformerLens' ``detect_head`` scores
    (error measure ``mul``): the share of a head's whole attention pattern that falls on the
    role's detection pattern. ``sink`` is Gu et al. 2024's per-head importance of key 0: its
    attention averaged over every query that sees it."""

    previous_token: list[list[float]]
    duplicate_token: list[list[float]]
    induction: list[list[float]]
    sink: list[list[float]]


@dataclass(frozen=True)
class RankedHead:
    layer: int
    head: int
    kv_head: int
    score: float


@dataclass(frozen=True)
class RoleTop:
    """The highest-scoring heads of each role, score descending (ties: lower layer, then head)."""

    previous_token: list[RankedHead]
    duplicate_token: list[RankedHead]
    induction: list[RankedHead]
    sink: list[RankedHead]


@dataclass(frozen=True)
class RolesResult(Result):
    SCHEMA = "attnscope.roles/1"
    ARRAYS = ("scores.previous_token", "scores.duplicate_token", "scores.induction", "scores.sink")

    model: ModelInfo
    source: Literal["random", "prompt"]
    text: str  # the prompt; for random tokens, the decoded ids (for reading only)
    length: int  # random: tokens in each of the two copies; prompt: number of tokens
    seed: int | None  # random: the seed the ids were drawn with
    bos: bool  # random: a BOS token was put before the two copies
    tokens: list[Token]
    scores: RoleScores
    top: RoleTop
    sink_threshold: float  # Gu et al.'s epsilon: a head whose sink score exceeds it counts as a sink head
    sink_rate: float  # share of all heads whose sink score exceeds sink_threshold
    # mixed_windows_length: the tokens are more than a sliding layer's window, and those layers are ranked with the full ones
    warnings: list[ResultWarning] = field(default_factory=list)
