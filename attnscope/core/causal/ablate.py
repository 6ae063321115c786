"""The ``ablate`` computation: the exact change in the metric when each selected head's output
is removed, and, with ``approx``, a first-order screen of every head checked exactly on the top.

A head is removed at the input of ``o_proj``: its head_dim slice is set to zero (``zero``) or
to its mean over positions (``mean``: this prompt's positions, or every position of the
``mean_over`` prompts), at every query position or at ``positions`` only. Each removal runs
from the kept residual at the input of the head's own layer (``core.causal.stack.Stack``), many
removals per sweep. This module does not load models and does not print.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import get_args

import torch

from attnscope.capture import anatomy, hooks
from attnscope.core.causal.stack import Row, Stack, frozen, measure, set_head, sweeps
from attnscope.core.prompt.params import check_ablate
from attnscope.core.prompt.spec import ChatSpec, Indices, Prompts, Selection, Text, one_of
from attnscope.core.prompt.targets import Answer, check_mean, resolve_metric
from attnscope.core.prompt.targets import positions as resolve_positions
from attnscope.core.prompt.tokens import Encoded, as_text, check_length, encode, encode_prompt, find_span
from attnscope.errors import AttnscopeError
from attnscope.model import Loaded
from attnscope.results.ablate import AblateResult, CheckedHead, Mode
from attnscope.results.common import KeySpan, Metric, ResultWarning
from attnscope.results.derive import ablate_numbers

MODES: tuple[Mode, ...] = get_args(Mode)


def head_means(loaded: Loaded, stack: Stack, mean_over: Sequence[str] | None) -> tuple[list[torch.Tensor], int]:
    """Per layer, (heads * head_dim,): the mean of o_proj's input over this prompt's positions,
    or over every position of the ``mean_over`` prompts; and how many positions that was."""
    if mean_over is None:
        return [x[0].mean(dim=0) for x in stack.o_input], stack.length
    sums = [torch.zeros_like(x[0, 0]) for x in stack.o_input]
    count = 0
    for text in mean_over:
        other = Stack(loaded.model, encode(loaded.tokenizer, text).ids, what="ablate")
        for layer, x in enumerate(other.o_input):
            sums[layer] += x[0].sum(dim=0)
        count += other.length
    return [s / count for s in sums], count


def _replacement(stack: Stack, means: list[torch.Tensor] | None, layer: int, head: int) -> torch.Tensor:
    """(T, head_dim): what the head's slice becomes."""
    d = stack.head_dim
    if means is None:
        return torch.zeros(stack.length, d, device=stack.device, dtype=stack.o_input[layer].dtype)
    return means[layer].view(-1, d)[head][None, :].expand(stack.length, d)


def exact_effects(
    stack: Stack,
    metric: Metric,
    pairs: Sequence[tuple[int, int]],
    means: list[torch.Tensor] | None,
    positions: Sequence[int] | None,
    baseline: float,
    batch: int = 48,
) -> dict[tuple[int, int], float]:
    """metric(ablated) - baseline for each (layer, head), each run from its layer's kept residual."""
    rows = [
        Row(
            start=layer,
            hidden=stack.residual[layer][0],
            edits={layer: [("o", set_head(head, _replacement(stack, means, layer, head), positions))]},
        )
        for layer, head in pairs
    ]
    values = sweeps(rows, metric, stack, batch)
    return {pair: v - baseline for pair, v in zip(pairs, values, strict=True)}


def estimated_effects(
    stack: Stack,
    metric: Metric,
    layers: Sequence[int],
    heads: Sequence[int],
    means: list[torch.Tensor] | None,
    positions: Sequence[int] | None,
) -> list[list[float]]:
    """First-order estimates from one forward and one backward (attribution patching): for each
    head, the gradient of the metric at o_proj's input dotted with the change the ablation makes."""
    with torch.enable_grad(), frozen(stack.model), hooks.Run(stack.anatomy) as run:
        run.grad("z.*")  # o_proj's input per head, kept in the graph
        hidden = stack.residual[0].detach().clone().requires_grad_(True)
        for index in range(stack.n_layers):
            hidden = stack.layer(index, hidden, None)
        value = measure(stack.logits(hidden), metric)[0]
        value.backward()  # type: ignore[no-untyped-call]
    where = list(range(stack.length)) if positions is None else list(positions)
    out: list[list[float]] = []
    for layer in layers:
        g = run.gradient(f"z.{layer}")[0]  # (T, H, D)
        now = run[f"z.{layer}"][0]  # (T, H, D)
        new = torch.zeros_like(now) if means is None else means[layer].view(1, -1, stack.head_dim).expand_as(now)
        delta = (g * (new - now))[where].sum(dim=(0, 2))  # (H,)
        out.append([float(delta[h]) for h in heads])
    return out


