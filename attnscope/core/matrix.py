"""The ``matrix`` computation: the full query x key weights of ONE layer and ONE head.

Only that head's rows are computed (``engine.Request(heads=...)``), so memory is
O(P x T) for that head alone, where P is the number of query rows (all T, or the
``--window``); layers after the requested one never run. Before running, the memory
this needs (fp32 rows, their Python floats and JSON text) goes through the shared
guard (``capture.memory``), which refuses with the estimate when it does not fit. The grid that is drawn (``MatrixView``) is the same
matrix grouped by word, or condensed into blocks when it is too wide to draw: a cell is
the mean over the row group's query tokens of the sum over the column group's key
tokens, so each row still sums to 1. This module does not load models and does not print.
"""

from __future__ import annotations

import math
from typing import Any, Literal, get_args

import torch

from attnscope.capture import anatomy, engine, memory
from attnscope.core.common import as_array, attention_layers
from attnscope.core.prompt.spec import ChatSpec, one, one_of
from attnscope.core.prompt.tokens import Encoded, check_length, encode_prompt
from attnscope.errors import AttnscopeError
from attnscope.model import Loaded
from attnscope.results.common import ModelInfo
from attnscope.results.derive import F32, group_cells, shares, total
from attnscope.results.matrix import By, MatrixResult, MatrixView
from attnscope.results.weights import Measure

MAX_GROUPS = 32  # most rows/columns drawn (fits 100 columns); longer matrices are condensed into blocks
# Per matrix cell: fp32 scores plus softmax working copies where the model runs (~20 B),
# the rows as Python floats in the result (~32 B), and their JSON text (~24 B).
DEVICE_BYTES_PER_CELL = 20
HOST_BYTES_PER_CELL = 80


def check_window(window: tuple[int | None, int | None] | None, n: int) -> tuple[int, int]:
    """(A, B): token positions A..B-1; None on either side means the prompt's start or end."""
    if window is None:
        return 0, n
    lo = 0 if window[0] is None else window[0]
    hi = n if window[1] is None else window[1]
    if not 0 <= lo < hi <= n:
        shown = f"{'' if window[0] is None else lo}:{'' if window[1] is None else hi}"
        raise AttnscopeError("window_range", arg="window", value=repr(shown), n=n, m=n)
    return lo, hi


def check_memory(rows: int, cols: int, device: str = "cpu") -> None:
    """Refuse, with the estimate, when a rows x cols matrix for one head will not fit
    (the shared guard: free memory with headroom, capped by $ATTNSCOPE_MEMORY_LIMIT)."""
    cells = rows * cols
    sizes: dict[str, Any] = {"a": rows, "b": cols, "weights": f"{cells:,}", "arg": "window"}
    if device.startswith("cpu"):
        memory.guard(cells * (HOST_BYTES_PER_CELL + DEVICE_BYTES_PER_CELL), "memory_matrix", **sizes)
    else:
        memory.guard(cells * HOST_BYTES_PER_CELL, "memory_matrix", **sizes)
        memory.guard(cells * DEVICE_BYTES_PER_CELL, "memory_matrix_device", device, other="device", **sizes)


def _blocks(start: int, end: int, max_groups: int) -> list[list[int]]:
    size = math.ceil((end - start) / max_groups)
    return [list(range(s, min(s + size, end))) for s in range(start, end, size)]


def make_view(enc: Encoded, weights: F32, before: F32, start: int, end: int, by: By, max_groups: int) -> MatrixView:
    """The drawn grid: by token, by word, or in blocks of tokens when there are more than ``max_groups``."""
    kind: Literal["token", "word", "block"]
    if by == "word":
        groups = [w.tokens for w in enc.words]
        labels = [w.text for w in enc.words]
        kind = "word"
    else:
        groups = [[i] for i in range(start, end)]
        labels = [enc.tokens[i].label for i in range(start, end)]
        kind = "token"
    if len(groups) > max_groups:
        groups = _blocks(start, end, max_groups)
        labels = [enc.tokens[g[0]].label + ("…" if len(g) > 1 else "") for g in groups]
        kind = "block"
    if kind == "token":
        cells, before_g = weights, before
    else:
        cells, before_g = group_cells(weights, before, groups, start)
    return MatrixView(by=kind, labels=labels, groups=groups, cells=cells.tolist(), before=before_g.tolist())


