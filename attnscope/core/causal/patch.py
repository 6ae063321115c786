"""The ``patch`` computation: activation patching between a clean and a corrupt prompt.

Both prompts run once (``core.causal.stack.Stack``). ``denoise`` patches activations of the clean
run into the corrupt run (does this piece suffice to bring the answer back?), ``noise``
patches the corrupt run's into the clean run (is this piece needed?). Sites: a query head's
output (its slice of o_proj's input), the residual stream at one position at the input of a
layer, or a KV head's keys or values (its slice of k_proj's or v_proj's output, which every
query head of its group reads). Each patched run joins its sweep at the layer patched.

Positions are paired one to one. With ``align`` two prompts of different lengths are paired
from the end: the last token with the last token, and so on back; the longer prompt's first
tokens have no partner and are never patched. This module does not load models and does
not print.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from attnscope.capture import anatomy
from attnscope.core.causal.stack import Row, Stack, set_head, sweeps
from attnscope.core.prompt.params import PATCH_PARAMS, validate
from attnscope.core.prompt.spec import Selection, one_of
from attnscope.core.prompt.targets import Answer, check_lengths, resolve_metric
from attnscope.core.prompt.tokens import check_length, encode
from attnscope.errors import AttnscopeError
from attnscope.model import Loaded
from attnscope.results.common import Metric
from attnscope.results.derive import recovery
from attnscope.results.patch import SITES, Direction, PatchResult, Site

_MODULE = {"head": "o", "k": "k", "v": "v"}


def _heads(
    into: Stack,
    donor: Stack,
    metric: Metric,
    layers: Sequence[int],
    site: Site,
    pairs: list[tuple[int, int]],
    batch: int,
) -> list[list[float]]:
    """The metric with each (layer, head) patched: a query head at o_proj's input, or a KV head
    at k_proj's or v_proj's output; ``pairs`` are the (into, donor) positions."""
    kept = {"head": donor.o_input, "k": donor.k_out, "v": donor.v_out}[site]
    count = into.n_heads if site == "head" else into.n_kv
    mine = [p for p, _ in pairs]
    theirs = [q for _, q in pairs]
    rows: list[Row] = []
    for layer in layers:
        source = into.heads_view(kept[layer])[0]  # (T_donor, n, D)
        for h in range(count):
            values = into.heads_view(_own(into, site, layer))[0, :, h].clone()  # (T, D)
            values[mine] = source[theirs, h]
            edit = set_head(h, values, None if len(mine) == into.length else mine)
            rows.append(Row(start=layer, hidden=into.residual[layer][0], edits={layer: [(_MODULE[site], edit)]}))
    flat = sweeps(rows, metric, into, batch)
    return [flat[i * count : (i + 1) * count] for i in range(len(layers))]


def _own(stack: Stack, site: Site, layer: int) -> torch.Tensor:
    return {"head": stack.o_input, "k": stack.k_out, "v": stack.v_out}[site][layer]


def _residual(
    into: Stack, donor: Stack, metric: Metric, layers: Sequence[int], pairs: list[tuple[int, int]], batch: int
) -> list[list[float]]:
    """The metric with the residual stream at one position of a layer's input patched."""
    rows: list[Row] = []
    for layer in layers:
        for p, q in pairs:
            hidden = into.residual[layer][0].clone()
            hidden[p] = donor.residual[layer][0, q]
            rows.append(Row(start=layer, hidden=hidden))
    flat = sweeps(rows, metric, into, batch)
    n = len(pairs)
    return [flat[i * n : (i + 1) * n] for i in range(len(layers))]


def patch(
    loaded: Loaded,
    clean: str,
    corrupt: str,
    *,
    answer: Answer,
    direction: Direction = "denoise",
    sites: Sequence[Site] = ("head", "resid"),
    selection: Selection | None = None,
    align: bool = False,
    batch_size: int = 48,
) -> PatchResult:
    """Patch each head's output, K/V head or residual position (``sites``) of the selected
    layers from one run into the other; the metric of each patched run and its normalised
    recovery (patched - corrupt) / (clean - corrupt)."""
    validate(PATCH_PARAMS, direction=direction, batch_size=batch_size)
    wanted = [one_of(s, SITES, "site") for s in sites]
    if not wanted:
        raise AttnscopeError("sites_empty")
    info = loaded.info
    metric = resolve_metric(loaded.tokenizer, answer)
    enc_clean = encode(loaded.tokenizer, clean)
    enc_corrupt = encode(loaded.tokenizer, corrupt)
    check_lengths(enc_clean.ids, enc_corrupt.ids, align)
    max_positions = anatomy.of(loaded.model).max_positions
    check_length(max(len(enc_clean.ids), len(enc_corrupt.ids)), max_positions)
    layers = (selection or Selection()).layer_indices(info.num_hidden_layers)

    clean_stack = Stack(loaded.model, enc_clean.ids, what="patch")
    corrupt_stack = Stack(loaded.model, enc_corrupt.ids, what="patch")
    clean_value, corrupt_value = clean_stack.baseline(metric), corrupt_stack.baseline(metric)
    if clean_value == corrupt_value:
        raise AttnscopeError("causal_same_metric", value=f"{clean_value:.4f}")
    into, donor = (corrupt_stack, clean_stack) if direction == "denoise" else (clean_stack, corrupt_stack)
    offset = donor.length - into.length
    pairs = [(p, p + offset) for p in range(into.length) if 0 <= p + offset < donor.length]
    raw: dict[Site, list[list[float]] | None] = {s: None for s in SITES}
    for site in SITES:
        if site not in wanted:
            continue
        if site == "resid":
            raw[site] = _residual(into, donor, metric, layers, pairs, batch_size)
        else:
            raw[site] = _heads(into, donor, metric, layers, site, pairs, batch_size)
    groups = into.groups
    return PatchResult(
        model=info,
        clean_text=enc_clean.text,
        corrupt_text=enc_corrupt.text,
        clean_tokens=enc_clean.tokens,
        corrupt_tokens=enc_corrupt.tokens,
        metric=metric,
        direction=direction,
        sites=[s for s in SITES if s in wanted],
        clean=clean_value,
        corrupt=corrupt_value,
        layers=layers,
        positions=[p for p, _ in pairs],
        offset=offset,
        heads_metric=raw["head"],
        residual_metric=raw["resid"],
        k_metric=raw["k"],
        v_metric=raw["v"],
        heads=recovery(clean_value, corrupt_value, raw["head"]),
        residual=recovery(clean_value, corrupt_value, raw["resid"]),
        k=recovery(clean_value, corrupt_value, raw["k"]),
        v=recovery(clean_value, corrupt_value, raw["v"]),
        shared_by=[list(range(kv * groups, (kv + 1) * groups)) for kv in range(into.n_kv)],
    )
