"""One layer's q, k and v before and after RoPE, and RoPE written out: what ``rope`` (the relative-
position check) and ``explain`` (one head's attention step by step) both read.

``project`` runs the model to one layer through the hook points (its attention's input, the
post-RoPE q/k/v the attention function was handed, the rows, the output before o_proj) and
applies the layer's own q/k/v projections to that input, then its own q_norm and k_norm where it
has them (per head, or over the whole projection in OLMo 2/3, as the anatomy says), which gives
the q and k RoPE turns; ``rotate`` is RoPE as the model applies
it (Hugging Face pairs dimension i with i + d/2), ``cos_sin`` the model's own rotary embedding at
any positions. A layer whose q and k are not RoPE of a plain projection is refused by the anatomy.
This module is no analysis of its own; it prints nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import torch

from attnscope.capture import anatomy, engine, hooks
from attnscope.errors import AttnscopeError


@dataclass
class Projections:
    """One layer's attention inputs for one sequence (batch of 1), all fp32 on CPU.

    x: (T, hidden), the input self_attn received (after input_layernorm).
    q_pre: (H, T, D), k_pre/v_pre: (KV, T, D): the layer's own projections of x, before RoPE
    (q and k through the layer's q_norm and k_norm where it has them: ``qk_norm``).
    cos, sin: (T, D): what the model's rotary_emb gave this layer.
    q: (H, T, D), k/v: (KV, T, D): what the attention function was handed (post-RoPE q/k).
    rows: (H, P, T) captured softmax rows for the requested positions.
    output: (T, H, D), the attention output before o_proj.
    mask: the mask the model passed to attention, or None (plain causal).
    scaling: the attention module's score scale (1/sqrt(D) for Qwen2).
    """

    x: torch.Tensor
    q_pre: torch.Tensor
    k_pre: torch.Tensor
    v_pre: torch.Tensor
    cos: torch.Tensor
    sin: torch.Tensor
    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    rows: torch.Tensor
    output: torch.Tensor
    mask: torch.Tensor | None
    scaling: float
    qk_norm: bool = False


def attention_module(model: torch.nn.Module, layer: int, what: str = "this command") -> Any:
    """Layer ``layer``'s attention module, when ``what`` (explain, rope) can recompute its q and k
    as ``RoPE(q_proj(x))``, ``RoPE(k_proj(x))``; otherwise one error saying which step it lacks
    (``capture.anatomy.Anatomy.recompute_problem``)."""
    return anatomy.of(model).recomputable(layer, what)


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """(..., D): pairs dimension i with i + D/2 and turns each pair by 90 degrees."""
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """RoPE written out: x * cos + rotate_half(x) * sin; x (..., T, D), cos/sin (T, D)."""
    return x * cos + rotate_half(x) * sin


def project(model: torch.nn.Module, ids: list[int], layer: int, positions: list[int]) -> Projections:
    """Run one forward up to ``layer`` and return its q/k/v before and after RoPE (see Projections)."""
    attention_module(model, layer)  # refused where q and k are not RoPE(q_proj(x)), RoPE(k_proj(x))
    parts = anatomy.of(model).layers[layer]
    input_ids = torch.tensor([ids])  # (1, T)
    names = [f"{point}.{layer}" for point in ("attn_in", "rows", "q", "k", "v", "z")]
    run = hooks.capture(
        anatomy.of(model), input_ids, torch.ones_like(input_ids), names, positions=torch.tensor([positions]), stop=True
    )
    x = run.values.get(f"attn_in.{layer}")  # (1, T, hidden)
    pe = run.calls.get(f"attn_in.{layer}", {}).get("position_embeddings")
    if x is None or pe is None:
        raise AttnscopeError("rope_inputs")
    assert run.captured is not None
    engine.check_finite(run.captured.rows)
    n_tok = x.shape[1]
    q, k, v = (run[f"{point}.{layer}"].cpu() for point in ("q", "k", "v"))  # (1, H, T, D), (1, KV, T, D), (1, KV, T, D)
    head_dim = q.shape[-1]
    body = anatomy.of(model)
    with torch.inference_mode():
        # (1, T, n*D) -> (1, T, n, D) -> (1, n, T, D) -> (n, T, D)
        q_pre = _pre_rope(body, layer, "q", x, head_dim).transpose(1, 2)[0]
        k_pre = _pre_rope(body, layer, "k", x, head_dim).transpose(1, 2)[0]
        v_pre = parts.proj("v")(x).view(1, n_tok, -1, head_dim).transpose(1, 2)[0]
    cos, sin = pe  # each (1, T, D)
    mask = run.masks.get(layer)
    return Projections(
        x=x[0].detach().float().cpu(),
        q_pre=q_pre.float().cpu(),
        k_pre=k_pre.float().cpu(),
        v_pre=v_pre.float().cpu(),
        cos=cos[0].float().cpu(),
        sin=sin[0].float().cpu(),
        q=q[0].float(),
        k=k[0].float(),
        v=v[0].float(),
        rows=run[f"rows.{layer}"][0],  # (H, P, T)
        output=run[f"z.{layer}"][0].float().cpu(),  # (T, H, D)
        mask=None if mask is None else mask.cpu(),
        scaling=parts.scaling(head_dim**-0.5),
        qk_norm=body.qk_norm(layer, "q") is not None or body.qk_norm(layer, "k") is not None,
    )


def _pre_rope(
    body: anatomy.Anatomy, layer: int, which: Literal["q", "k"], x: torch.Tensor, head_dim: int
) -> torch.Tensor:
    """(1, T, hidden) -> (1, T, n, D): the layer's ``{which}_proj`` of ``x`` through its ``{which}_norm``
    where it has one, normed per head or over the whole projection as the model does."""
    out: torch.Tensor = body.layers[layer].proj(which)(x)  # (1, T, n*D)
    norm = body.qk_norm(layer, which)
    if norm is not None and not norm[1]:
        out = norm[0](out)  # over the whole projection (OLMo 2/3)
    out = out.view(*out.shape[:2], -1, head_dim)  # (1, T, n, D)
    if norm is not None and norm[1]:
        out = norm[0](out)  # per head (Qwen 3, Gemma 3)
    return out


def cos_sin(model: torch.nn.Module, positions: list[int], layer: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The model's own rotary_emb for ``layer`` at arbitrary positions: cos, sin each (len(positions), D), fp32."""
    return anatomy.of(model).cos_sin(positions, layer)
