"""Result of ``attnscope flow``: information-flow routes to a prediction (Ferrando & Voita 2024).

Each layer's update at a position is split into parts: the attention sum
``x_mid_i = x_i + sum_j sum_h alpha_ij^h f_h(x_j) (+ b_O)`` into the residual ``x_i``, one part per
source (or per source and head) and the bias; the MLP sum ``x_out_i = x_mid_i + MLP(x_mid_i)``
into its two terms. A part's importance is its proximity ``max(||y||_1 - ||y - z||_1, 0)`` to the
sum ``y``, divided by the proximities of all parts of that sum. The walk starts at the
prediction's position after the last layer and keeps the parts above the threshold, layer by
layer down to the input tokens. The edges are the raw importances; the view and the figure
derive the routes from them. Nothing here computes or prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from attnscope.results import Result
from attnscope.results.common import ModelInfo, ResultWarning, Token, Word

EdgeKind = Literal["attention", "mlp", "residual", "bias"]
Block = Literal["attention", "mlp"]
FlowBy = Literal["token", "word"]


@dataclass(frozen=True)
class Edge:
    """One part above the threshold, at a position the walk reached.

    In the attention block of layer ``layer``, an ``attention`` edge runs from the layer's input
    at a source position (``from``) to the middle of the layer at ``to``; the ``residual`` edge
    runs from the layer's input at ``to`` to its middle there; ``bias`` is o_proj's bias (``from``
    is null). In the MLP block, ``mlp`` (the MLP's output) and ``residual`` run from the layer's
    middle at ``to`` to its output there.
    """

    layer: int
    kind: EdgeKind  # attention: from a source position; residual: the sum's own input; mlp: the MLP's output; bias
    block: Block  # the sum the part belongs to: the attention block's or the MLP block's
    # the source position (by word: the source word's last token up to ``to``); null for the bias
    from_: int | None = field(metadata={"json": "from"})
    to: int  # the position whose sum this part is in
    head: int | None  # the query head, with heads only (attention edges); null otherwise
    importance: float  # the part's proximity divided by the sum of the proximities of its sum's parts


@dataclass(frozen=True)
class LayerCheck:
    """Completeness at one layer: the parts of each decomposed sum added back, against the model's own."""

    layer: int
    attention: list[int]  # the positions whose attention sum was decomposed
    mlp: list[int]  # the positions whose MLP sum was decomposed
    attention_error: float  # max |x_i + sum of the parts - (x_i + the attention block's output)|
    mlp_error: float  # max |x_mid_i + MLP(x_mid_i) - the layer's output|
    scale: float  # max |value| of the sums checked (the errors are absolute; this is what they compare with)


@dataclass(frozen=True)
class VerifiedEdge:
    """An attention edge knocked out in its layer: the prediction's log-prob change beside its importance."""

    layer: int
    from_: int = field(metadata={"json": "from"})  # the source position (with by word: the source word's last token)
    to: int
    head: int | None  # the head knocked out; null: every head
    sources: list[int]  # the key positions whose edges to ``to`` were blocked
    importance: float
    logprob: float  # log P(prediction) with the edge knocked out
    effect: float  # derived: logprob - baseline


@dataclass(frozen=True)
class FlowResult(Result):
    """The routes along which information reaches the prediction at ``pos``, with each part's importance."""

    SCHEMA = "attnscope.flow/1"

    model: ModelInfo
    text: str
    chat: bool
    tokens: list[Token]
    words: list[Word]
    token_ids: list[int]  # the ids of every token of text (the walk reads those up to pos)
    pos: int  # the position whose prediction the walk starts from
    prediction: int  # the token id the model predicts there
    prediction_text: str  # that token's text
    logprob: float  # log P(prediction) at pos
    threshold: float  # parts with an importance above this are kept
    by: FlowBy  # token: one part per source token; word: one per source word (its tokens summed)
    heads: bool  # one attention part per (source, head) instead of per source
    edges: list[Edge]  # every part above the threshold at a position the walk reached, raw importances
    layers: list[LayerCheck]  # one per layer, from layer 0
    tolerance: float  # the completeness bound the errors are held to
    verified: list[VerifiedEdge] = field(default_factory=list)  # --verify: the top attention edges knocked out
    baseline: float | None = None  # --verify: log P(prediction) on the clean run the knockouts compare with
    rank_correlation: float | None = None  # derived, --verify: Spearman of importance and drop (-effect)
    warnings: list[ResultWarning] = field(default_factory=list)
