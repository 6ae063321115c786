"""RoPE as the model applies it: the per-pair speeds, and a check that scores depend on n - m only.

``rope`` reads ``rope_theta`` from ``config.rope_parameters`` (transformers 5 has no
``config.rope_theta``; where each layer type has its own, as in Gemma 3, the checked layer's
type's entry, and every type's base is listed with its layers), lists every rotation pair with its speed inv_freq = theta^(-2i/d),
wavelength 2*pi/inv_freq and angle at ``--pos``, and compares those speeds to the model's
own ``rotary_emb.inv_freq``. It then takes the model's real pre-RoPE q and k at one layer
and head (recomputed with that layer's own q_proj/k_proj from the input the layer really
received, then its q_norm/k_norm where it has them), rotates q to position m + delta and k to n + delta with the model's own
``rotary_emb`` cos/sin, and shows the score q.k is the same for every delta. It also
shows that the captured k is the rotated k_proj output and that v is v_proj's output
unrotated.

Note on pairs: Hugging Face Qwen2 pairs dimension i with i + d/2 (``rotate_half``), not
2i with 2i + 1 as the RoFormer paper writes it; the rotation is the same up to a
permutation of dimensions. ``project`` is shared with ``explain``. This module does not
print and does not support rope types other than ``default`` for the formula (it says so).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

from attnscope.capture import anatomy
from attnscope.core.common import attention_layers, tolerance
from attnscope.core.prompt.spec import one
from attnscope.core.prompt.tokens import check_length, encode
from attnscope.core.rotary import Projections, attention_module, cos_sin, project, rotate
from attnscope.errors import AttnscopeError
from attnscope.model import Loaded
from attnscope.results.rope import Pair, RelativeCheck, RopeBase, RopeResult, VCheck

DEFAULT_PROMPT = "민수는 사과를 샀다. 그는 그것을 먹었다."
DEFAULT_DELTAS = (1, 10, 100, 1000)


def rope_theta(model: Any, layer: int) -> tuple[float, str]:
    """Layer ``layer``'s RoPE base and type (its layer type's, where each type has its own)."""
    body = anatomy.of(model)
    params = body.rope_parameters(layer)
    if "rope_theta" not in params:
        raise AttnscopeError("rope_theta", model_type=body.model_type)
    return float(params["rope_theta"]), str(params.get("rope_type", "default"))


def bases(model: Any) -> list[RopeBase]:
    """Every layer type's RoPE with its layers, in the order of their first layer (attention layers only)."""
    body = anatomy.of(model)
    out: dict[str, list[int]] = {}
    for layer in body.layers:
        if layer.attn is not None:
            out.setdefault(layer.layer_type, []).append(layer.index)
    return [RopeBase(kind, *rope_theta(model, layers[0]), layers) for kind, layers in out.items()]


def relative_check(
    model: torch.nn.Module, proj: Projections, layer: int, head: int, query_pos: int, deltas: list[int]
) -> RelativeCheck:
    """score(m, n) vs score(m + delta, n + delta) for every key n <= m, with q/k from ``proj``."""
    groups = proj.q_pre.shape[0] // proj.k_pre.shape[0]
    kv_head = head // groups
    m = query_pos
    q_pre = proj.q_pre[head, m]  # (D,)
    k_pre = proj.k_pre[kv_head, : m + 1]  # (m+1, D)
    keys = list(range(m + 1))

    def scores(q_at: int, k_shift: int) -> torch.Tensor:
        cos, sin = cos_sin(model, [q_at] + [n + k_shift for n in keys], layer)  # (1 + m+1, D)
        q_rot = rotate(q_pre, cos[0], sin[0])  # (D,)
        k_rot = rotate(k_pre, cos[1:], sin[1:])  # (m+1, D)
        return k_rot @ q_rot  # (m+1,)

    base = scores(m, 0)
    # The same score from the forward's own post-RoPE q and k.
    model_scores = proj.k[kv_head, : m + 1] @ proj.q[head, m]  # (m+1,)
    diffs = []
    shifted_k_only = []
    for d in deltas:
        diffs.append(float((scores(m + d, d) - base).abs().max()))
        shifted_k_only.append(float((scores(m, d) - base).abs().max()))
    return RelativeCheck(
        layer=layer,
        head=head,
        kv_head=kv_head,
        query_pos=m,
        keys=keys,
        deltas=list(deltas),
        scores=base.tolist(),
        max_diff_per_delta=diffs,
        max_diff=max(diffs) if diffs else 0.0,
        max_abs_score=float(base.abs().max()),
        max_diff_vs_model=float((base - model_scores).abs().max()),
        k_only_max_diff=shifted_k_only,
    )