def _attention(
    stack: Stack, layers: Sequence[int], heads: Sequence[int], key: KeySpan | None
) -> tuple[list[list[float]], list[list[int]] | None]:
    """The last position's weight on the key, per head; without a key, its top key (position 0
    left out when there is another) and that key's weight."""
    weights: list[list[float]] = []
    tops: list[list[int]] = []
    for layer in layers:
        rows = stack.rows[layer]  # (H, T)
        if key is not None:
            weights.append([float(rows[h, key.span].sum()) for h in heads])
            continue
        first = 1 if rows.shape[-1] > 1 else 0
        best = rows[:, first:].argmax(dim=-1) + first  # (H,)
        tops.append([int(best[h]) for h in heads])
        weights.append([float(rows[h, int(best[h])]) for h in heads])
    return weights, (None if key is not None else tops)


def _check_settings(mode: Mode, check: int, batch_size: int, mean_over: Prompts | None) -> None:
    """The settings that need no model (``core.prompt.params.ABLATE_PARAMS``), and prompts to average over."""
    check_ablate(mode, check, batch_size, mean_over=mean_over is not None)
    if mean_over is not None and not mean_over.texts:
        raise AttnscopeError("causal_mean_over_empty", arg="mean_over", name=mean_over.source)


def _screened(
    stack: Stack,
    metric: Metric,
    layers: list[int],
    heads: list[int],
    means: list[torch.Tensor] | None,
    where: list[int] | None,
    baseline: float,
    check: int,
    batch: int,
) -> tuple[list[list[float]], list[CheckedHead]]:
    """First-order estimates for every head, and the ``check`` heads they rank highest removed exactly."""
    effects = estimated_effects(stack, metric, layers, heads, means, where)
    flat = sorted(
        ((effects[i][j], lay, h) for i, lay in enumerate(layers) for j, h in enumerate(heads)),
        key=lambda s: (s[0], s[1], s[2]),
    )
    top = [(lay, h) for _, lay, h in flat[:check]]
    exact = exact_effects(stack, metric, top, means, where, baseline, batch)
    est = {(lay, h): v for v, lay, h in flat}
    return effects, [CheckedHead(layer=lay, head=h, estimated=est[(lay, h)], exact=exact[(lay, h)]) for lay, h in top]


def ablate(
    loaded: Loaded,
    prompt: str,
    *,
    answer: Answer,
    selection: Selection | None = None,
    mode: Mode = "zero",
    positions: Indices | None = None,
    key: str | Text | None = None,
    mean_over: Prompts | Sequence[str] | None = None,
    approx: bool = False,
    check: int = 10,
    batch_size: int = 48,
    chat: ChatSpec | None = None,
) -> AblateResult:
    """Each selected head's output removed in turn (``mode`` zero or mean, at ``positions`` or
    every position): the exact change in log P(target), or in logit(target) - logit(foil).
    ``approx``: first-order estimates for every head, the top ``check`` of them ablated exactly.
    ``key``: a text in the prompt; each head's weight on it is reported beside its effect.
    ``mean_over``: other prompts whose positions give the means (a :class:`Prompts` names where
    they came from, which the result records)."""
    mode = one_of(mode, MODES, "mode")
    others = mean_over if isinstance(mean_over, Prompts) or mean_over is None else Prompts(tuple(mean_over))
    _check_settings(mode, check, batch_size, others)
    info = loaded.info
    metric = resolve_metric(loaded.tokenizer, answer)
    enc: Encoded = encode_prompt(loaded.tokenizer, prompt, chat)
    check_length(len(enc.ids), anatomy.of(loaded.model).max_positions)
    check_mean(mode, len(enc.ids), others)
    sel = selection or Selection()
    layers = sel.layer_indices(info.num_hidden_layers)
    heads = sel.head_indices(info.num_attention_heads)
    at = resolve_positions(positions, len(enc.ids))
    warnings: list[ResultWarning] = []
    key_span = None
    if key is not None:
        k = as_text(key)
        key_span = KeySpan(text=k.text, span=find_span(enc, k.text, k.occurrence, warnings, "key"))

    stack = Stack(loaded.model, enc.ids, rows=True, what="ablate")
    baseline = stack.baseline(metric)
    means, mean_tokens = (
        head_means(loaded, stack, None if others is None else others.texts) if mode == "mean" else (None, None)
    )
    where = None if len(at) == len(enc.ids) else at
    if approx:
        effects, checked = _screened(stack, metric, layers, heads, means, where, baseline, check, batch_size)
    else:
        pairs = [(lay, h) for lay in layers for h in heads]
        exact = exact_effects(stack, metric, pairs, means, where, baseline, batch_size)
        effects, checked = [[exact[(lay, h)] for h in heads] for lay in layers], []

    attention, top_key = _attention(stack, layers, heads, key_span)
    groups = stack.anatomy.groups
    numbers = ablate_numbers(effects, attention, layers, heads, groups, top_key, checked)
    return AblateResult(
        model=info,
        text=enc.text,
        chat=enc.chat,
        tokens=enc.tokens,
        words=enc.words,
        metric=metric,
        baseline=baseline,
        mode=mode,
        positions=at,
        layers=layers,
        heads=heads,
        effects=effects,
        attention=attention,
        key=key_span,
        top_key=top_key,
        mean_over=None if others is None else others.source,
        mean_tokens=mean_tokens,
        estimated=approx,
        checked=checked,
        ranking=numbers.ranking,
        rank_correlation=numbers.rank_correlation,
        check_correlation=numbers.check_correlation,
        warnings=warnings,
    )
