"""The ``flow`` computation: information-flow routes to a prediction (Ferrando & Voita 2024).

One forward keeps, for every layer, what the decomposition needs and nothing of size T x T:
the layer's input ``x`` (T, hidden), the attention block's output and the MLP's output, and the
post-RoPE q, k and the v that the attention function received, with the layer's softmax settings
and mask (the hook points ``resid_pre``, ``attn_out``, ``mlp_out``, ``q``, ``k``, ``v`` of ``capture.hooks``). The
attention rows of any query positions are then recomputed exactly by
``capture.engine.attention_rows``, and the value vectors through o_proj,
``f_h(x_j) = v_j^(h // groups) W_O^h`` (GQA as in ``capture.norm``), from the kept v.

Where a block's output is normed before it is added (Gemma 2/3's sandwich, OLMo 2's post norms:
``x_mid = x + P(o)``), the norm ``P`` is an RMS norm ``gain * o / rms(o)`` (``capture.anatomy.RmsNorm``)
whose one scale per position, ``1 / rms(o_i)``, is frozen at the value of the real forward (``o`` is the
kept ``attn_out`` or ``mlp_out``, the norm's own input). At position i it is then the diagonal map
``d_i = gain * scale_i``, and ``P(o_i) = Σ_j d_i * alpha_ij f(x_j) + d_i * bias`` exactly: each part is
scaled by its query position's ``d_i``, as the pre-norm's scale is already inside the kept v. The
completeness check compares the parts with the model's own ``x_mid`` (``resid_mid``) there.

The walk runs from the top: the prediction's position after the last layer is reached; at each
layer, from the last down, the MLP sums of the reached positions are decomposed, then the
attention sums of the positions their kept parts reach, and the attention parts above the
threshold name the positions reached at the layer's input. Only reached positions are
decomposed. Parts are computed in blocks of query positions and sources (``chunk`` floats a
block), so no layer ever holds its (query, source, head, hidden) parts at once.

This module does not load models and does not print.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from attnscope.capture import anatomy, engine, hooks, memory, norm
from attnscope.core.causal.stack import Row, Stack, cut, sweeps, unsupported
from attnscope.core.prompt.params import FLOW_PARAMS, validate
from attnscope.core.prompt.spec import ChatSpec
from attnscope.core.prompt.targets import Answer, resolve_metric
from attnscope.core.prompt.tokens import check_length, encode_prompt, query_at
from attnscope.errors import AttnscopeError
from attnscope.model import Loaded
from attnscope.results.common import Metric
from attnscope.results.derive import flow_numbers, ranked_edges
from attnscope.results.flow import Edge, FlowBy, FlowResult, LayerCheck, VerifiedEdge

CHUNK = 1 << 22  # floats in one block of parts: (queries, sources[, heads], hidden)
TOLERANCE = 1e-4  # completeness: the parts of a sum add back to it within this (fp32)


def layout_problem(model: Any) -> AttnscopeError | None:
    """Why the model's layers are not ``x_mid = x + attn(norm(x))``, ``x_out = x_mid + mlp(norm(x_mid))``
    (the layout the decomposition needs), or None when they are (``capture.anatomy``)."""
    return anatomy.of(model).flow_problem()


@dataclass
class Kept:
    """One forward's per-layer activations, each (T, ...) on the CPU."""

    x: list[torch.Tensor]  # x[l]: the input of layer l, (T, hidden); x[L] the last layer's output
    attn: list[torch.Tensor]  # the attention block's output, (T, hidden)
    mlp: list[torch.Tensor]  # the MLP block's output, (T, hidden)
    qkv: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]  # post-RoPE q (1, H, T, D), k and v (1, KV, T, D)
    settings: dict[int, engine.Settings]  # each layer's softmax settings
    masks: dict[int, torch.Tensor | None]  # the mask each layer handed its attention
    mid: list[torch.Tensor] | None = None  # the model's own x_mid (T, hidden) per layer, where blocks are post-normed
    attn_post: list[Frozen | None] | None = None  # the norm on each layer's attention output, frozen
    mlp_post: list[Frozen | None] | None = None  # the norm on each layer's MLP output, frozen


