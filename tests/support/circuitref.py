"""An independent edge-level forward of a Qwen2 model, for the circuit tests.

Written by hand from the weights (RMSNorm, RoPE, causal softmax attention with GQA, SwiGLU), it
uses no hook and no attnscope code: every downstream input is built as the sum of its upstream
outputs, each edge with a gate ``alpha`` between its output in this run (0) and its output in a
given corrupt run (1), plus the o_proj biases of the layers before. The K and V inputs are per KV
head (``gqa``) or per query head (``mib``). Then

- edge patching of a circuit is ``alpha = 1`` outside it, ``0`` inside;
- the EAP score of an edge is ``-d metric / d alpha`` at ``alpha = 0``, i.e. (clean - corrupt
  output) . gradient at the input, by autograd through this forward.
"""

from __future__ import annotations

from typing import Any

import torch

Tensor = torch.Tensor


def _norm(x: Tensor, weight: Tensor, eps: float) -> Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def _rope(x: Tensor, theta: float) -> Tensor:
    """x (B, T, D) rotated by position."""
    t, d = x.shape[1], x.shape[2]
    inv = 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
    angles = torch.arange(t, dtype=torch.float32)[:, None] * inv[None]  # (T, D/2)
    cos, sin = torch.cat([angles, angles], -1).cos(), torch.cat([angles, angles], -1).sin()
    half = torch.cat([-x[..., d // 2 :], x[..., : d // 2]], -1)
    return x * cos + half * sin


class Reference:
    """The edge-gated forward of ``model`` for graph ``kind`` (node order as attnscope's graph)."""

    def __init__(self, model: Any, kind: str) -> None:
        self.model, self.kind = model, kind
        c = model.config
        self.L, self.H, self.KV = c.num_hidden_layers, c.num_attention_heads, c.num_key_value_heads
        self.D = c.hidden_size // self.H
        self.eps = c.rms_norm_eps
        self.theta = float(c.rope_parameters["rope_theta"])
        self.up = ["input"] + [
            f"{n}" for l_ in range(self.L) for n in [*(f"a{l_}.h{h}" for h in range(self.H)), f"m{l_}"]
        ]
        self.down: list[tuple[str, str, int]] = []  # (node, input, n_up)
        for layer in range(self.L):
            n_up = 1 + layer * (self.H + 1)
            self.down += [(f"a{layer}.h{h}", "q", n_up) for h in range(self.H)]
            for kind_ in ("k", "v"):
                if kind == "gqa":
                    self.down += [(f"a{layer}.kv{g}", kind_, n_up) for g in range(self.KV)]
                else:
                    self.down += [(f"a{layer}.h{h}", kind_, n_up) for h in range(self.H)]
            self.down.append((f"m{layer}", "mlp", n_up + self.H))
        self.down.append(("logits", "logits", len(self.up)))
        self.edges = [(self.up[u], node, inp) for node, inp, n_up in self.down for u in range(n_up)]

    def run(self, ids: Tensor, corrupt: list[Tensor] | None, alpha: Tensor) -> tuple[Tensor, list[Tensor]]:
        """(logits (B, T, vocab), every upstream output (B, T, hidden)) with edge gates ``alpha`` (E,)."""
        m = self.model.model
        outs: list[Tensor] = [m.embed_tokens.weight[ids]]
        edge = 0
        bias = torch.zeros(outs[0].shape[-1])

        def inputs(n_up: int) -> Tensor:
            nonlocal edge
            a = alpha[edge : edge + n_up].view(-1, 1, 1, 1)
            edge += n_up
            cur = torch.stack(outs[:n_up])  # (n_up, B, T, hidden)
            mixed = cur if corrupt is None else cur + a * (torch.stack(corrupt[:n_up]) - cur)
            return mixed.sum(0) + bias

        for layer in range(self.L):
            block = m.layers[layer]
            attn = block.self_attn
            n_up = 1 + layer * (self.H + 1)
            w1 = block.input_layernorm.weight
            qs = [inputs(n_up) for _ in range(self.H)]
            n_kv = self.KV if self.kind == "gqa" else self.H
            ks = [inputs(n_up) for _ in range(n_kv)]
            vs = [inputs(n_up) for _ in range(n_kv)]
            d = self.D
            for h in range(self.H):
                g = h // (self.H // self.KV)
                kv_in = g if self.kind == "gqa" else h
                q = (
                    _norm(qs[h], w1, self.eps) @ attn.q_proj.weight[h * d : (h + 1) * d].T
                    + attn.q_proj.bias[h * d : (h + 1) * d]
                )
                k = (
                    _norm(ks[kv_in], w1, self.eps) @ attn.k_proj.weight[g * d : (g + 1) * d].T
                    + attn.k_proj.bias[g * d : (g + 1) * d]
                )
                v = (
                    _norm(vs[kv_in], w1, self.eps) @ attn.v_proj.weight[g * d : (g + 1) * d].T
                    + attn.v_proj.bias[g * d : (g + 1) * d]
                )
                q, k = _rope(q, self.theta), _rope(k, self.theta)
                scores = q @ k.transpose(1, 2) / d**0.5  # (B, T, T)
                t = scores.shape[-1]
                scores = scores.masked_fill(~torch.ones(t, t, dtype=torch.bool).tril(), float("-inf"))
                z = scores.softmax(-1) @ v  # (B, T, D)
                outs.append(z @ attn.o_proj.weight[:, h * d : (h + 1) * d].T)
            if attn.o_proj.bias is not None:
                bias = bias + attn.o_proj.bias
            x = _norm(inputs(n_up + self.H), block.post_attention_layernorm.weight, self.eps)
            mlp = block.mlp
            outs.append(mlp.down_proj(torch.nn.functional.silu(mlp.gate_proj(x)) * mlp.up_proj(x)))
        final = _norm(inputs(len(self.up)), m.norm.weight, self.eps)
        return self.model.lm_head(final), outs

    def metric(self, logits: Tensor, target: Tensor, foil: Tensor) -> Tensor:
        last = logits[:, -1]
        rows = torch.arange(last.shape[0])
        return last[rows, target] - last[rows, foil]

    def eap(self, clean: Tensor, corrupt: Tensor, target: Tensor, foil: Tensor) -> Tensor:
        """(E,) EAP scores summed over the batch, by autograd through the gates."""
        with torch.no_grad():
            _, corrupt_outs = self.run(corrupt, None, torch.zeros(len(self.edges)))
        alpha = torch.zeros(len(self.edges), requires_grad=True)
        logits, _ = self.run(clean, corrupt_outs, alpha)
        (grad,) = torch.autograd.grad(self.metric(logits, target, foil).sum(), alpha)
        return -grad

    def patched(self, clean: Tensor, corrupt: Tensor, target: Tensor, foil: Tensor, keep: Tensor) -> Tensor:
        """(B,) the metric with the edges of ``keep`` (E,) bool from the clean run, the rest corrupt."""
        with torch.no_grad():
            _, corrupt_outs = self.run(corrupt, None, torch.zeros(len(self.edges)))
            logits, _ = self.run(clean, corrupt_outs, (~keep).float())
        return self.metric(logits, target, foil)
