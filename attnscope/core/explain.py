"""One head's scaled dot-product attention for one query, recomputed by hand from the layer's input.

``explain`` takes the hidden states the layer's attention received (a pre-hook, via
``core.rotary.project``) and recomputes q, k and v itself: ``q_proj``/``k_proj``/``v_proj``
of that input (q and k through the layer's own ``q_norm``/``k_norm`` where it has them, as
Qwen 3 and Gemma 3 do), then the model's own RoPE (its ``rotary_emb`` cos/sin at positions
0..T-1, applied with the modeling module's own ``apply_rotary_pos_emb``). It then follows
the note's pseudo-code for one query position i and one query head h: scores_j = q_i . k_j
for j <= i using KV head h // groups, scaled by the module's ``scaling`` (1/sqrt(d)),
later positions masked, softmax, and out = sum_j w_j v_j.

Every check compares two independent computations: the recomputed q and k against the
post-RoPE q and k the model handed its attention function; the recomputed weights against
the row the capture engine computed from the model's own q and k; ``out`` against the
model's own attention output (sdpa) for that head. Only ``rows_sum_to_one`` is arithmetic
(true by the softmax's construction; shown, and it can fail only on NaN/inf).

It does not handle padded batches (one sequence only) and does not print.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import torch

from attnscope.capture import anatomy, masking
from attnscope.core.common import attention_layers, tolerance
from attnscope.core.prompt.params import EXPLAIN_PARAMS, validate
from attnscope.core.prompt.spec import ChatSpec, QuerySpec, one
from attnscope.core.prompt.tokens import check_length, encode_prompt, pick_query
from attnscope.core.rotary import attention_module, cos_sin, project, rotate
from attnscope.errors import AttnscopeError
from attnscope.model import Loaded
from attnscope.results.common import ResultWarning
from attnscope.results.explain import Check, ExplainResult, RopeEvidence

Rope = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]


def model_rope(attn: Any) -> Rope:
    """The modeling module's own ``apply_rotary_pos_emb(q, k, cos, sin)`` (ours written out if it has none)."""
    fn = getattr(sys.modules.get(type(attn).__module__), "apply_rotary_pos_emb", None)
    if callable(fn):
        return lambda q, k, cos, sin: fn(q, k, cos, sin)  # type: ignore[no-any-return]
    return lambda q, k, cos, sin: (rotate(q, cos[:, None], sin[:, None]), rotate(k, cos[:, None], sin[:, None]))


def _allowed(mask: torch.Tensor | None, query_pos: int, n_keys: int) -> torch.Tensor:
    """(T,) bool: which keys the model's own mask lets the query see."""
    if mask is None:  # sdpa's is_causal path: plain causal
        return torch.arange(n_keys) <= query_pos
    return masking.allows(mask[0, 0, query_pos, :n_keys]).cpu()  # (T,)


def _check(name: str, kind: str, value: float, limit: float) -> Check:
    return Check(name=name, kind=kind, value=value, limit=limit, ok=value <= limit)  # type: ignore[arg-type]


