"""Result of ``attnscope mask``: the note's mask grids, and what the model really applied.

One :class:`MaskSequence` per sequence of the batch (illustration mode has one). Grids
are row-major ``[query_pos][key_pos]`` lists of 0/1: 1 = the query position refers to
the key, 0 = weight 0. In real mode each sequence also carries the mask read from
inside the model's forward and from an eager forward, and whether they equal the grid.
This module holds data only; it computes nothing and never prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from attnscope.results import Result
from attnscope.results.common import ModelInfo, ResultWarning

PAD_LABEL = "[pad]"  # the label a padding slot gets in ``MaskSequence.tokens`` (views word it per language)


@dataclass(frozen=True)
class MaskSequence:
    """One sequence of the padded batch; every grid is [query_pos][key_pos] of 0/1."""

    tokens: list[str]  # one label per batch position; illustration mode uses the positions
    attention_mask: list[int]  # the tokenizer's 2D mask row: 1 = token, 0 = pad
    causal: list[list[int]]  # j <= i
    combined: list[list[int]]  # causal AND attention_mask[key_pos]: the grid this command draws
    padded_rows: list[int]  # query positions that are padding
    text: str = ""  # the prompt (real mode), as the model reads it
    model_mask: list[list[int]] | None = None  # read inside the model's forward (None there = sdpa's is_causal)
    eager_mask: list[list[int]] | None = None  # read inside an eager forward of layer 0
    # combined == model_mask at every layer checked; at a sliding layer, combined with every key
    # sliding_window or more positions before the query set to 0 as well
    agrees_with_model: bool | None = None
    agrees_with_eager: bool | None = None  # the same for eager_mask, the mask of layer 0
    mismatches: list[list[int]] = field(default_factory=list)  # [query_pos, key_pos] where they differ


@dataclass(frozen=True)
class PadRowCheck:
    """How one padded query row came out: eager at layer 0 against attnscope's capture (sdpa)."""

    sequence: int  # which sequence
    query_pos: int  # which row
    allowed_keys: int  # keys the combined grid leaves this row (0: every key masked)
    n_keys: int  # T: the number of keys
    eager_min: float  # min / max weight in the eager row, over heads and keys (layer 0)
    eager_max: float  # largest eager weight in the row, over heads (layer 0)
    eager_sum_min: float  # min / max row sum over heads (layer 0)
    eager_sum_max: float  # largest eager row sum over heads (layer 0)
    capture_max: float  # max weight in the captured row over all layers, heads and keys
    capture_sum_min: float  # smallest captured row sum over layers and heads
    capture_sum_max: float  # largest captured row sum over layers and heads
    eager_vs_capture: float  # max |eager - captured| at layer 0


@dataclass(frozen=True)
class PadColumnCheck:
    """The captured rows of one real token of a padded sequence, over its pad columns."""

    sequence: int  # the sequence checked (the most padded one)
    query_pos: int  # its last real token
    label: str  # that token's label
    pad_columns: list[int]  # its pad key positions
    layers: int
    heads: int
    max_weight: float  # max over layers, heads and pad columns; exactly 0.0 when padding is masked
    row_sum_min: float  # smallest captured row sum
    row_sum_max: float  # largest captured row sum
    causal_hides: bool  # every pad column is after query_pos, so the causal mask alone already hides it


@dataclass(frozen=True)
class MaskKind:
    """How the 4D mask reached the attention: none (sdpa's is_causal path), bool, or additive float."""

    kind: Literal["none", "bool", "additive"]
    dtype: str | None = None  # additive: its float dtype
    shape: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class MaskResult(Result):
    SCHEMA = "attnscope.mask/2"

    mode: Literal["illustration", "model"]
    side: Literal["left", "right"]  # where the pads are
    sequences: list[MaskSequence]  # one entry per sequence of the batch (illustration mode: one)
    shown_positions: list[int]  # positions the view draws; a jump between two entries is drawn as an ellipsis
    max_size: int  # --max-size: positions drawn per grid
    model: ModelInfo | None = None
    chat: bool = False
    mask_kinds: list[MaskKind] = field(default_factory=list)  # every distinct mask the layers' attention received
    layers_checked: int = 0  # layers whose mask was compared with the grid
    agrees_with_model: bool | None = None  # every sequence agrees
    agrees_with_eager: bool | None = None  # every sequence agrees with the eager mask (null in illustration mode)
    pad_rows: list[PadRowCheck] = field(default_factory=list)  # for each padded sequence, its first padded query row
    pad_columns: PadColumnCheck | None = None  # the pad columns of a real token (null when no sequence is padded)
    warnings: list[ResultWarning] = field(default_factory=list)
