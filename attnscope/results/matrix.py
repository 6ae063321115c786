"""Result of ``attnscope matrix``: the query x key weights of one layer and one head.

``weights`` holds the raw token-level rows for query positions ``window[0]..window[1]-1``
against key positions in the same range; ``before`` is each row's weight on keys left of
the window. ``view`` is what the heatmap shows: the same matrix, grouped by word or
condensed into blocks when asked or when it is too long to draw. Nothing here computes
or prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from attnscope.results import Result
from attnscope.results.common import ModelInfo, Token, Word
from attnscope.results.weights import Measure

By = Literal["token", "word"]


@dataclass(frozen=True)
class MatrixView:
    """The drawn grid. ``cells[r][c]`` is the mean over row group ``r``'s query tokens of
    the sum over column group ``c``'s key tokens (each row still sums to 1 with ``before``)."""

    by: Literal["token", "word", "block"]  # block: condensed, too long to draw
    labels: list[str]  # one label per row/column group
    groups: list[list[int]]  # absolute token indices in each row/column group
    # cells[r][c]: mean over row group r's query tokens of the sum over column group c's key tokens
    cells: list[list[float]]
    before: list[float]  # per row group: weight on keys left of the window


@dataclass(frozen=True)
class MatrixResult(Result):
    SCHEMA = "attnscope.matrix/2"
    ARRAYS = ("weights", "before", "value_norms")

    model: ModelInfo
    text: str
    chat: bool
    tokens: list[Token]
    words: list[Word]
    by: By  # what was asked for (view.by says what is drawn)
    layer: int
    head: int
    kv_head: int
    window: list[int]  # [start, end): the query and key positions in ``weights``
    weights: list[list[float]]  # [query_pos - start][key_pos - start], raw fp32 softmax rows
    before: list[float]  # [query_pos - start]: weight on keys 0..start-1
    view: MatrixView  # what is drawn: labels, groups and cells per row/column group
    # weight: view cells are the raw weights; norm: each row's share of ||alpha_ij f_h(x_j)|| (Kobayashi et al. 2020)
    measure: Measure = "weight"
    # measure norm only: ||f_h(x_j)|| for key positions 0..window[1]-1, so alpha_ij * value_norms[j] is recomputable
    value_norms: list[float] | None = None