@dataclass(frozen=True)
class Frozen:
    """A post-block norm with the scale of each position frozen at the forward's: at position i it
    is the diagonal map ``gain * scale[i]`` on the block's output (``capture.anatomy.RmsNorm``)."""

    gain: torch.Tensor  # (hidden,)
    scale: torch.Tensor  # (T, 1): 1 / rms of the block's real output at each position

    def at(self, positions: Sequence[int]) -> torch.Tensor:
        """(P, hidden): the map at each of ``positions``."""
        return self.gain * self.scale[list(positions)]


def kept_bytes(
    n_layers: int,
    tokens: int,
    hidden: int,
    n_heads: int,
    n_kv: int,
    head_dim: int,
    chunk: int,
    heads: bool,
    post: bool = False,
) -> int:
    """What :func:`forward` keeps (fp32) for ``tokens`` tokens, plus the largest block of parts and its
    copies; ``post``: the blocks are post-normed, and x_mid is kept too."""
    per_token = n_layers * ((4 if post else 3) * hidden + n_heads * head_dim + 2 * n_kv * head_dim) + hidden
    block = min(chunk, tokens * tokens * (n_heads if heads else 1) * hidden)
    return (per_token * tokens + 4 * block) * memory.FP32


def guard(loaded: Loaded, tokens: int, chunk: int, heads: bool) -> None:
    """Refuse a prompt whose kept activations do not fit, saying how many tokens would."""
    body = anatomy.of(loaded.model)
    shape = (body.n_layers, body.hidden, body.n_heads, body.n_kv, body.head_dim)
    post = _post_normed(body)

    def need(n: int) -> int:
        return kept_bytes(shape[0], n, *shape[1:], chunk, heads, post)

    room = memory.budget("cpu")
    if room is None or need(tokens) <= room:
        return
    low, high = 0, tokens  # need(low) fits (or low is 0), need(high) does not
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if need(mid) <= room else (low, mid)
    raise AttnscopeError(
        "flow_memory",
        arg="pos",
        tokens=tokens,
        need=memory.fmt_bytes(need(tokens)),
        room=memory.fmt_bytes(room),
        fits=low,
    )


def _post_normed(body: anatomy.Anatomy) -> bool:
    """Whether some layer norms a block's output before adding it (Gemma 2/3, OLMo 2, GLM-4)."""
    return any(layer.norms.attn_post is not None or layer.norms.mlp_post is not None for layer in body.layers)


def forward(model: Any, ids: Sequence[int]) -> Kept:
    """One forward over ``ids`` with every layer's input, block outputs and q/k/v kept (``capture.hooks``);
    where blocks are post-normed, also each layer's x_mid and each post norm with its scales frozen."""
    body = anatomy.of(model)
    n = body.n_layers
    post = _post_normed(body)
    names = [f"{point}.*" for point in ("resid_pre", "attn_out", "mlp_out", "q", "k", "v", *(["resid_mid"] * post))]
    input_ids = torch.tensor([list(ids)])  # (1, T)
    run = hooks.capture(body, input_ids, torch.ones_like(input_ids), [*names, f"resid_post.{n - 1}"], cpu=True)

    def every(point: str) -> list[torch.Tensor]:
        return [run[f"{point}.{layer}"][0] for layer in range(n) if f"{point}.{layer}" in run.values]

    xs, attn, mlp = every("resid_pre"), every("attn_out"), every("mlp_out")
    if not (len(xs) == len(attn) == len(mlp) == n and f"resid_post.{n - 1}" in run.values):
        raise AttnscopeError("flow_split")
    qkv = [(run[f"q.{layer}"], run[f"k.{layer}"], run[f"v.{layer}"]) for layer in range(n)]
    kept = Kept(
        x=[*xs, run[f"resid_post.{n - 1}"][0]], attn=attn, mlp=mlp, qkv=qkv, settings=run.settings, masks=run.masks
    )
    if post:
        mids = every("resid_mid")
        if len(mids) != n:
            raise AttnscopeError("flow_split")
        norms = [body.post_norms(layer) for layer in range(n)]
        kept.mid = mids
        kept.attn_post = [_frozen(a, attn[layer]) for layer, (a, _) in enumerate(norms)]
        kept.mlp_post = [_frozen(m, mlp[layer]) for layer, (_, m) in enumerate(norms)]
    return kept


