"""The ``heads`` computation: rank every (layer, head) by how much a query attends to a key span.

One forward pass captures, for every layer, the fp32 rows of the query span's tokens
(``engine.run``; no eager attention, no L x H x T x T). A multi-token query is reduced
by its last token or by the mean of its tokens' rows; the score of a head is that row
summed over the key span's tokens. This module does not load models and does not print.
"""

from __future__ import annotations

from typing import get_args

import torch

from attnscope.capture import anatomy, engine
from attnscope.core.common import as_array, every_layer
from attnscope.core.prompt.params import HEADS_PARAMS, validate
from attnscope.core.prompt.spec import ChatSpec, Text, one_of
from attnscope.core.prompt.tokens import Encoded, as_text, check_length, encode_prompt, find_span
from attnscope.errors import AttnscopeError
from attnscope.model import Loaded
from attnscope.results.common import KeySpan, Query, ResultWarning
from attnscope.results.derive import F32, drop_sink, heads_numbers, mean, shares
from attnscope.results.heads import HeadsResult, QueryAgg
from attnscope.results.weights import Measure

QUERY_AGGS: tuple[QueryAgg, ...] = get_args(QueryAgg)


def _describe(enc: Encoded, span: list[int]) -> str:
    labels = " + ".join(enc.tokens[i].label for i in span)
    where = f"token {span[0]}" if len(span) == 1 else f"tokens {span[0]}-{span[-1]}"
    return f"{where}: {labels}"


def head_rows_measured(
    loaded: Loaded, enc: Encoded, span: list[int], measure: str
) -> tuple[torch.Tensor, F32 | None, float | None]:
    """(rows, shown, completeness): rows (L, H, P, K) weights; with measure norm, shown is each key's
    share of ||alpha_ij f_h(x_j)|| (``capture.norm``) and completeness the check's max |difference|."""
    ids = torch.tensor([enc.ids])  # (1, T)
    mask = torch.ones_like(ids)
    positions = torch.tensor([span])  # (1, P)
    layers = frozenset(every_layer(loaded.info, "heads"))
    norms = layers if measure == "norm" else frozenset()
    got = engine.run(loaded.model, ids, mask, engine.Request(positions=positions, layers=layers, norms=norms))
    engine.check_finite(got.rows)
    n_keys = span[-1] + 1  # causal: nothing after the last query token
    rows = torch.stack([got.rows[layer][0] for layer in sorted(layers)])[..., :n_keys]  # (L, H, P, K)
    if measure != "norm":
        return rows, None, None
    value = torch.stack([got.norms[layer][0] for layer in sorted(layers)])[..., None, :n_keys]  # (L, H, 1, K)
    return rows, shares(as_array(rows * value)), max(got.completeness.values())


def query_row(rows: F32, query_agg: QueryAgg, no_sink: bool) -> F32:
    """rows (L, H, P, K) -> each head's one query row (L, H, K): the last token's, or the mean of the span's."""
    shown = drop_sink(rows) if no_sink else rows
    return shown[:, :, -1, :] if query_agg == "last" else mean(shown, 2)


def heads(
    loaded: Loaded,
    prompt: str,
    *,
    query: str | Text,
    key: str | Text,
    query_agg: QueryAgg = "last",
    top: int = 10,
    no_sink: bool = False,
    chat: ChatSpec | None = None,
    measure: Measure = "weight",
) -> HeadsResult:
    """Every layer and head ranked by the weight the query puts on the key (summed over the key's
    tokens). ``query`` and ``key`` are texts in the prompt; ``measure``: weight or norm."""
    query_agg = one_of(query_agg, QUERY_AGGS, "query_agg")
    measure = one_of(measure, get_args(Measure), "measure")
    q_text, k_text = as_text(query), as_text(key)
    query, key = q_text.text, k_text.text
    validate(HEADS_PARAMS, top=top)
    info = loaded.info
    enc = encode_prompt(loaded.tokenizer, prompt, chat)
    check_length(len(enc.ids), anatomy.of(loaded.model).max_positions)
    warnings: list[ResultWarning] = []
    q_span = find_span(enc, query, q_text.occurrence, warnings, "query")
    k_span = find_span(enc, key, k_text.occurrence, warnings, "key")
    if k_span[-1] > q_span[-1]:
        raise AttnscopeError(
            "key_after_query",
            arg="key",
            key=repr(key),
            key_where=_describe(enc, k_span),
            query=repr(query),
            query_where=_describe(enc, q_span),
        )
    if no_sink and q_span[0] == 0:
        raise AttnscopeError("no_sink_span", arg="no_sink")
    if no_sink and k_span == [0]:
        raise AttnscopeError("no_sink_key", arg="key", other="no_sink", text=repr(key))
    if no_sink and 0 in k_span:
        warnings.append(ResultWarning(code="sink_key_excluded"))
    if info.mixes_windows(q_span[-1] + 1):
        first = info.window_first(info.sliding_layers()[0], q_span[-1])
        warnings.append(ResultWarning(code="mixed_windows", value=info.sliding_window, count=first))
    rows, shown, completeness = head_rows_measured(loaded, enc, q_span, measure)  # (L, H, P, K)
    agg = query_row(as_array(rows) if shown is None else shown, query_agg, no_sink)
    ranking, top_heads = heads_numbers(agg, k_span, anatomy.of(loaded.model).groups, top)
    return HeadsResult(
        model=info,
        text=enc.text,
        chat=enc.chat,
        tokens=enc.tokens,
        words=enc.words,
        query=Query(index=q_span[-1], text=query, span=q_span),
        key=KeySpan(text=key, span=k_span),
        query_agg=query_agg,
        no_sink=no_sink,
        ranking=ranking,
        top=top_heads,
        warnings=warnings,
        measure=measure,
        completeness_max_diff=completeness,
    )
