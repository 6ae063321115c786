"""The ``explore`` computation: every query row of every layer and head, quantised to bytes.

One forward pass captures the fp32 rows of the stored query positions at every layer
(``engine.run``); each row is rounded to multiples of ``1 / LEVELS`` with the largest
remainder method, so that it still adds up to exactly 1. Up to ``LIMIT`` tokens every
position is stored; a longer prompt stores only the positions asked for with
``--query``/``--pos``. This module does not load models, does not write the page and
does not print.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import torch

from attnscope.capture import anatomy, engine
from attnscope.core.common import every_layer
from attnscope.core.prompt.spec import ChatSpec, QuerySpec, Text
from attnscope.core.prompt.tokens import Encoded, as_text, check_length, encode_prompt, find_span, pick_query
from attnscope.errors import AttnscopeError
from attnscope.model import Loaded
from attnscope.results.ablate import AblateResult
from attnscope.results.common import Metric, ResultWarning
from attnscope.results.explore import ExploreData

LIMIT = 320  # tokens; 24 layers x 14 heads x 320 x 321 / 2 bytes = 17.3 MB before compression
LEVELS = 255


def quantise(rows: torch.Tensor, levels: int = LEVELS) -> torch.Tensor:
    """rows (..., K) of weights adding up to 1 -> uint8 (..., K) adding up to exactly ``levels``.

    Largest remainder: floor every ``w * levels``, then give the missing units to the
    entries with the largest fractional parts. Each entry ends within 1 of ``w * levels``.
    """
    scaled = rows.float() * levels
    base = scaled.floor()
    frac = scaled - base
    missing = (levels - base.sum(dim=-1, keepdim=True)).round().clamp(min=0)  # (..., 1)
    order = frac.argsort(dim=-1, descending=True)
    rank = torch.empty_like(order)
    rank.scatter_(-1, order, torch.arange(rows.shape[-1]).expand_as(order))
    out = base + (rank < missing).double()
    return out.clamp(0, levels).to(torch.uint8)


def metric_text(metric: Metric) -> str:
    """The metric as the page names it: log P(' 사'), or logit(' 사') - logit(' 포')."""
    if metric.foil is None:
        return f"log P({metric.target!r})"
    return f"logit({metric.target!r}) - logit({metric.foil!r})"


def pick_positions(enc: Encoded, queries: Sequence[QuerySpec], warnings: list[ResultWarning]) -> list[int]:
    """The query positions asked for, in order (None stands for the last token)."""
    return [pick_query(enc, query, warnings).index for query in queries]


def explore(
    loaded: Loaded,
    prompt: str,
    *,
    queries: Sequence[QuerySpec] = (),
    key: str | Text | None = None,
    chat: ChatSpec | None = None,
    limit: int | None = None,
) -> ExploreData:
    """The data of one explorer page: every query row of every layer and head (for a prompt of up to
    ``limit`` tokens, default LIMIT; beyond that only the ``queries``' rows). The first of
    ``queries`` opens the page (default: the last token); ``key`` is the text the layers x heads
    grid shows first. :func:`with_effects` adds each head's exact effect on an answer, from
    ``ablate`` of the same prompt. ``render.explore.page`` turns it into the HTML."""
    limit = LIMIT if limit is None else limit
    info = loaded.info
    enc = encode_prompt(loaded.tokenizer, prompt, chat)
    n = len(enc.ids)
    check_length(n, anatomy.of(loaded.model).max_positions)
    warnings: list[ResultWarning] = []
    asked = pick_positions(enc, queries, warnings)
    full = n <= limit
    if not full and not asked:
        raise AttnscopeError("explore_long", n=n, limit=limit, arg="query", other="pos")
    stored = list(range(n)) if full else sorted(set(asked))
    query = asked[0] if asked else n - 1
    key_text = None if key is None else as_text(key)
    key_span = [] if key_text is None else find_span(enc, key_text.text, key_text.occurrence, warnings, "key")
    if key_text is not None and key_span[-1] > query:
        raise AttnscopeError("key_after_query_pos", arg="key", key=repr(key_text.text), pos=query)
    layers = every_layer(info, "explore")
    end = max(stored) + 1
    ids = torch.tensor([enc.ids[:end]])  # (1, end): later tokens cannot change causal rows before `end`
    request = engine.Request(positions=torch.tensor([stored]), layers=frozenset(layers))
    got = engine.run(loaded.model, ids, torch.ones_like(ids), request)
    engine.check_finite(got.rows)
    keep = torch.arange(end)[None, :] <= torch.tensor(stored)[:, None]  # (P, end): key_pos <= query_pos
    packed = []
    for layer in layers:  # one layer at a time keeps the sort's memory small
        rows = got.rows.pop(layer)[0]  # (H, P, end); the causal mask left 0 after each query
        packed.append(quantise(rows)[:, keep])  # (H, sum(p + 1)): each head's stored rows in turn
    weights = torch.stack(packed)  # (L, H, sum(p + 1))
    return ExploreData(
        model=info,
        text=enc.text,
        chat=enc.chat,
        tokens=enc.tokens,
        words=enc.words,
        positions=stored,
        full=full,
        limit=limit,
        query=query,
        key=key_span,
        levels=LEVELS,
        weights=weights.contiguous().numpy().tobytes(),
        warnings=warnings,
    )


def with_effects(data: ExploreData, ablated: AblateResult) -> ExploreData:
    """The page's data with each head's exact effect on an answer: ``ablated`` is ``ablate`` of the
    same prompt over every layer and head (``ablate(loaded, prompt, answer=..., chat=...)``)."""
    if [t.id for t in ablated.tokens] != [t.id for t in data.tokens]:
        raise AttnscopeError("explore_other_tokens")
    every = (list(range(data.model.num_hidden_layers)), list(range(data.model.num_attention_heads)))
    if (ablated.layers, ablated.heads) != every:
        raise AttnscopeError("explore_every_head")
    return replace(data, effects=ablated.effects, metric=metric_text(ablated.metric))