def _frozen(norm: anatomy.RmsNorm | None, out: torch.Tensor) -> Frozen | None:
    """The post norm with its scales frozen at those of the block's real output ``out`` (T, hidden)."""
    return None if norm is None else Frozen(norm.gain, norm.scale(out))


@dataclass
class AttentionParts:
    """The attention sums of some positions split into parts: importances and the completeness check."""

    residual: torch.Tensor  # (P,)
    sources: torch.Tensor  # (P, G) or with heads (P, G, H): one per source group (and head)
    bias: torch.Tensor | None  # (P,), where o_proj has a bias
    error: float  # max |x + sum of the parts - (x + the block's output)|
    scale: float  # max |x + the block's output|


def _proximity(y_norm: torch.Tensor, rest: torch.Tensor) -> torch.Tensor:
    """max(||y||_1 - ||y - z||_1, 0), with ``rest`` = ||y - z||_1."""
    return (y_norm - rest).clamp_min(0.0)


def _blocks(n: int, size: int) -> list[range]:
    size = max(1, size)
    return [range(a, min(n, a + size)) for a in range(0, n, size)]


@dataclass(frozen=True)
class _Sources:
    """One layer's fixed inputs of the source parts: the kept v (1, KV, T, D), o_proj's columns
    per head ``w`` (H, hidden, D), the KV head each query head reads, and the source groups."""

    v: torch.Tensor
    w: torch.Tensor
    kv_of: torch.Tensor
    groups: Sequence[Sequence[int]]
    owner: dict[int, int]
    heads: bool

    def parts(
        self, rows: torch.Tensor, y: torch.Tensor, y_norm: torch.Tensor, gs: list[int], post: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The parts of the groups ``gs`` for the sums ``y`` (P, hidden), with rows (1, H, P, T): their
        sum over the groups (P, hidden) and their importances (P, len(gs)[, H]). ``post`` (P, hidden):
        the frozen post norm at each query position, which scales its parts (None: no post norm)."""
        tokens = [j for g in gs for j in self.groups[g]]
        place = {g: n for n, g in enumerate(gs)}
        local = torch.tensor([place[self.owner[j]] for j in tokens]) if len(tokens) > len(gs) else None
        values = self.v[0][self.kv_of][:, tokens].float()  # (H, J, D): the KV head each query head reads
        f = torch.einsum("hjd,hod->jho", values, self.w)  # (J, H, hidden): f_h(x_j)
        alpha = rows[0][:, :, tokens]  # (H, P, J)
        if self.heads:
            z = alpha.permute(1, 2, 0)[..., None] * f[None]  # (P, J, H, hidden)
        else:
            z = torch.einsum("hpj,jho->pjo", alpha, f)  # (P, J, hidden)
        extra = [1] if self.heads else []
        if post is not None:  # (P, hidden) -> (P, 1[, 1], hidden): a query position's parts scaled alike
            z = z * post.view(post.shape[0], 1, *extra, post.shape[-1])
        if local is not None:  # a word's tokens summed into one part
            z = torch.zeros(y.shape[0], len(gs), *z.shape[2:]).index_add_(1, local, z)
        gap = (y.view(y.shape[0], 1, *extra, y.shape[-1]) - z).abs().sum(-1)
        return z.sum(dim=tuple(range(1, z.dim() - 1))), _proximity(y_norm.view(-1, 1, *extra), gap)


def _block_sizes(chunk: int | None, per_part: int, n_pos: int, n_groups: int) -> tuple[int, int]:
    """Query positions and source groups per block, so that a block holds about ``chunk`` floats."""
    if chunk is None:
        return n_pos, n_groups
    pairs = max(1, chunk // per_part)
    q_size = min(n_pos, max(1, math.isqrt(pairs)))
    return q_size, max(1, pairs // q_size)


def _layer_sources(
    kept: Kept, model: Any, layer: int, groups: Sequence[Sequence[int]], heads: bool
) -> tuple[_Sources, torch.Tensor, torch.Tensor | None]:
    """The layer's source parts' inputs, and o_proj's weight (hidden, H * D) and bias (fp32, CPU)."""
    q, _, v = kept.qkv[layer]
    n_heads, head_dim, n_kv = q.shape[1], v.shape[-1], v.shape[1]
    o_proj, _ = anatomy.head_writer(anatomy.of(model).layers[layer].attn, head_dim, "flow")
    weight = o_proj.weight.detach().float().cpu()
    bias = None if o_proj.bias is None else o_proj.bias.detach().float().cpu()
    w = norm.head_columns(weight, n_heads)  # (H, hidden, D)
    owner = {j: g for g, members in enumerate(groups) for j in members}
    return _Sources(v, w, torch.arange(n_heads) // (n_heads // n_kv), groups, owner, heads), weight, bias


def _bias_and_sum(
    kept: Kept, layer: int, at: list[int], bias: torch.Tensor | None, d: torch.Tensor | None
) -> tuple[torch.Tensor | None, torch.Tensor]:
    """The bias part at positions ``at`` ((hidden,), or (P, hidden) through the post norm ``d``; None
    without a bias) and the model's own attention sums there (P, hidden)."""
    b_part = None if bias is None or d is None else d * bias
    x = kept.x[layer][at].float()
    model_sum = x + kept.attn[layer][at].float() if kept.mid is None else kept.mid[layer][at].float()
    return (bias if d is None else b_part), model_sum


def attention_parts(
    kept: Kept,
    model: Any,
    layer: int,
    positions: Sequence[int],
    groups: Sequence[Sequence[int]],
    heads: bool,
    chunk: int | None = CHUNK,
) -> AttentionParts:
    """Split the attention sums x_mid_i at ``positions`` into the residual, one part per source
    group (its tokens' alpha_ij^h f_h(x_j) summed; per head with ``heads``) and the bias, each
    through the layer's frozen post norm where it has one.

    ``chunk``: the floats of one block of parts; None computes each sum's parts in one block.
    """
    q, k, v = kept.qkv[layer]  # (1, H, T, D), (1, KV, T, D), (1, KV, T, D)
    settings = kept.settings[layer]
    mask = kept.masks.get(layer)
    n_heads = q.shape[1]
    sources, weight, bias = _layer_sources(kept, model, layer, groups, heads)
    w = sources.w
    post = None if kept.attn_post is None else kept.attn_post[layer]
    n_groups = len(groups)
    pos = list(positions)
    q_size, g_size = _block_sizes(chunk, (n_heads if heads else 1) * w.shape[1], len(pos), n_groups)
    first_token = [min(members) for members in groups]
    head_axis = [n_heads] if heads else []
    out_res, out_src, out_bias = [], [], []
    error = scale = 0.0
    for block in _blocks(len(pos), q_size):
        at = [pos[i] for i in block]
        rows = engine.attention_rows(
            q, k, torch.tensor([at]), settings.scaling, mask, settings.sliding_window, settings.softcap, settings.sinks
        )  # (1, H, P, T)
        x = kept.x[layer][at].float()  # (P, hidden)
        d = None if post is None else post.at(at)  # (P, hidden): the post norm at each position
        mixed = norm.mixed(rows, v, weight, bias)[0]  # (P, hidden): the block's output before any post norm
        y = x + (mixed if d is None else d * mixed)  # (P, hidden): the sum of the parts
        y_norm = y.abs().sum(-1)  # (P,)
        res = _proximity(y_norm, (y - x).abs().sum(-1))
        summed = torch.zeros_like(y)
        src = torch.zeros(len(at), n_groups, *head_axis)
        wanted = [g for g in range(n_groups) if first_token[g] <= max(at)]
        for g_block in _blocks(len(wanted), g_size):
            gs = [wanted[i] for i in g_block]
            part_sum, src[:, gs] = sources.parts(rows, y, y_norm, gs, d)
            summed += part_sum
        b_part, model_sum = _bias_and_sum(kept, layer, at, bias, d)
        b = None if b_part is None else _proximity(y_norm, (y - b_part).abs().sum(-1))
        ours = x + summed + (0.0 if b_part is None else b_part)
        error = max(error, float((ours - model_sum).abs().max()))
        scale = max(scale, float(model_sum.abs().max()))
        total = res + src.reshape(len(at), -1).sum(-1) + (0.0 if b is None else b)
        total = torch.where(total > 0, total, torch.ones_like(total))
        out_res.append(res / total)
        out_src.append(src / total.view(-1, 1, *([1] if heads else [])))
        if b is not None:
            out_bias.append(b / total)
    return AttentionParts(
        residual=torch.cat(out_res),
        sources=torch.cat(out_src),
        bias=torch.cat(out_bias) if bias is not None else None,
        error=error,
        scale=scale,
    )


def mlp_parts(kept: Kept, layer: int, positions: Sequence[int]) -> tuple[torch.Tensor, torch.Tensor, float, float]:
    """The MLP sums x_out_i = x_mid_i + MLP(x_mid_i) at ``positions``: the importances of x_mid and of
    the MLP's output (P,) each (through the frozen post norm where the layer has one), the
    completeness error against the layer's output, and its scale."""
    at = list(positions)
    if kept.mid is None:
        mid = kept.x[layer][at].float() + kept.attn[layer][at].float()
    else:
        mid = kept.mid[layer][at].float()
    out = kept.mlp[layer][at].float()
    post = None if kept.mlp_post is None else kept.mlp_post[layer]
    if post is not None:
        out = post.at(at) * out
    y = mid + out
    y_norm = y.abs().sum(-1)
    p_mid, p_mlp = _proximity(y_norm, out.abs().sum(-1)), _proximity(y_norm, mid.abs().sum(-1))
    total = p_mid + p_mlp
    total = torch.where(total > 0, total, torch.ones_like(total))
    model_out = kept.x[layer + 1][at].float()
    return p_mid / total, p_mlp / total, float((y - model_out).abs().max()), float(model_out.abs().max())


def source_groups(words: Sequence[Any], length: int, by: FlowBy) -> list[list[int]]:
    """The source parts: one per token, or one per word (its tokens before ``length``)."""
    if by == "token":
        return [[j] for j in range(length)]
    out = [[j for j in w.tokens if j < length] for w in words]
    return [g for g in out if g]


def walk(
    kept: Kept,
    model: Any,
    pos: int,
    groups: Sequence[Sequence[int]],
    threshold: float,
    heads: bool,
    chunk: int | None = CHUNK,
) -> tuple[list[Edge], list[LayerCheck]]:
    """The edges above ``threshold`` that the walk from ``pos`` after the last layer reaches, and
    each layer's completeness check. A source group stands for its last token up to the query."""
    n_layers = len(kept.attn)
    reached = {pos}
    edges: list[Edge] = []
    checks: list[LayerCheck] = []
    for layer in reversed(range(n_layers)):
        outs = sorted(reached)
        mids: list[int] = []
        mlp_error = mlp_scale = 0.0
        if outs:
            imp_mid, imp_mlp, mlp_error, mlp_scale = mlp_parts(kept, layer, outs)
            for i, a, b in zip(outs, imp_mid.tolist(), imp_mlp.tolist(), strict=True):
                if b > threshold:
                    edges.append(Edge(layer, "mlp", "mlp", i, i, None, b))
                if a > threshold:
                    edges.append(Edge(layer, "residual", "mlp", i, i, None, a))
                if a > threshold or b > threshold:
                    mids.append(i)
        reached = set()
        att_error = att_scale = 0.0
        if mids:
            parts = attention_parts(kept, model, layer, mids, groups, heads, chunk)
            att_error, att_scale = parts.error, parts.scale
            for p, i in enumerate(mids):
                r = float(parts.residual[p])
                if r > threshold:
                    edges.append(Edge(layer, "residual", "attention", i, i, None, r))
                    reached.add(i)
                if parts.bias is not None and float(parts.bias[p]) > threshold:
                    edges.append(Edge(layer, "bias", "attention", None, i, None, float(parts.bias[p])))
                row = parts.sources[p]
                for g in torch.nonzero((row.amax(-1) if heads else row) > threshold).flatten().tolist():
                    source = max(j for j in groups[g] if j <= i)
                    if heads:
                        for h in torch.nonzero(row[g] > threshold).flatten().tolist():
                            edges.append(Edge(layer, "attention", "attention", source, i, h, float(row[g, h])))
                    else:
                        edges.append(Edge(layer, "attention", "attention", source, i, None, float(row[g])))
                    reached.add(source)
        checks.append(
            LayerCheck(
                layer=layer,
                attention=mids,
                mlp=outs,
                attention_error=att_error,
                mlp_error=mlp_error,
                scale=max(att_scale, mlp_scale),
            )
        )
    return edges, checks[::-1]


def verify(
    loaded: Loaded,
    ids: Sequence[int],
    edges: Sequence[Edge],
    groups: Sequence[Sequence[int]],
    prediction: Metric,
    top: int,
    batch: int,
) -> tuple[float, list[VerifiedEdge]]:
    """Knock out each of the ``top`` most important attention edges in its own layer (every head, or
    the edge's head): the baseline log P(prediction) and each knockout's log-prob. An edge whose
    knockout would leave its query no key at all is left out."""
    stack = Stack(loaded.model, ids)
    baseline = stack.baseline(prediction)
    owner = {j: g for g, members in enumerate(groups) for j in members}
    chosen: list[tuple[Edge, list[int]]] = []
    for e in ranked_edges(edges):
        assert e.from_ is not None
        sources = [j for j in groups[owner[e.from_]] if j <= e.to]
        if len(sources) == e.to + 1:  # every key of the query: nothing would be left to attend to
            continue
        chosen.append((e, sources))
        if len(chosen) == top:
            break
    all_heads = list(range(stack.n_heads))
    rows = [
        Row(
            start=e.layer,
            hidden=stack.residual[e.layer][0],
            cuts={e.layer: cut(stack, [e.to], sources, all_heads if e.head is None else [e.head])},
        )
        for e, sources in chosen
    ]
    metrics = sweeps(rows, prediction, stack, batch)
    out = [
        VerifiedEdge(
            layer=e.layer,
            from_=e.from_ or 0,
            to=e.to,
            head=e.head,
            sources=sources,
            importance=e.importance,
            logprob=m,
            effect=0.0,  # derived below (results.derive.flow_numbers)
        )
        for (e, sources), m in zip(chosen, metrics, strict=True)
    ]
    return baseline, out


def flow(
    loaded: Loaded,
    prompt: str,
    *,
    pos: int = -1,
    threshold: float = 0.04,
    by: FlowBy = "token",
    heads: bool = False,
    verify_top: int = 0,
    batch_size: int = 16,
    chunk: int | None = CHUNK,
    chat: ChatSpec | None = None,
) -> FlowResult:
    """The information-flow routes to the prediction at ``pos``: every part above ``threshold``
    that the walk from there reaches, with each layer's completeness check; with ``verify_top``
    K, the K most important attention edges knocked out one at a time."""
    validate(FLOW_PARAMS, threshold=threshold, by=by, verify_top=verify_top, batch_size=batch_size)
    model = loaded.model
    why = layout_problem(model)
    if why is not None:
        raise AttnscopeError("flow_layout", message=why)
    if verify_top:
        engine.prepare(model)
        why = unsupported(model)
        if why is not None:
            raise AttnscopeError("flow_verify_model", arg="verify_top", message=why)
    enc = encode_prompt(loaded.tokenizer, prompt, chat)
    check_length(len(enc.ids), anatomy.of(model).max_positions)
    at = query_at(enc, pos, "pos").index
    ids = enc.ids[: at + 1]  # nothing after the prediction's position can change it
    guard(loaded, len(ids), CHUNK if chunk is None else chunk, heads)
    kept = forward(model, ids)
    body = anatomy.of(model)
    with torch.inference_mode():
        logits = body.logits(kept.x[-1][-1:].to(body.device))[-1].float()
    logp = torch.log_softmax(logits, dim=-1)
    top = int(logp.argmax())
    groups = source_groups(enc.words, len(ids), by)
    edges, checks = walk(kept, model, at, groups, threshold, heads, chunk)
    metric = resolve_metric(loaded.tokenizer, Answer(top))
    baseline, verified = (
        (None, []) if not verify_top else verify(loaded, ids, edges, groups, metric, verify_top, batch_size)
    )
    numbers = flow_numbers(baseline, verified)
    return FlowResult(
        model=loaded.info,
        text=enc.text,
        chat=enc.chat,
        tokens=enc.tokens,
        words=enc.words,
        token_ids=list(enc.ids),
        pos=at,
        prediction=top,
        prediction_text=metric.target,
        logprob=float(logp[top]),
        threshold=threshold,
        by=by,
        heads=heads,
        edges=edges,
        layers=checks,
        tolerance=TOLERANCE,
        verified=numbers.verified,
        baseline=baseline,
        rank_correlation=numbers.rank_correlation,
    )
