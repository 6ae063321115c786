"""The ``knockout`` computation: block the attention edges from query positions to key
positions in a window of layers, and measure the metric's change (as in Geva et al. 2023).

The edges are removed from the mask the model's own sdpa call receives: each layer of a window
gets the model's mask with the blocked (query, key) cells forbidden, for every head or for the
selected heads only. Every window is one row of a sweep, which joins at the window's first
layer from the kept residual (``core.causal.stack.Stack``). This module does not load models and
does not print.
"""

from __future__ import annotations

from attnscope.capture import anatomy
from attnscope.core.causal.stack import Row, Stack, cut, sweeps
from attnscope.core.prompt.params import check_knockout
from attnscope.core.prompt.spec import ChatSpec, QuerySpec, Selection, Text
from attnscope.core.prompt.targets import Answer, check_window, resolve_metric
from attnscope.core.prompt.tokens import as_text, check_length, encode_prompt, find_span, pick_query
from attnscope.errors import AttnscopeError
from attnscope.model import Loaded
from attnscope.results.common import KeySpan, ModelInfo, ResultWarning
from attnscope.results.derive import knockout_effects
from attnscope.results.knockout import KnockoutResult, Window


def windows_of(n_layers: int, window: int) -> list[list[int]]:
    """For each layer l, the window of ``window`` layers centred on it, cut at the model's ends."""
    before, after = (window - 1) // 2, window // 2
    return [list(range(max(0, lay - before), min(n_layers, lay + after + 1))) for lay in range(n_layers)]


def check_left(info: ModelInfo, layers: list[int], queries: list[int], key: KeySpan) -> None:
    """Refuse a cut that blocks every key a query position reads in one of ``layers``: all of
    0..p, or in a sliding layer the last ``sliding_window`` of them. Its softmax would run over no
    key at all (the knocked-out row is undefined, not a smaller weight)."""
    blocked = set(key.span)
    for layer in layers:
        for pos in queries:
            first = info.window_first(layer, pos)
            if not all(j in blocked for j in range(first, pos + 1)):
                continue
            keys = str(pos) if first == pos else f"{first}-{pos}"
            if first > 0:  # the window, not the prompt's start, is what leaves so few keys
                raise AttnscopeError(
                    "causal_nothing_left_window",
                    arg="key",
                    key=repr(key.text),
                    pos=pos,
                    layer=layer,
                    keys=keys,
                    window=info.sliding_window,
                )
            raise AttnscopeError("causal_nothing_left", arg="key", key=repr(key.text), pos=pos, layer=layer, keys=keys)


def knockout(
    loaded: Loaded,
    prompt: str,
    *,
    key: str | Text,
    query: QuerySpec = None,
    answer: Answer,
    selection: Selection | None = None,
    window: int | None = None,
    batch_size: int = 48,
    chat: ChatSpec | None = None,
) -> KnockoutResult:
    """Block the edges from every token of ``query`` (a text, a position, or None for the last
    token) to every token of ``key``, in the query heads of ``selection``. With
    ``selection.layers`` the edges are blocked in those layers at once; otherwise in each
    window of ``window`` layers (default 1) centred on each layer."""
    info = loaded.info
    n_layers = info.num_hidden_layers
    check_window(window, n_layers)
    sel = selection or Selection()
    check_knockout(batch_size, layers=sel.layers is not None, window=window is not None)
    metric = resolve_metric(loaded.tokenizer, answer)
    enc = encode_prompt(loaded.tokenizer, prompt, chat)
    check_length(len(enc.ids), anatomy.of(loaded.model).max_positions)
    warnings: list[ResultWarning] = []
    q = pick_query(enc, query, warnings)
    q_span = q.span if isinstance(query, (str, Text)) else [q.index]
    k_text = as_text(key)
    k = KeySpan(text=k_text.text, span=find_span(enc, k_text.text, k_text.occurrence, warnings, "key"))
    if k.span[0] > q_span[-1]:
        raise AttnscopeError(
            "causal_key_after",
            arg="key",
            key=repr(k.text),
            kspan=f"{k.span[0]}-{k.span[-1]}",
            query=repr(q.text),
            qspan=f"{q_span[0]}-{q_span[-1]}",
        )
    heads = sel.head_indices(info.num_attention_heads)
    if sel.layers is not None:
        rows_layers, size = [sel.layer_indices(n_layers)], 0
    else:
        size = 1 if window is None else window
        rows_layers = windows_of(n_layers, size)

    check_left(info, sorted({layer for layers in rows_layers for layer in layers}), q_span, k)

    stack = Stack(loaded.model, enc.ids, what="knockout")
    baseline = stack.baseline(metric)
    edges = cut(stack, q_span, k.span, heads)
    rows = [
        Row(start=layers[0], hidden=stack.residual[layers[0]][0], cuts={layer: edges for layer in layers})
        for layers in rows_layers
    ]
    metrics = sweeps(rows, metric, stack, batch_size)
    effects = knockout_effects(baseline, metrics)
    return KnockoutResult(
        model=info,
        text=enc.text,
        chat=enc.chat,
        tokens=enc.tokens,
        words=enc.words,
        metric=metric,
        baseline=baseline,
        query=KeySpan(text=q.text, span=q_span),
        key=k,
        heads=heads,
        window=size,
        windows=[
            Window(layers=lay, metric=m, effect=e) for lay, m, e in zip(rows_layers, metrics, effects, strict=True)
        ],
        warnings=warnings,
    )