def explain(
    loaded: Loaded,
    prompt: str,
    *,
    layer: int,
    head: int,
    query: QuerySpec = None,
    chat: ChatSpec | None = None,
    dims: int = 4,
) -> ExplainResult:
    """One head's scaled dot-product attention for one query, step by step, checked against the model
    (``dims``: how many dims of q, k_j and out to keep)."""
    validate(EXPLAIN_PARAMS, dims=dims)
    info = loaded.info
    (li,) = attention_layers(info, [one(layer, info.num_hidden_layers, "layer")])
    hi = one(head, info.num_attention_heads, "head")
    enc = encode_prompt(loaded.tokenizer, prompt, chat)
    check_length(len(enc.ids), anatomy.of(loaded.model).max_positions)
    warnings: list[ResultWarning] = []
    q_sel = pick_query(enc, query, warnings)
    i = q_sel.index
    attn = attention_module(loaded.model, li, "explain")
    if getattr(attn, "attn_logit_softcapping", None) is not None or isinstance(
        getattr(attn, "sinks", None), torch.Tensor
    ):
        raise AttnscopeError("explain_softmax", layer=li, model_type=info.model_type)
    proj = project(loaded.model, enc.ids, li, [i])
    n_heads, n_kv = proj.q.shape[0], proj.k.shape[0]
    groups = n_heads // n_kv
    kv = hi // groups
    n_tok = proj.k.shape[1]

    # q, k, v recomputed from the layer's input: projections, then the model's own RoPE.
    cos, sin = cos_sin(loaded.model, list(range(n_tok)), li)  # each (T, D), from rotary_emb
    q_re, k_re = model_rope(attn)(
        proj.q_pre[None], proj.k_pre[None], cos[None], sin[None]
    )  # (1, H, T, D), (1, KV, T, D)
    q = q_re[0, hi, i]  # (D,)
    k_all = k_re[0, kv]  # (T, D)
    v_all = proj.v_pre[kv]  # (T, D): v_proj(x), not rotated
    scores_all = k_all @ q  # (T,): q . k_j for every key, later ones included
    scaled_all = scores_all * proj.scaling
    allowed = _allowed(proj.mask, i, n_tok)
    weights_all = torch.softmax(scaled_all.masked_fill(~allowed, float("-inf")), dim=-1)  # (T,)
    captured_all = proj.rows[hi, 0]  # (T,)
    keys = [j for j in range(n_tok) if bool(allowed[j])]
    masked = [j for j in range(n_tok) if not bool(allowed[j])]
    out = weights_all[keys] @ v_all[keys]  # (D,) = sum_j w_j v_j
    model_out = proj.output[i, hi]  # (D,)

    seen = torch.tensor(keys)
    rot_q = rotate(proj.q_pre[hi], proj.cos, proj.sin)  # (T, D)
    rot_k = rotate(proj.k_pre[kv], proj.cos, proj.sin)  # (T, D)
    evidence = RopeEvidence(
        q_pre_vs_post=float((proj.q_pre[hi, i] - q).abs().max()),
        q_rotated_vs_post=float((rot_q[i] - q).abs().max()),
        k_pre_vs_post=float((proj.k_pre[kv, seen] - k_all[seen]).abs().max()),
        k_rotated_vs_post=float((rot_k[seen] - k_all[seen]).abs().max()),
        v_pre_vs_post=float((proj.v_pre[kv, seen] - v_all[seen]).abs().max()),
    )
    max_diff_weights = float((weights_all - captured_all).abs().max())
    max_diff_out = float((out - model_out).abs().max())
    masked_captured_max = float(captured_all[masked].abs().max()) if masked else 0.0
    tol = tolerance(next(loaded.model.parameters()).dtype)
    q_scale = max(1.0, float(proj.q[hi, i].abs().max()))
    k_scale = max(1.0, float(proj.k[kv, seen].abs().max()))
    v_scale = max(1.0, float(v_all.abs().max()))
    checks = [
        _check("q_recomputed", "independent", float((q - proj.q[hi, i]).abs().max()), tol * q_scale),
        _check("k_recomputed", "independent", float((k_all[seen] - proj.k[kv, seen]).abs().max()), tol * k_scale),
        _check("v_recomputed", "independent", float((v_all[seen] - proj.v[kv, seen]).abs().max()), tol * v_scale),
        _check("weights", "independent", max_diff_weights, tol),
        _check("out", "independent", max_diff_out, tol * v_scale),
        _check("masked_keys", "independent", masked_captured_max, 0.0),
        _check("rows_sum_to_one", "arithmetic", abs(float(weights_all[seen].sum()) - 1.0), tol),
    ]
    ok = all(c.ok for c in checks)
    return ExplainResult(
        model=info,
        text=enc.text,
        chat=enc.chat,
        tokens=enc.tokens,
        query=q_sel,
        layer=li,
        head=hi,
        kv_head=kv,
        shared_heads=list(range(kv * groups, (kv + 1) * groups)),
        head_dim=int(q.shape[0]),
        scaling=proj.scaling,
        keys=keys,
        q=q.tolist(),
        k=k_all[seen].tolist(),
        v=v_all[seen].tolist(),
        scores=scores_all[seen].tolist(),
        scaled=scaled_all[seen].tolist(),
        masked=masked,
        masked_captured_max=masked_captured_max,
        weights=weights_all[seen].tolist(),
        captured=captured_all[seen].tolist(),
        out=out.tolist(),
        model_out=model_out.tolist(),
        max_diff_weights=max_diff_weights,
        max_diff_out=max_diff_out,
        rope=evidence,
        qk_norm=proj.qk_norm,
        tolerance=tol,
        ok=ok,
        checks=checks,
        dims=dims,
        warnings=warnings,
    )