def v_check(proj: Projections) -> VCheck:
    """Captured k vs k_proj (differ: rotated), rotated k_proj vs captured k, v_proj vs captured v."""
    return VCheck(
        k_pre_vs_post=float((proj.k_pre - proj.k).abs().max()),
        k_rotated_vs_post=float((rotate(proj.k_pre, proj.cos, proj.sin) - proj.k).abs().max()),
        q_pre_vs_post=float((proj.q_pre - proj.q).abs().max()),
        q_rotated_vs_post=float((rotate(proj.q_pre, proj.cos, proj.sin) - proj.q).abs().max()),
        v_pre_vs_post=float((proj.v_pre - proj.v).abs().max()),
        v_rotated_vs_post=float((rotate(proj.v_pre, proj.cos, proj.sin) - proj.v).abs().max()),
    )


def pairs(theta: float, head_dim: int, pos: int) -> list[Pair]:
    out = []
    for i in range(head_dim // 2):
        inv_freq = theta ** (-2.0 * i / head_dim)
        angle = pos * inv_freq
        out.append(
            Pair(
                i=i,
                dims=[i, i + head_dim // 2],
                inv_freq=inv_freq,
                wavelength=2 * math.pi / inv_freq,
                angle=angle,
                angle_deg=math.degrees(angle) % 360.0,
            )
        )
    return out


def rope(
    loaded: Loaded,
    *,
    pos: int = 10,
    layer: int = 0,
    head: int = 0,
    prompt: str | None = None,
    deltas: Sequence[int] | None = None,
) -> RopeResult:
    """The model's RoPE speeds at position ``pos``, and on the real q/k of ``prompt`` (default: the
    note's sentence) that score(m, n) = score(m+Δ, n+Δ) for each shift Δ in ``deltas``."""
    model = loaded.model
    body = anatomy.of(model)
    info = loaded.info
    head_dim = body.head_dim
    if pos < 0:
        raise AttnscopeError("pos_negative", arg="pos", value=pos)
    shifts = _positive_shifts(deltas)
    (li,) = attention_layers(info, [one(layer, info.num_hidden_layers, "layer")])
    hi = one(head, info.num_attention_heads, "head")
    attention_module(model, li, "rope")  # a layer whose q and k are not RoPE(q_proj(x)), RoPE(k_proj(x)): refused
    theta, rope_type = rope_theta(model, li)
    table = pairs(theta, head_dim, pos)
    inv_diff = _inv_freq_diff(model, table, li)
    enc = encode(loaded.tokenizer, prompt if prompt is not None else DEFAULT_PROMPT)
    max_pos = body.max_positions
    check_length(len(enc.ids), max_pos)
    m = len(enc.ids) - 1
    shifts = _shifts_in_range(shifts, m, max_pos, chosen=deltas is not None)
    proj = project(model, enc.ids, li, [m])
    rel = relative_check(model, proj, li, hi, m, shifts)
    vc = v_check(proj)
    dtype = next(model.parameters()).dtype
    tol = tolerance(dtype)
    # Scores are sums of D products of numbers of size |q||k|; fp32 angles at large positions
    # lose about 1e-7 * position radians, so the bar is relative to the score size.
    rel_tol = tol * max(1.0, rel.max_abs_score)
    ok = rel.max_diff <= rel_tol and vc.k_rotated_vs_post <= tol * 10 and vc.v_pre_vs_post <= tol
    return RopeResult(
        model=info,
        rope_theta=theta,
        rope_type=rope_type,
        bases=bases(model),
        head_dim=head_dim,
        pos=pos,
        pairs=table,
        inv_freq_max_rel_diff=inv_diff,
        prompt=enc.text,
        tokens=enc.tokens,
        relative_check=rel,
        v_check=vc,
        qk_norm=proj.qk_norm,
        tolerance=rel_tol,
        ok=ok,
    )


def _positive_shifts(deltas: Sequence[int] | None) -> list[int]:
    """The shifts asked for (default ``DEFAULT_DELTAS``); each must be positive."""
    shifts = list(DEFAULT_DELTAS if deltas is None else deltas)
    if not shifts or any(d <= 0 for d in shifts):
        raise AttnscopeError("deltas_positive", arg="deltas")
    return shifts


def _shifts_in_range(shifts: list[int], m: int, max_pos: int | None, *, chosen: bool) -> list[int]:
    """The shifts that keep the query at position ``m`` below ``max_pos``: the default ones are cut
    to those (at least 1), shifts the user ``chosen`` that pass it are an error."""
    if max_pos and not chosen:
        shifts = [d for d in shifts if m + d < max_pos] or [1]
    if max_pos and m + max(shifts) >= max_pos:
        raise AttnscopeError("deltas_long", arg="deltas", m=m, shift=max(shifts), limit=max_pos, below=max_pos - m)
    return shifts


def _inv_freq_diff(model: torch.nn.Module, table: Sequence[Pair], layer: int) -> float | None:
    """The largest relative difference between the model's own ``rotary_emb.inv_freq`` (of the
    layer's type, where each has its own) and the speeds computed from ``rope_theta`` (None when
    the model keeps no such tensor)."""
    model_inv = anatomy.of(model).inv_freq(layer)
    if model_inv is None:
        return None
    ours = torch.tensor([p.inv_freq for p in table], dtype=torch.float64)
    return float(((model_inv.double().cpu() - ours).abs() / ours).max())
