"""An independent reference for ``flow``: every part of every sum materialised, from plain transformers.

The model runs once with eager attention and ``output_attentions``; hooks read each layer's input,
the middle of the layer (what the MLP's input norm receives, or the MLP itself) and, where a
block's output is normed before it is added (``ARRANGEMENTS``: Gemma 2/3, OLMo 2/3, GLM-4,
EXAONE 4), the post norm's real input and output. The value vectors are recomputed by hand from
the layer's weights (``v_proj(input_layernorm(x))``, ``v_proj(x)`` without an input norm), each
head's part ``alpha_ij^h v_j^(h // groups) W_O^h`` is built for every (i, j, h) at once as a
(T, T, H, hidden) tensor, and the proximities follow the definition. A post norm is written out by
hand as the RMSNorm of its modeling file, ``gain * o / sqrt(mean(o²) + eps)`` (gain ``1 + weight``
in Gemma), checked against the module's real output, and its per-position scale at the real input
multiplies every part of that position. The walk from the prediction is done again on these
numbers. No attnscope code runs here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from transformers import AutoModelForCausalLM

# model_type -> the layer's norms (attention input, attention output, MLP input, MLP output), as the
# modeling files of transformers 5 call them; None where there is none. Others: the pre-norm layout.
PRE = ("input_layernorm", None, "post_attention_layernorm", None)
_GEMMA = ("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm", "post_feedforward_layernorm")
_OLMO = (None, "post_attention_layernorm", None, "post_feedforward_layernorm")
ARRANGEMENTS: dict[str, tuple[str | None, str | None, str | None, str | None]] = {
    "gemma2": _GEMMA,
    "gemma3_text": _GEMMA,
    "olmo2": _OLMO,
    "olmo3": _OLMO,
    "exaone4": _OLMO,
    "glm4": ("input_layernorm", "post_self_attn_layernorm", "post_attention_layernorm", "post_mlp_layernorm"),
}


def _rms(module: Any, model_type: str, o: torch.Tensor) -> torch.Tensor:
    """(T, hidden) -> (T, hidden): the diagonal map of the post norm ``module`` at each position,
    gain / sqrt(mean(o²) + eps), with the scale of its real input ``o``."""
    eps = getattr(module, "eps", None) or module.variance_epsilon
    gain = module.weight.float() + (1.0 if model_type.startswith("gemma") else 0.0)
    return gain * torch.rsqrt(o.float().pow(2).mean(-1, keepdim=True) + eps)


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
    attn_in, attn_post, mlp_in, mlp_post = ARRANGEMENTS.get(cfg.model_type, PRE)
    seen: dict[tuple[int, str], torch.Tensor] = {}
    handles = []

    def keep(index: int, what: str, module: Any, output: bool) -> None:
        def hook(_m: Any, a: Any, out: Any = None) -> None:
            got = (out[0] if isinstance(out, tuple) else out) if output else a[0]
            seen[index, what] = got[0].detach().clone()

        handles.append(module.register_forward_hook(hook) if output else module.register_forward_pre_hook(hook))

    for index, layer in enumerate(model.model.layers):
        keep(index, "x", layer, False)
        keep(index, "mid", getattr(layer, mlp_in) if mlp_in else layer.mlp, False)
        keep(index, "mlp_out", layer.mlp, True)
        for what, name in (("attn_post", attn_post), ("mlp_post", mlp_post)):
            if name:
                keep(index, f"{what}_in", getattr(layer, name), False)
                keep(index, f"{what}_out", getattr(layer, name), True)
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
            x, mid = seen[index, "x"], seen[index, "mid"]
            post = {}  # the post norms' maps at each position (T, hidden), checked against the module
            for what, name in (("attn_post", attn_post), ("mlp_post", mlp_post)):
                if name:
                    o = seen[index, f"{what}_in"]
                    post[what] = _rms(getattr(layer, name), cfg.model_type, o)
                    assert torch.allclose(post[what] * o, seen[index, f"{what}_out"], atol=1e-5, rtol=1e-5)
            x_out = out.hidden_states[index + 1][0] if index + 1 < len(model.model.layers) else None
            alpha = out.attentions[index][0]  # (H, T, T)
            attn = layer.self_attn
            normed = getattr(layer, attn_in)(x) if attn_in else x
            v = attn.v_proj(normed).view(t, n_kv, d)  # (T, KV, D)
            w_o = attn.o_proj.weight  # (hidden, H * D)
            f = torch.stack(
                [v[:, h // (n_heads // n_kv)] @ w_o[:, h * d : (h + 1) * d].T for h in range(n_heads)], dim=1
            )  # (T, H, hidden): f_h(x_j)
            parts = alpha.permute(1, 2, 0)[..., None] * f[None]  # (T, T, H, hidden): [i, j, h]
            bias = attn.o_proj.bias
            if "attn_post" in post:  # query position i's parts through its frozen post norm
                parts = parts * post["attn_post"][:, None, None, :]
                bias = None if bias is None else post["attn_post"] * bias  # (T, hidden)
            y = x + parts.sum(dim=(1, 2)) + (0 if bias is None else bias)  # (T, hidden)
            grouped = torch.stack([parts[:, list(g)].sum(1) for g in groups], dim=1)  # (T, G, H, hidden)
            if not heads:
                grouped = grouped.sum(2)  # (T, G, hidden)
            y_b = y.view(t, 1, *([1] if heads else []), -1)
            src = _proximity(y_b, grouped)
            res = _proximity(y, x)
            total = res + src.reshape(t, -1).sum(-1) + (0 if bias is None else _proximity(y, bias.expand_as(y)))
            mlp_out = seen[index, "mlp_out"]
            if "mlp_post" in post:
                mlp_out = post["mlp_post"] * mlp_out
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
