"""The norm measure (Kobayashi et al. 2020): how large a vector each key adds, not only its weight.

A head h mixes ``sum_j alpha_ij f_h(x_j)`` into the residual stream, with
``f_h(x) = (x W_V + b_V) W_O^h``: the value vector of the KV head that h reads
(``h // groups``), multiplied by the columns of ``o_proj`` that belong to head h
(input columns ``h*D:(h+1)*D``). The measure of key j is ``||alpha_ij f_h(x_j)||``
= ``alpha_ij * ||f_h(x_j)||``, so only ``||f_h(x_j)||`` per layer, head and key is
needed (L x H x T numbers): it is computed from the Gram matrix ``W_O^h^T W_O^h``
(D x D per head), never as an L x H x T x hidden or L x H x T x T tensor.

``completeness`` checks the decomposition: ``sum_h sum_j alpha_ij f_h(x_j)`` (+ the
o_proj bias, where there is one) against the model's own o_proj applied to its own
attention output at the query. The value ``v`` that the attention function receives
already includes b_V (it is v_proj's output). This module does not capture, load or print.
"""

from __future__ import annotations

import torch


def head_columns(o_weight: torch.Tensor, n_heads: int) -> torch.Tensor:
    """o_proj.weight (hidden, H*D) -> (H, hidden, D): W_O^h, the columns head h writes through."""
    hidden, inner = o_weight.shape
    head_dim = inner // n_heads
    return o_weight.float().view(hidden, n_heads, head_dim).permute(1, 0, 2)  # (H, hidden, D)


def value_norms(value: torch.Tensor, o_weight: torch.Tensor, n_heads: int) -> torch.Tensor:
    """||f_h(x_j)|| for every head and key: value (B, KV, T, D) -> (B, H, T), fp32.

    Query head h reads KV head h // groups; ||v W_O^h^T||^2 = v (W_O^h^T W_O^h) v^T.
    """
    batch, n_kv, n_tok, head_dim = value.shape
    groups = n_heads // n_kv
    w = head_columns(o_weight, n_heads)  # (H, hidden, D)
    gram = (w.transpose(1, 2) @ w).view(n_kv, groups, head_dim, head_dim)  # (KV, G, D, D)
    v = value.float()
    sq = torch.einsum("bktd,kgde,bkte->bkgt", v, gram.to(v.device), v)  # (B, KV, G, T)
    return sq.clamp_min(0.0).sqrt().reshape(batch, n_heads, n_tok)  # (B, H, T): head h = k * G + g


def mixed(rows: torch.Tensor, value: torch.Tensor, o_weight: torch.Tensor, o_bias: torch.Tensor | None) -> torch.Tensor:
    """sum_h sum_j alpha_ij f_h(x_j) (+ b_O): rows (B, H, P, T), value (B, KV, T, D) -> (B, P, hidden)."""
    batch, n_heads, n_pos, n_tok = rows.shape
    n_kv, head_dim = value.shape[1], value.shape[-1]
    groups = n_heads // n_kv
    v = value.float().to(rows.device)
    per_head = torch.einsum(
        "bkgpt,bktd->bkgpd", rows.view(batch, n_kv, groups, n_pos, n_tok), v[..., :n_tok, :]
    )  # (B, KV, G, P, D)
    per_head = per_head.reshape(batch, n_heads, n_pos, head_dim)  # (B, H, P, D)
    w = head_columns(o_weight, n_heads).to(rows.device)  # (H, hidden, D)
    out = torch.einsum("bhpd,hod->bpo", per_head, w)  # (B, P, hidden): summed over heads
    if o_bias is not None:
        out = out + o_bias.float().to(rows.device)
    return out


def completeness(
    rows: torch.Tensor, value: torch.Tensor, attn_out: torch.Tensor, positions: torch.Tensor, o_proj: torch.nn.Module
) -> float:
    """Max |sum_h sum_j alpha_ij f_h(x_j) + b_O - o_proj(model's attention output)| at the query positions.

    rows (B, H, P, T) fp32; value (B, KV, T, D); attn_out (B, T, H, D), the attention output
    before o_proj; positions (B, P).
    """
    weight = o_proj.weight
    bias = getattr(o_proj, "bias", None)
    assert isinstance(weight, torch.Tensor)
    batch, n_pos = positions.shape
    idx = positions.to(attn_out.device)[:, :, None, None].expand(batch, n_pos, *attn_out.shape[2:])
    at_query = torch.gather(attn_out, 1, idx).reshape(batch, n_pos, -1)  # (B, P, H*D)
    with torch.inference_mode():
        model_out = o_proj(at_query).float()  # (B, P, hidden): the model's own o_proj
    ours = mixed(rows.to(attn_out.device), value, weight, bias)
    return float((ours - model_out).abs().max())
