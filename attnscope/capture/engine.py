"""Exact attention rows from a real forward pass, without eager attention's L x H x T x T.

We register an attention function under the name ``attnscope`` with transformers 5's
``AttentionInterface`` (and the sdpa mask builder under the same name with
``AttentionMaskInterface``; without it ``create_causal_mask`` returns None and padding
would be silently ignored). The function runs the model's own sdpa path for the layer
output, and, for the layers and query positions that were asked for, computes the
softmax rows in fp32 from the post-RoPE query and the key it was handed. GQA is handled
by viewing query head ``h`` against KV head ``h // groups``; K/V are never copied per
query head. The forward stops right after the last layer that is needed.

Axes, everywhere: ``batch, head, query_pos, key_pos``. This module does not tokenize or
print; it takes tensors and returns tensors. :func:`prepare` switches a loaded model to the
capturing attention (and builds its ``capture.anatomy``), and :func:`load` is
``attnscope.model.load`` followed by it.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import torch
from transformers import AttentionInterface, AttentionMaskInterface
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import sdpa_mask

from attnscope.capture import anatomy, masking
from attnscope.errors import AttnscopeError
from attnscope.model import Loaded

IMPL = "attnscope"

AttentionInterface.register(IMPL, lambda *a, **k: _attention(*a, **k))
AttentionMaskInterface.register(IMPL, sdpa_mask)

# Keywords that change the softmax and that no model we know passes; a layer that passes one is refused.
_UNSUPPORTED_KWARGS = ("position_bias",)
# A query block of the eager output path holds at most this many scores (fp32) at once.
_EAGER_BLOCK = 1 << 24


class StopForward(Exception):
    """Raised inside the forward once every requested layer has been seen."""


@dataclass(frozen=True)
class Settings:
    """What a layer's softmax used besides q, k and the mask: :func:`attention_rows` takes these."""

    scaling: float
    sliding_window: int | None
    softcap: float | None
    sinks: torch.Tensor | None


@dataclass
class Handed:
    """What one layer's attention function was handed: the post-RoPE ``query`` (B, H, T, D), ``key``
    and ``value`` (B, KV, T, D), the ``mask`` the model passed (None: plain causal) and the softmax
    ``settings``. A tap (``Request.taps``) may replace ``query``, ``key`` and ``value`` in place of the
    layer's own, before its output is computed."""

    layer: int
    query: torch.Tensor
    key: torch.Tensor
    value: torch.Tensor
    mask: torch.Tensor | None
    settings: Settings


Tap = Callable[[Handed], None]


@dataclass
class Request:
    """What the attention function does in one forward pass besides the layer's output.

    ``positions`` is (batch, P): the query positions whose rows are wanted in each
    sequence; None means the last query position of each call (one row per sequence),
    which is the new token's row when a decode step runs against a KV cache. ``layers`` are the
    layers whose rows are computed. ``norms`` names layers whose value-vector norms
    ``||f_h(x_j)||`` (``attnscope.capture.norm``) are computed, with the completeness check at
    ``positions`` when that layer's rows cover every head. ``taps[layer]`` is handed what that
    layer's attention function received (:class:`Handed`), before its output is computed: the
    hook points of ``capture.hooks`` read and edit q, k and v this way. With ``stop`` the forward
    stops after the last layer any of these name.
    """

    positions: torch.Tensor | None
    layers: frozenset[int]
    norms: frozenset[int] = frozenset()
    stop: bool = True
    heads: frozenset[int] | None = (
        None  # only these query heads' rows (rows[layer] is then (B, len(heads), P, T), heads sorted)
    )
    # Called with (layer, rows, norms or None) on the model's device as each layer is done, in
    # place of keeping them: a reduction that needs one layer's rows at a time (``core.stats.driver``).
    consume: Callable[[int, torch.Tensor, torch.Tensor | None], None] | None = None
    # With ``consume``: hand it log-probabilities (-inf where a share is 0) instead of rows, so a
    # reduction that needs both (entropy) takes no logarithm of its own.
    log_rows: bool = False
    taps: Mapping[int, Tap] = field(default_factory=dict)
    # The layers whose q, k, v or pre-o_proj output the request's taps and hooks keep in full: what the
    # memory guard counts besides the rows (a tap that reads only the mask keeps next to nothing).
    kept: frozenset[int] = frozenset()

    @functools.cached_property
    def wanted(self) -> frozenset[int]:
        """Every layer this request does something at."""
        return self.layers | self.norms | frozenset(self.taps)


