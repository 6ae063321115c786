"""An independent reference for ``flow``: every part of every sum materialised, from plain transformers.

The model runs once with eager attention and ``output_attentions``; hooks read each layer's input
and what ``post_attention_layernorm`` receives (the middle of the layer). The value vectors are
recomputed by hand from the layer's weights (``v_proj(input_layernorm(x))``), each head's part
``alpha_ij^h v_j^(h // groups) W_O^h`` is built for every (i, j, h) at once as a (T, T, H, hidden)
tensor, and the proximities follow the definition. The walk from the prediction is done again on
these numbers. No attnscope code runs here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from transformers import AutoModelForCausalLM


@dataclass
class Layer:
    residual: torch.Tensor  # (T,) the attention sum's residual part
    sources: torch.Tensor  # (T, G, H) per source group and head, or (T, G) summed over heads
    mid: torch.Tensor  # (T,) the MLP sum's x_mid part
    mlp: torch.Tensor  # (T,) its MLP part
    attention_error: torch.Tensor  # (T,) max |sum of the attention parts - x_mid|
    mlp_error: torch.Tensor  # (T,)


def _proximity(y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    return (y.abs().sum(-1) - (y - z).abs().sum(-1)).clamp_min(0.0)


def reference(folder: Path, ids: Sequence[int], groups: Sequence[Sequence[int]], heads: bool) -> list[Layer]:
    """Each layer's importances at every position, from a fresh eager copy of the model in ``folder``."""
    model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32, attn_implementation="eager").eval()
    cfg = model.config
    n_heads, n_kv = cfg.num_attention_heads, cfg.num_key_value_heads
    d = getattr(cfg, "head_dim", None) or cfg.hidden_size // n_heads
    xs: list[torch.Tensor] = []
    mids: list[torch.Tensor] = []
    handles = []
    for layer in model.model.layers:
        handles.append(layer.register_forward_pre_hook(lambda _m, a: xs.append(a[0][0].detach().clone())))
        handles.append(
            layer.post_attention_layernorm.register_forward_pre_hook(
                lambda _m, a: mids.append(a[0][0].detach().clone())
            )
        )
    try:
        with torch.no_grad():
            out = model(input_ids=torch.tensor([list(ids)]), output_attentions=True, output_hidden_states=True)
    finally:
        for h in handles:
            h.remove()
    t = len(ids)
    layers = []
    with torch.no_grad():
        for index, layer in enumerate(model.model.layers):
            x, mid = xs[index], mids[index]
            x_out = out.hidden_states[index + 1][0] if index + 1 < len(model.model.layers) else None
            alpha = out.attentions[index][0]  # (H, T, T)
            attn = layer.self_attn
            v = attn.v_proj(layer.input_layernorm(x)).view(t, n_kv, d)  # (T, KV, D)
            w_o = attn.o_proj.weight  # (hidden, H * D)
            f = torch.stack(
                [v[:, h // (n_heads // n_kv)] @ w_o[:, h * d : (h + 1) * d].T for h in range(n_heads)], dim=1
            )  # (T, H, hidden): f_h(x_j)
            parts = alpha.permute(1, 2, 0)[..., None] * f[None]  # (T, T, H, hidden): [i, j, h]
            bias = attn.o_proj.bias
            y = x + parts.sum(dim=(1, 2)) + (0 if bias is None else bias)  # (T, hidden)
            grouped = torch.stack([parts[:, list(g)].sum(1) for g in groups], dim=1)  # (T, G, H, hidden)
            if not heads:
                grouped = grouped.sum(2)  # (T, G, hidden)
            y_b = y.view(t, 1, *([1] if heads else []), -1)
            src = _proximity(y_b, grouped)
            res = _proximity(y, x)
            total = res + src.reshape(t, -1).sum(-1) + (0 if bias is None else _proximity(y, bias.expand_as(y)))
            mlp_out = layer.mlp(layer.post_attention_layernorm(mid))
            y2 = mid + mlp_out
            p_mid, p_mlp = _proximity(y2, mid), _proximity(y2, mlp_out)
            layers.append(
                Layer(
                    residual=res / total,
                    sources=src / total.view(t, 1, *([1] if heads else [])),
                    mid=p_mid / (p_mid + p_mlp),
                    mlp=p_mlp / (p_mid + p_mlp),
                    attention_error=(y - mid).abs().amax(-1),
                    mlp_error=torch.zeros(t) if x_out is None else (y2 - x_out).abs().amax(-1),
                )
            )
    return layers


def walk(
    layers: Sequence[Layer], pos: int, groups: Sequence[Sequence[int]], threshold: float, heads: bool
) -> set[tuple[int, str, str, int | None, int, int | None]]:
    """The (layer, kind, block, from, to, head) of every part above ``threshold`` the walk from ``pos`` reaches."""
    out: set[tuple[int, str, str, int | None, int, int | None]] = set()
    reached = {pos}
    for index in reversed(range(len(layers))):
        lay = layers[index]
        mids = set()
        for i in reached:
            if lay.mlp[i] > threshold:
                out.add((index, "mlp", "mlp", i, i, None))
            if lay.mid[i] > threshold:
                out.add((index, "residual", "mlp", i, i, None))
            if lay.mlp[i] > threshold or lay.mid[i] > threshold:
                mids.add(i)
        reached = set()
        for i in mids:
            if lay.residual[i] > threshold:
                out.add((index, "residual", "attention", i, i, None))
                reached.add(i)
            for g, members in enumerate(groups):
                inside = [j for j in members if j <= i]
                if not inside:
                    continue
                source = max(inside)
                if heads:
                    for h in range(lay.sources.shape[2]):
                        if lay.sources[i, g, h] > threshold:
                            out.add((index, "attention", "attention", source, i, h))
                            reached.add(source)
                elif lay.sources[i, g] > threshold:
                    out.add((index, "attention", "attention", source, i, None))
                    reached.add(source)
    return out


def value(layers: Sequence[Layer], groups: Sequence[Sequence[int]], edge: Any) -> float:
    """The reference importance of one edge of a FlowResult."""
    lay = layers[edge.layer]
    if edge.kind == "mlp":
        return float(lay.mlp[edge.to])
    if edge.kind == "residual":
        return float(lay.mid[edge.to] if edge.block == "mlp" else lay.residual[edge.to])
    g = next(n for n, members in enumerate(groups) if edge.from_ in members)
    cell = lay.sources[edge.to, g]
    return float(cell if edge.head is None else cell[edge.head])