def matrix(
    loaded: Loaded,
    prompt: str,
    *,
    layer: int,
    head: int,
    by: By = "token",
    measure: Measure = "weight",
    window: tuple[int | None, int | None] | None = None,
    chat: ChatSpec | None = None,
    max_groups: int = MAX_GROUPS,
) -> MatrixResult:
    """The whole query x key weight matrix of one layer and head (negative indices count from the end).

    ``window``: (A, B), only query and key positions A..B-1 (None on a side: the prompt's start or end).
    """
    by = one_of(by, get_args(By), "by")
    measure = one_of(measure, get_args(Measure), "measure")
    info = loaded.info
    (layer_i,) = attention_layers(info, [one(layer, info.num_hidden_layers, "layer")])
    head_i = one(head, info.num_attention_heads, "head")
    enc = encode_prompt(loaded.tokenizer, prompt, chat)
    n = len(enc.ids)
    check_length(n, anatomy.of(loaded.model).max_positions)
    start, end = check_window(window, n)
    if by == "word" and (start, end) != (0, n):
        raise AttnscopeError("window_by_word", arg="by", other="window")
    check_memory(end - start, end, str(next(loaded.model.parameters()).device))
    ids = torch.tensor([enc.ids[:end]])  # (1, end): later tokens cannot change causal rows before `end`
    positions = torch.arange(start, end)[None, :]  # (1, P)
    norms = frozenset({layer_i}) if measure == "norm" else frozenset()
    request = engine.Request(positions=positions, layers=frozenset({layer_i}), heads=frozenset({head_i}), norms=norms)
    got = engine.run(loaded.model, ids, torch.ones_like(ids), request)
    engine.check_finite(got.rows, heads=[head_i])  # rows hold only this head: name it by its model index
    rows = got.rows[layer_i][0, 0]  # (P, end): the one head's rows
    value_norms = got.norms[layer_i][0, head_i, :end] if measure == "norm" else None  # (end,): ||f_h(x_j)||
    return matrix_result(info, enc, layer_i, head_i, rows, (start, end), by, value_norms, max_groups)


def matrix_result(
    info: ModelInfo,
    enc: Encoded,
    layer: int,
    head: int,
    rows: torch.Tensor,
    window: tuple[int, int],
    by: By,
    value_norms: torch.Tensor | None = None,
    max_groups: int = MAX_GROUPS,
) -> MatrixResult:
    """The result from one head's rows (P, end) fp32 over query positions ``window`` = (start, end);
    with ``value_norms`` (end,) ||f_h(x_j)|| the grid shows each key's share of ||alpha f|| (measure
    norm). The rows alone make it, so a browser that holds them (``attnscope tui``) builds it too."""
    start, end = window
    weights = as_array(rows[:, start:end])  # (P, P)
    before = total(as_array(rows[:, :start]), -1)  # (P,)
    shown = as_array(rows)
    if value_norms is not None:
        shown = shares(as_array(rows * value_norms[None, :]))  # (P, end): each row's share of ||alpha f||
    view = make_view(enc, shown[:, start:end], total(shown[:, :start], -1), start, end, by, max_groups)
    groups = info.num_attention_heads // info.num_key_value_heads  # no model here: the tui builds it from rows
    return MatrixResult(
        model=info,
        text=enc.text,
        chat=enc.chat,
        tokens=enc.tokens,
        words=enc.words,
        by=by,
        layer=layer,
        head=head,
        kv_head=head // groups,
        window=[start, end],
        weights=weights.tolist(),
        before=before.tolist(),
        view=view,
        measure="weight" if value_norms is None else "norm",
        value_norms=None if value_norms is None else value_norms.tolist(),
    )
