"""The ``weights`` computation: capture query rows and build the note's chart from them.

``query_rows`` runs one padded batch and returns, per sequence, the fp32 rows
(layer, head, key_pos) of one query position, for the selected layers only; layers
after the last one selected never run and no logits are computed. ``weights_result``
wraps that into a :class:`WeightsResult` with the aggregate chart, the keys x layers
strip and the per-head charts. It does not load models and does not print.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import get_args

import torch

from attnscope.capture import engine
from attnscope.core.common import pad_batch, pad_id
from attnscope.core.segments import prompt_segments
from attnscope.core.spec import ChatSpec, QuerySpec, Selection, one_of
from attnscope.core.tokens import Encoded, check_length, encode_prompt, pick_query
from attnscope.errors import AttnscopeError
from attnscope.model import Loaded
from attnscope.results.common import Query, ResultWarning
from attnscope.results.segments import Segment
from attnscope.results.weights import Bar, By, Chart, Hardest, Measure, Strip, WeightsResult, WeightsView


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


def norm_shares(rows: torch.Tensor, norms: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(alpha ||f||, its share over keys): rows and norms (..., K) -> both (..., K)."""
    measured = rows * norms
    return measured, measured / measured.sum(dim=-1, keepdim=True).clamp_min(1e-30)


def sink_share(shown: torch.Tensor, agg: str) -> float | None:
    """Position 0's aggregate share when it is the largest of all tokens: shown (L, H, K) token space."""
    if shown.shape[-1] < 2:
        return None
    flat = shown.reshape(-1, shown.shape[-1])  # (L*H, K)
    combined = flat.mean(dim=0) if agg == "mean" else flat.max(dim=0).values
    return float(combined[0]) if int(combined.argmax()) == 0 else None


HARDEST_KEPT = 20


def hardest(
    shown: torch.Tensor, keys: list[Key], q: int, layers: list[int], heads: list[int], groups: int
) -> list[Hardest]:
    """For each key other than position 0 alone and the query's own key: the selected head that puts
    the most on it. shown: (L, Hsel, q+1) token space. Weight descending, at most HARDEST_KEPT."""
    out = []
    for label, members, _, segment in keys:
        counted = [i for i in members if i != 0]
        if not counted or q in members:
            continue
        on_key = shown[..., counted].sum(dim=-1)  # (L, Hsel)
        best = int(on_key.argmax())
        li, hi = divmod(best, on_key.shape[1])
        out.append(
            Hardest(
                label=label,
                tokens=counted,
                layer=layers[li],
                head=heads[hi],
                kv_head=heads[hi] // groups,
                weight=float(on_key[li, hi]),
                segment=segment,
            )
        )
    out.sort(key=lambda h: (-h.weight, h.tokens[0]))
    return out[:HARDEST_KEPT]


def drop_sink(rows: torch.Tensor) -> torch.Tensor:
    """rows (..., K): position 0 set to 0 and each row renormalised over the rest."""
    if rows.shape[-1] < 2:
        raise AttnscopeError(
            "no_sink: the query is position 0, so nothing is left once position 0 is excluded", option="no_sink"
        )
    out = rows.clone()
    out[..., 0] = 0.0
    return out / out.sum(dim=-1, keepdim=True).clamp_min(1e-30)


# (label, token indices, partial: a word or segment cut at the query, segment index with --by segment)
Key = tuple[str, list[int], bool, int | None]


def segment_label(segment: Segment) -> str:
    """A segment's label in JSON: its kind, and its turn for a user or assistant turn (``user 2``)."""
    return segment.kind if segment.turn is None or segment.kind == "system" else f"{segment.kind} {segment.turn}"


