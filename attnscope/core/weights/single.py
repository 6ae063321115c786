"""The ``weights`` computation: capture query rows and build the note's chart from them.

``query_rows`` runs one padded batch and returns, per sequence, the fp32 rows
(layer, head, key_pos) of one query position, for the selected layers only; layers
after the last one selected never run and no logits are computed. ``weights_result``
wraps that into a :class:`WeightsResult`; its chart, keys x layers strip, per-head charts
and the rest are derived by ``attnscope.results.derive``. It does not load models and does
not print.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import get_args

import torch

from attnscope.capture import anatomy, engine
from attnscope.core.common import as_array, attention_layers, pad_batch, pad_id
from attnscope.core.prompt.segments import prompt_segments
from attnscope.core.prompt.spec import ChatSpec, QuerySpec, Selection, one_of
from attnscope.core.prompt.tokens import Encoded, check_length, encode_prompt, pick_query
from attnscope.errors import AttnscopeError
from attnscope.model import Loaded
from attnscope.results.common import ModelInfo, Query, ResultWarning
from attnscope.results.derive import weight_keys, weights_numbers
from attnscope.results.weights import Measure, WeightsResult, WeightsView


def query_rows(
    loaded: Loaded, encs: Sequence[Encoded], queries: Sequence[int], layers: Sequence[int], side: str = "left"
) -> list[torch.Tensor]:
    """Per sequence, a (len(layers), head, query + 1) fp32 tensor of its query's rows.

    All sequences run as one padded batch; each row is cut back to its own tokens, so
    it equals the row the sequence would get alone.
    """
    ids, mask, offsets = pad_batch(encs, pad_id(loaded.tokenizer), side)
    positions = torch.tensor([[off + q] for off, q in zip(offsets, queries, strict=True)])  # (B, 1)
    got = engine.run(loaded.model, ids, mask, engine.Request(positions=positions, layers=frozenset(layers)))
    engine.check_finite(got.rows)
    stacked = torch.stack([got.rows[layer][:, :, 0, :] for layer in layers], dim=1)  # (B, L, H, T)
    return [stacked[b, :, :, off : off + q + 1] for b, (off, q) in enumerate(zip(offsets, queries, strict=True))]


def query_rows_norm(
    loaded: Loaded, enc: Encoded, query: int, layers: Sequence[int]
) -> tuple[torch.Tensor, torch.Tensor, float]:
    """One sequence: (rows, value norms, completeness max diff) for the selected layers.

    rows: (len(layers), head, query + 1) fp32 weights; norms: (len(layers), head, query + 1)
    ||f_h(x_j)|| (``capture.norm``); the completeness check's max |difference| over the layers.
    """
    ids = torch.tensor([enc.ids])  # (1, T)
    request = engine.Request(positions=torch.tensor([[query]]), layers=frozenset(layers), norms=frozenset(layers))
    got = engine.run(loaded.model, ids, torch.ones_like(ids), request)
    engine.check_finite(got.rows)
    rows = torch.stack([got.rows[layer][0, :, 0, : query + 1] for layer in layers])  # (L, H, q+1)
    norms = torch.stack([got.norms[layer][0, :, : query + 1] for layer in layers])  # (L, H, q+1)
    return rows, norms, max(got.completeness[layer] for layer in layers)


def weights_result(
    info: ModelInfo,
    enc: Encoded,
    query: Query,
    rows: torch.Tensor,
    layers: list[int],
    heads: list[int],
    view: WeightsView,
    warnings: list[ResultWarning] | None = None,
    norms: torch.Tensor | None = None,
    completeness: float | None = None,
) -> WeightsResult:
    """Build the result from one sequence's rows (len(layers), all heads, query + 1).

    With ``norms`` ((len(layers), all heads, query + 1) ||f_h(x_j)||), the charts show each
    key's share of ||alpha_ij f_h(x_j)|| instead of the raw weight. ``info`` is the model's
    (``loaded.info``): the rows alone make the result, so a browser that holds them (``attnscope tui``)
    builds it without the model.
    """
    groups = info.num_attention_heads // info.num_key_value_heads  # no model here: the tui builds it from rows
    q = query.index
    raw = rows[:, heads, :]  # (L, Hsel, q+1)
    measured = None if norms is None else raw * norms[:, heads, :]  # alpha ||f||
    if view.by == "segment" and not enc.segments:
        raise AttnscopeError("by_segment", arg="by", other="chat", args="messages")
    keys = weight_keys(enc.tokens, enc.words, enc.segments, q, view.by)
    numbers = weights_numbers(
        as_array(raw), None if measured is None else as_array(measured), keys, q, layers, heads, groups, view
    )
    return WeightsResult(
        model=info,
        text=enc.text,
        chat=enc.chat,
        tokens=enc.tokens,
        words=enc.words,
        query=query,
        layers=list(layers),
        heads=list(heads),
        kv_heads=[h // groups for h in heads],
        weights=raw.tolist(),
        view=view,
        chart=numbers.chart,
        strip=numbers.strip,
        per_head=numbers.per_head,
        warnings=list(warnings or []),
        measure="weight" if measured is None else "norm",
        norms=[] if measured is None else measured.tolist(),
        completeness_max_diff=completeness,
        sink_share=numbers.sink_share,
        hardest=numbers.hardest,
        segments=prompt_segments(enc.segments, len(enc.tokens)),
        template=enc.template,
        learned_sink=(1.0 - raw.sum(dim=-1)).clamp_min(0.0).tolist() if info.sink_logits else [],
    )


def weights(
    loaded: Loaded,
    prompt: str | None,
    *,
    query: QuerySpec = None,
    selection: Selection | None = None,
    chat: ChatSpec | None = None,
    view: WeightsView | None = None,
    measure: Measure = "weight",
) -> WeightsResult:
    """How much the query token mixes in from itself and each earlier token, per layer and head.

    ``prompt``: the text, or with ``chat.messages`` the last user turn (None: no such turn);
    ``query``: see :data:`~attnscope.core.prompt.spec.QuerySpec`; ``selection``: layers and heads
    (None: all); ``measure``: the raw weight, or each key's share of the size of what it adds.
    """
    view = view or WeightsView()
    measure = one_of(measure, get_args(Measure), "measure")
    selection = selection or Selection()
    info = loaded.info
    layers = attention_layers(info, selection.layer_indices(info.num_hidden_layers))
    heads = selection.head_indices(info.num_attention_heads)
    enc = encode_prompt(loaded.tokenizer, prompt, chat)
    check_length(len(enc.ids), anatomy.of(loaded.model).max_positions)
    warnings: list[ResultWarning] = []
    q = pick_query(enc, query, warnings)
    if measure == "norm":
        rows, norms, completeness = query_rows_norm(loaded, enc, q.index, layers)
        return weights_result(info, enc, q, rows, layers, heads, view, warnings, norms, completeness)
    (rows,) = query_rows(loaded, [enc], [q.index], layers)
    return weights_result(info, enc, q, rows, layers, heads, view, warnings)