@dataclass
class Captured:
    """What a forward pass left: rows[layer] is (batch, head, P, key_pos) fp32 on CPU."""

    rows: dict[int, torch.Tensor] = field(default_factory=dict)
    norms: dict[int, torch.Tensor] = field(default_factory=dict)  # (batch, head, key_pos) fp32
    completeness: dict[int, float] = field(default_factory=dict)  # max |difference| (capture.norm)
    seen: set[int] = field(default_factory=set)


# The capture in progress in this context (thread, task): its request and what it has captured so far.
_current: contextvars.ContextVar[tuple[Request, Captured] | None] = contextvars.ContextVar(
    "attnscope_capture", default=None
)


def scores_to_rows(
    scores: torch.Tensor,
    softcap: float | None = None,
    sinks: torch.Tensor | None = None,
    empty: torch.Tensor | None = None,
    log: bool = False,
) -> torch.Tensor:
    """Softmax rows from scaled scores (B, H, P, T), fp32, with -inf where a key is masked.

    ``softcap``: logit soft-capping (Gemma 2), ``softcap * tanh(score / softcap)`` before
    the mask. ``sinks``: one learned logit per head (gpt-oss's ``s_aux``), an extra softmax
    column that is not a key; its share is left out, so a row then sums to 1 minus the
    sink's share. A row whose every key is masked is returned as zeros, as sdpa does (with
    sinks, the sink takes all of it). ``empty`` (broadcastable to (B, H, P, 1)) says which
    rows those are when the caller knows it from the mask; None works it out from the scores.
    ``log`` returns log-probabilities instead (-inf where the share is 0).
    """
    if softcap is not None:
        scores = torch.tanh(scores / softcap) * softcap  # -inf stays -inf
    norm = torch.log_softmax if log else torch.softmax
    if sinks is not None:
        sink = sinks.float().to(scores.device).view(1, -1, 1, 1).expand(*scores.shape[:-1], 1)  # (B, H, P, 1)
        return norm(torch.cat([scores, sink], dim=-1), dim=-1)[..., :-1]
    if empty is None:
        empty = torch.isneginf(scores).all(dim=-1, keepdim=True)  # (B, H, P, 1)
    if not bool(empty.any()):
        return norm(scores, dim=-1)
    rows = norm(scores.masked_fill(empty, 0.0), dim=-1)
    return rows.masked_fill(empty, float("-inf") if log else 0.0)