def group_keys(rows: torch.Tensor, enc: Encoded, q: int, by: By) -> tuple[torch.Tensor, list[Key]]:
    """Sum rows (..., q+1) over keys; returns (..., n_keys) and (label, token indices, partial, segment) per key.

    ``by`` segment needs a chat prompt: each segment's tokens up to the query form one key (the
    template's tokens are one key wherever they sit), in the order of the segments.
    """
    if by == "token":
        return rows, [(enc.tokens[i].label, [i], False, None) for i in range(q + 1)]
    keys: list[Key] = []
    if by == "segment":
        if not enc.segments:
            raise AttnscopeError(
                "by='segment' needs a chat prompt (chat=True or messages)",
                cli="--by segment needs --chat or --messages: segments are the parts of a chat template",
            )
        for s in enc.segments:
            members = [i for i in s.tokens if i <= q]
            if members:
                keys.append((segment_label(s), members, len(members) < len(s.tokens), s.index))
    else:
        for w in enc.words:
            members = [i for i in w.tokens if i <= q]
            if members:
                keys.append((w.text, members, len(members) < len(w.tokens), None))
    grouped = torch.stack([rows[..., m].sum(dim=-1) for _, m, _, _ in keys], dim=-1)
    return grouped, keys


def _chart(values: torch.Tensor, keys: list[Key], q: int, no_sink: bool, **where: int | None) -> Chart:
    bars = [
        Bar(
            label=label,
            tokens=members,
            weight=float(v),
            is_query=q in members,
            excluded=no_sink and 0 in members and len(members) == 1,
            partial=partial,
            segment=segment,
        )
        for (label, members, partial, segment), v in zip(keys, values.tolist(), strict=True)
    ]
    return Chart(bars=bars, total=float(values.sum()), **where)


def weights_result(
    loaded: Loaded,
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
    key's share of ||alpha_ij f_h(x_j)|| instead of the raw weight.
    """
    info = loaded.info
    groups = info.num_attention_heads // info.num_key_value_heads
    q = query.index
    raw = rows[:, heads, :]  # (L, Hsel, q+1)
    measured = None
    base = raw
    if norms is not None:
        measured, base = norm_shares(raw, norms[:, heads, :])
    shown = drop_sink(base) if view.no_sink else base
    grouped, keys = group_keys(shown, enc, q, view.by)  # (L, Hsel, K)
    flat = grouped.reshape(-1, grouped.shape[-1])  # (L*Hsel, K)
    combined = flat.mean(dim=0) if view.agg == "mean" else flat.max(dim=0).values
    chart = _chart(combined, keys, q, view.no_sink)
    strip_vals = grouped.mean(dim=1).T  # (K, L): mean over selected heads
    strip = Strip(layers=list(layers), keys=[k for k, _, _, _ in keys], values=strip_vals.tolist())
    per_head = []
    if view.per_head:
        for li, layer in enumerate(layers):
            for hi, head in enumerate(heads):
                per_head.append(
                    _chart(grouped[li, hi], keys, q, view.no_sink, layer=layer, head=head, kv_head=head // groups)
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
        chart=chart,
        strip=strip,
        per_head=per_head,
        warnings=list(warnings or []),
        measure="weight" if measured is None else "norm",
        norms=[] if measured is None else measured.tolist(),
        completeness_max_diff=completeness,
        sink_share=None if view.no_sink else sink_share(shown, view.agg),
        hardest=hardest(shown, keys, q, list(layers), list(heads), groups),
        segments=prompt_segments(enc.segments, len(enc.tokens)),
        template=enc.template,
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
    ``query``: see :data:`~attnscope.core.spec.QuerySpec`; ``selection``: layers and heads
    (None: all); ``measure``: the raw weight, or each key's share of the size of what it adds.
    """
    view = view or WeightsView()
    measure = one_of(measure, get_args(Measure), "measure")
    selection = selection or Selection()
    info = loaded.info
    layers = selection.layer_indices(info.num_hidden_layers)
    heads = selection.head_indices(info.num_attention_heads)
    enc = encode_prompt(loaded.tokenizer, prompt, chat)
    check_length(len(enc.ids), getattr(loaded.model.config, "max_position_embeddings", None))
    warnings: list[ResultWarning] = []
    q = pick_query(enc, query, warnings)
    if measure == "norm":
        rows, norms, completeness = query_rows_norm(loaded, enc, q.index, layers)
        return weights_result(loaded, enc, q, rows, layers, heads, view, warnings, norms, completeness)
    (rows,) = query_rows(loaded, [enc], [q.index], layers)
    return weights_result(loaded, enc, q, rows, layers, heads, view, warnings)