def attention_rows(
    query: torch.Tensor,
    key: torch.Tensor,
    positions: torch.Tensor,
    scaling: float,
    mask: torch.Tensor | None,
    sliding_window: int | None = None,
    softcap: float | None = None,
    sinks: torch.Tensor | None = None,
    log: bool = False,
) -> torch.Tensor:
    """Softmax rows for selected query positions, in fp32.

    query: (batch, head, q_len, head_dim), post-RoPE.
    key: (batch, kv_head, kv_len, head_dim), post-RoPE, one per KV head.
    positions: (batch, P) indices into q_len.
    mask: None (plain causal, or a sliding window of ``sliding_window`` keys), bool
    (batch, 1|head, q_len, kv_len) with True = attend, or float additive of the same shape.
    ``softcap`` and ``sinks`` (one logit per query head): see :func:`scores_to_rows`.
    Returns (batch, head, P, kv_len). A row whose every key is masked (a padded query
    under left padding) is returned as zeros, as sdpa does. ``log`` returns log-probabilities.

    The mask is applied by adding a (batch, 1|head, P, kv_len) bias of 0 / -inf built once for
    all heads, which costs far less than filling the full scores; which rows are empty is read
    from that small mask too.
    """
    batch, n_heads, q_len, head_dim = query.shape
    n_kv = key.shape[1]
    kv_len = key.shape[2]
    groups = n_heads // n_kv
    if q_len == 1 and positions.shape[1] == 1 and mask is None and (sliding_window is None or kv_len <= sliding_window):
        # A decode step against a KV cache: the one query sees every key, so nothing is masked.
        q_one = query.float().view(batch, n_kv, groups, 1, head_dim)  # (B, KV, G, 1, D)
        scores = torch.einsum("bkgpd,bktd->bkgpt", q_one, key.float()) * scaling  # (B, KV, G, 1, T)
        scores = scores.reshape(batch, n_heads, 1, kv_len)
        if softcap is None and sinks is None:
            return torch.log_softmax(scores, dim=-1) if log else torch.softmax(scores, dim=-1)
        return scores_to_rows(scores, softcap, sinks, empty=torch.zeros((), dtype=torch.bool), log=log)
    n_pos = positions.shape[1]
    if n_pos == q_len and torch.equal(positions.cpu(), torch.arange(q_len).expand(batch, q_len)):
        q_sel = query.float()  # every query position, in order: nothing to gather
    else:
        idx = positions.to(query.device)[:, None, :, None].expand(batch, n_heads, n_pos, head_dim)
        q_sel = torch.gather(query, 2, idx).float()  # (B, H, P, D)
    q_sel = q_sel.view(batch, n_kv, groups, n_pos, head_dim)  # (B, KV, G, P, D): head h -> kv h // G
    scores = torch.einsum("bkgpd,bktd->bkgpt", q_sel, key.float()) * scaling  # (B, KV, G, P, T)
    scores = scores.reshape(batch, n_heads, n_pos, kv_len)  # (B, H, P, T)
    if softcap is not None:  # capped before any mask is added, as the model does
        scores = torch.tanh(scores / softcap) * softcap
        softcap = None

    offset = kv_len - q_len  # keys before the first query (a cache)
    if mask is None:
        qpos = positions.to(query.device)[:, None, :, None] + offset  # (B, 1, P, 1)
        kpos = torch.arange(kv_len, device=query.device)[None, None, None, :]  # (1, 1, 1, T)
        allowed = kpos <= qpos
        if sliding_window is not None:
            allowed = allowed & (kpos > qpos - sliding_window)
        forbid = ~allowed  # (B, 1, P, T)
        bias = torch.zeros(forbid.shape, dtype=scores.dtype, device=scores.device)
    else:
        m_idx = positions.to(mask.device)[:, None, :, None].expand(batch, mask.shape[1], n_pos, kv_len)
        m_rows = torch.gather(mask, 2, m_idx)  # (B, 1|H, P, T)
        forbid = masking.forbids(m_rows)
        # an additive mask: biases are added, masked keys forced to -inf
        bias = m_rows.float() if m_rows.is_floating_point() else torch.zeros(forbid.shape, dtype=scores.dtype)
        bias = bias.to(scores.device)
        forbid = forbid.to(scores.device)
    scores = scores + bias.masked_fill(forbid, float("-inf"))
    return scores_to_rows(scores, None, sinks, empty=forbid.all(dim=-1, keepdim=True), log=log)


def eager_output(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: torch.Tensor | None,
    scaling: float,
    softcap: float | None,
    sinks: torch.Tensor | None,
) -> torch.Tensor:
    """The layer's attention output where sdpa cannot compute it (soft-capping, sink logits).

    The model's own eager formula, one block of queries at a time so that no layer ever
    holds all of its (head, query, key) scores: query (B, H, Q, D), key and value
    (B, KV, T, D); returns (B, Q, H, D) in the value's dtype.
    """
    batch, n_heads, q_len, _ = query.shape
    n_kv, kv_len = key.shape[1], key.shape[2]
    groups = n_heads // n_kv
    k = key[:, :, None].expand(batch, n_kv, groups, kv_len, key.shape[-1]).reshape(batch, n_heads, kv_len, -1)
    v = value[:, :, None].expand(batch, n_kv, groups, kv_len, value.shape[-1]).reshape(batch, n_heads, kv_len, -1)
    block = max(1, _EAGER_BLOCK // max(1, batch * n_heads * kv_len))
    offset = kv_len - q_len
    kpos = torch.arange(kv_len, device=query.device)
    parts = []
    for start in range(0, q_len, block):
        stop = min(q_len, start + block)
        if mask is None:  # plain causal: the mask builder left it out
            qpos = torch.arange(start, stop, device=query.device)[:, None] + offset
            block_mask = (kpos[None, :] <= qpos)[None, None].expand(batch, 1, -1, -1)  # (B, 1, P, T)
        else:
            block_mask = mask[:, :, start:stop]
        scores = torch.matmul(query[:, :, start:stop].float(), k.float().transpose(2, 3)) * scaling  # (B, H, P, T)
        if softcap is not None:
            scores = torch.tanh(scores / softcap) * softcap
        if block_mask.is_floating_point():
            scores = scores + block_mask.float()
        scores = scores.masked_fill(masking.forbids(block_mask), float("-inf"))
        rows = scores_to_rows(scores, None, sinks).to(v.dtype)
        parts.append(torch.matmul(rows, v))  # (B, H, P, D)
    return torch.cat(parts, dim=2).transpose(1, 2).contiguous()  # (B, Q, H, D)


def _settings(module: torch.nn.Module, query: torch.Tensor, kwargs: dict[str, Any]) -> Settings:
    for name in _UNSUPPORTED_KWARGS:
        if kwargs.get(name) is not None:
            raise AttnscopeError("capture_softmax", module=type(module).__name__, name=name)
    scaling = float(kwargs.get("scaling") or query.shape[-1] ** -0.5)
    return Settings(scaling, kwargs.get("sliding_window"), kwargs.get("softcap"), kwargs.get("s_aux"))


def _layer_of(module: torch.nn.Module) -> int:
    layer = getattr(module, "layer_idx", None)
    if layer is None:
        raise AttnscopeError("capture_no_layer_idx")
    return int(layer)


def _attention(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    settings = _settings(module, query, kwargs)
    active = _current.get()
    layer = -1
    if active is not None:
        layer = _layer_of(module)
        tap = active[0].taps.get(layer)
        if tap is not None:
            handed = Handed(layer, query, key, value, attention_mask, settings)
            tap(handed)
            query, key, value = handed.query, handed.key, handed.value
    if settings.softcap is None and settings.sinks is None:
        out, _ = sdpa_attention_forward(module, query, key, value, attention_mask, **kwargs)
    else:  # sdpa has neither soft-capping nor sink logits: the model's eager formula, in query blocks
        out = eager_output(
            module, query, key, value, attention_mask, settings.scaling, settings.softcap, settings.sinks
        )
    if active is not None:
        _capture(active, module, layer, query, key, value, attention_mask, out, settings)
    return out, None


def _capture(
    active: tuple[Request, Captured],
    module: torch.nn.Module,
    layer: int,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: torch.Tensor | None,
    out: torch.Tensor,
    settings: Settings,
) -> None:
    """The request's rows and norms of one layer's call; stops the forward after its last layer."""
    request, captured = active
    captured.seen.add(layer)
    positions = request.positions
    if positions is None:  # the last query of this call: (B, 1)
        positions = torch.full((query.shape[0], 1), query.shape[2] - 1, dtype=torch.long)
    if layer in request.layers:
        rows = _rows(request, query, key, mask, positions, settings)
        captured.rows[layer] = rows if request.consume is not None else rows.cpu()
    if layer in request.norms:
        _norms(module, layer, value, out, positions, request, captured)
    if request.consume is not None and layer in request.layers:
        request.consume(layer, captured.rows.pop(layer), captured.norms.pop(layer, None))
    wanted = request.wanted
    if request.stop and wanted and layer == max(wanted):
        raise StopForward


def _rows(
    request: Request,
    query: torch.Tensor,
    key: torch.Tensor,
    mask: torch.Tensor | None,
    positions: torch.Tensor,
    settings: Settings,
) -> torch.Tensor:
    """The request's rows of one layer (only its heads, where it names some)."""
    q_in, k_in, m_in, s_in = query, key, mask, settings.sinks
    if request.heads is not None and len(request.heads) < query.shape[1]:  # all heads: nothing to copy
        q_in, k_in, m_in = _select_heads(query, key, mask, sorted(request.heads))
        s_in = None if settings.sinks is None else settings.sinks[sorted(request.heads)]
    log = request.log_rows and request.consume is not None
    return attention_rows(
        q_in, k_in, positions, settings.scaling, m_in, settings.sliding_window, settings.softcap, s_in, log=log
    )


def _norms(
    module: torch.nn.Module,
    layer: int,
    value: torch.Tensor,
    out: torch.Tensor,
    positions: torch.Tensor,
    request: Request,
    captured: Captured,
) -> None:
    """||f_h(x_j)|| for every head and key, and the completeness check where all heads' rows exist."""
    from attnscope.capture import norm

    o_proj, n_heads = anatomy.head_writer(module, int(value.shape[-1]), "the norm measure")
    weight = o_proj.weight
    captured.norms[layer] = norm.value_norms(value, weight, n_heads).cpu()  # (B, H, T)
    if layer in captured.rows and request.heads is None:
        rows = captured.rows[layer].exp() if request.log_rows and request.consume is not None else captured.rows[layer]
        captured.completeness[layer] = norm.completeness(rows, value, out, positions, o_proj)


def _select_heads(
    query: torch.Tensor, key: torch.Tensor, mask: torch.Tensor | None, heads: list[int]
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """Only the given query heads, each paired with its own KV head, so that rows are
    computed (and held) for those heads alone; groups becomes 1."""
    n_heads = query.shape[1]
    if heads and (heads[0] < 0 or heads[-1] >= n_heads):
        raise AttnscopeError("capture_heads_range", heads=heads, n=n_heads)
    groups = n_heads // key.shape[1]
    q_sel = query[:, heads]  # (B, h, q_len, D)
    k_sel = key[:, [h // groups for h in heads]]  # (B, h, kv_len, D): head h reads KV head h // groups
    if mask is not None and mask.shape[1] == n_heads:
        mask = mask[:, heads]  # (B, h, q_len, kv_len)
    return q_sel, k_sel, mask


def prepare(model: Any) -> None:
    """Switch a loaded model to the capturing attention; a clear error if it cannot be."""
    config = getattr(model, "config", None)
    if config is None or not hasattr(model, "set_attn_implementation"):
        raise AttnscopeError("capture_not_transformers")
    if config._attn_implementation != IMPL:
        try:
            model.set_attn_implementation(IMPL)
        except (ValueError, ImportError) as exc:  # pragma: no cover - depends on the architecture
            raise AttnscopeError("capture_routing", model=type(model).__name__, detail=exc) from exc
    if config._attn_implementation != IMPL:
        raise AttnscopeError("capture_no_interface", model=type(model).__name__)
    anatomy.of(model)  # built once, kept on the model


def load(model: str | None = None, **options: Any) -> Loaded:
    """A model ready for capture: :func:`attnscope.model.load` with the same arguments, then :func:`prepare`."""
    from attnscope.model import load as load_model

    loaded = load_model(model, **options)
    prepare(loaded.model)
    return loaded


@contextlib.contextmanager
def session(request: Request) -> Iterator[Captured]:
    """Capture ``request`` in every attention call made inside the block (the model must be
    :func:`prepare`d). With a KV cache each call sees the cached keys, so a decode step's
    rows span every key so far."""
    if _current.get() is not None:
        raise RuntimeError("capture sessions do not nest")
    captured = Captured()
    token = _current.set((request, captured))
    try:
        yield captured
    finally:
        _current.reset(token)


def position_ids(attention_mask: torch.Tensor) -> torch.Tensor:
    """(batch, T) positions that ignore padding, so a padded sequence sees the same RoPE
    angles as when it runs alone."""
    return (attention_mask.long().cumsum(-1) - 1).clamp(min=0)


def run(
    model: torch.nn.Module,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    request: Request,
    **forward_kwargs: Any,
) -> Captured:
    """One forward of the decoder with ``request`` active; returns what it captured.

    input_ids, attention_mask: (batch, T). Layers after the last one requested do not run.
    """
    decoder = anatomy.of(model).decoder
    return forward(model, decoder, input_ids, attention_mask, request, "inference", **forward_kwargs)[1]


def forward(
    model: torch.nn.Module,
    module: Any,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    request: Request,
    mode: Literal["inference", "no_grad", "grad"] = "inference",
    *,
    eager: bool = False,
    **forward_kwargs: Any,
) -> tuple[Any, Captured]:
    """``module`` (the decoder, or the whole causal LM) called on ``input_ids`` with ``request``
    active: its output (None where the request stopped the forward) and what was captured. ``mode``:
    under ``inference_mode``, ``no_grad``, or with gradients (``capture.hooks``' kept gradients).
    ``eager``: the forward runs on transformers' own eager attention instead (a reference the capture
    is checked against: nothing is captured, the request's taps and rows are not reached), and the
    capturing attention is put back afterwards."""
    prepare(model)
    device = next(model.parameters()).device
    _guard_memory(model, input_ids, attention_mask, request, str(device))
    grad: Any = {"inference": torch.inference_mode, "no_grad": torch.no_grad, "grad": torch.enable_grad}[mode]
    out = None
    if eager:
        model.set_attn_implementation("eager")  # type: ignore[operator]
    try:
        with session(request) as captured, grad():
            try:
                out = module(
                    input_ids=input_ids.to(device),
                    attention_mask=attention_mask.to(device),
                    position_ids=position_ids(attention_mask).to(device),
                    use_cache=False,
                    **forward_kwargs,
                )
            except StopForward:
                pass
    finally:
        if eager:
            prepare(model)
    missing = sorted((request.layers | frozenset(request.taps)) - captured.seen)
    if missing:
        model_type = getattr(getattr(model, "config", None), "model_type", "?")
        raise AttnscopeError("capture_never_called", layers=", ".join(map(str, missing)), model_type=model_type)
    return out, captured


def _guard_memory(
    model: torch.nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor, request: Request, device: str
) -> None:
    """Refuse a run whose kept rows (on the CPU) or per-layer buffers (on ``device``) will not fit."""
    from attnscope.capture import memory

    config = getattr(model, "config", None)
    heads = int(getattr(config, "num_attention_heads", 1) or 1)
    if request.heads is not None:  # rows are built for the selected heads only
        heads = len(request.heads)
    hidden = int(getattr(config, "hidden_size", 0) or 0)
    batch, keys = input_ids.shape  # (B, T)
    queries = 1 if request.positions is None else int(request.positions.shape[1])  # (B, P)
    kept_layers = len(request.kept)
    kept, transient = memory.capture_bytes(
        layers=1 if request.consume is not None else len(request.layers),  # consumed rows live one layer at a time
        batch=batch,
        heads=heads,
        queries=queries,
        keys=keys,
        padded=bool((attention_mask == 0).any()),
        kept_layers=kept_layers,
        hidden=hidden,
    )
    sizes: dict[str, Any] = {
        "layers": len(request.layers),
        "heads": heads,
        "queries": queries,
        "keys": keys,
        "arg": "layer",
    }
    if device.startswith("cpu"):
        memory.guard(kept + transient, "memory_rows_batch" if batch > 1 else "memory_rows", b=batch, **sizes)
    else:
        memory.guard(kept, "memory_rows_batch" if batch > 1 else "memory_rows", b=batch, **sizes)
        memory.guard(transient, "memory_scores", device, **sizes)


def all_finite(values: torch.Tensor) -> bool:
    """No NaN or inf in a CPU tensor. numpy's check: on a busy machine torch's own spreads each
    small tensor over its thread pool and can take a hundred times longer."""
    if values.device.type == "cpu" and values.dtype in (torch.float32, torch.float64):
        return bool(np.isfinite(values.detach().numpy()).all())
    return bool(torch.isfinite(values).all())


def check_finite(rows: dict[int, torch.Tensor], heads: Sequence[int] | None = None) -> None:
    """Stop with a message naming the layer and head if any captured row is NaN or inf.

    ``heads``: the model's head index of each entry on the rows' head axis, when the
    request selected heads (``Request.heads``, sorted); None means the axis is all heads.
    """
    for layer in sorted(rows):
        if all_finite(rows[layer]):
            continue
        bad = ~torch.isfinite(rows[layer])  # (B, H, P, T)
        if bad.any():
            index = int(bad.any(dim=-1).any(dim=-1).any(dim=0).nonzero()[0])
            head = index if heads is None else list(heads)[index]
            raise AttnscopeError("nan", layer=layer, head=head, arg="dtype")
