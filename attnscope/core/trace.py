"""The note's layer-stack diagram for one position: embedding, after layer 0, ..., after layer L - 1.

Layers count from 0, as in every view (the note's 레이어 1 is layer 0 here).

One decoder forward with ``output_hidden_states=True``. In transformers 5.24
(``utils/output_capturing.py``) ``hidden_states[0]`` is the embedding and
``hidden_states[k]`` the output of layer k - 1, except the LAST entry, which is replaced by
``last_hidden_state``: already passed through the final norm. So the output of the last
layer is taken raw with a forward hook, and the result records (and the tests check) that
``hidden_states[-1]`` equals final_norm(raw). Each row gets its first dims, norm, cosine to
the previous row and a logit lens (final norm + lm_head on that one vector, never the whole
sequence). The last row's top-1 is checked against a full ``model(...)`` forward's logits at
the same position (``logits_to_keep`` = that position only). A second position (same token
id by default) shows the embedding rows are identical and diverge after layer 0.

It does not run padded batches and does not print.
"""

from __future__ import annotations

from typing import Any

import torch

from attnscope.capture import anatomy, engine, hooks
from attnscope.core.common import tolerance
from attnscope.core.prompt.params import TRACE_PARAMS, validate
from attnscope.core.prompt.spec import ChatSpec
from attnscope.core.prompt.tokens import check_length, encode_prompt, query_at, vocab_label
from attnscope.errors import AttnscopeError
from attnscope.model import Loaded
from attnscope.results.trace import Compare, CompareRow, NextCheck, TopToken, TraceResult, TraceRow


def logit_lens(model: torch.nn.Module, vectors: torch.Tensor) -> torch.Tensor:
    """vectors (N, hidden) raw residual stream -> (N, vocab) fp32 CPU logits (``capture.anatomy``'s
    final norm, lm_head, and the family's logit scale and soft-cap)."""
    param = next(model.parameters())
    with torch.inference_mode():
        logits = anatomy.of(model).logits(vectors.to(device=param.device, dtype=param.dtype))
        out: torch.Tensor = logits.float().cpu()
        return out


def _top(tokenizer: Any, logits: torch.Tensor, k: int) -> list[TopToken]:
    probs = torch.softmax(logits.float(), dim=-1)  # (vocab,)
    values, ids = probs.topk(k)
    return [
        TopToken(token=vocab_label(tokenizer, int(i)), id=int(i), prob=float(p))
        for p, i in zip(values.tolist(), ids.tolist(), strict=True)
    ]


def stack(model: torch.nn.Module, ids: list[int]) -> tuple[torch.Tensor, float]:
    """(L+1, T, hidden) raw residual stream: embedding, then each layer's output, all unnormed;
    plus max |hidden_states[-1] - final_norm(raw last layer output)|."""
    body = anatomy.of(model)
    if not body.layers:
        raise AttnscopeError("no_decoder_layers", model=type(model).__name__)
    input_ids = torch.tensor([ids])  # (1, T)
    with hooks.Run(body) as run:
        run.read("resid_pre.0", "resid_post.*")
        out = run.forward(input_ids, torch.ones_like(input_ids))
    names = ["resid_pre.0", *(f"resid_post.{layer}" for layer in range(body.n_layers))]
    if out is None or any(name not in run.values for name in names):
        raise AttnscopeError("hidden_states")
    last = run[names[-1]]  # (1, T, hidden): the last layer's raw output
    with torch.inference_mode():
        normed_diff = float((out.last_hidden_state - body.norm_module()(last)).abs().max())
    return torch.stack([run[name][0] for name in names]).float().cpu(), normed_diff  # (L+1, T, hidden)


def check_finite(model: torch.nn.Module, ids: list[int], hidden: torch.Tensor) -> None:
    """Stop on NaN/inf in the stack: name the layer and head through the attention rows if
    they are the cause, otherwise the first layer whose output is not finite."""
    bad_stage = int((~torch.isfinite(hidden)).flatten(1).any(dim=1).nonzero()[0])  # 0 = embedding
    if bad_stage > 0:
        layer = bad_stage - 1
        input_ids = torch.tensor([ids])  # (1, T)
        positions = torch.arange(len(ids))[None]  # (1, T): every query row of that layer
        got = engine.run(
            model,
            input_ids,
            torch.ones_like(input_ids),
            engine.Request(positions=positions, layers=frozenset({layer})),
        )
        engine.check_finite(got.rows)
    where = "the embedding" if bad_stage == 0 else f"the output of layer {bad_stage - 1}"
    raise AttnscopeError("nan_other", where=where, arg="dtype")


def model_logits(model: torch.nn.Module, ids: list[int], position: int) -> torch.Tensor:
    """(vocab,) fp32 logits of a full causal-LM forward at one position (lm_head on that position only)."""
    device = next(model.parameters()).device
    input_ids = torch.tensor([ids], device=device)  # (1, T)
    with torch.inference_mode():
        out = model(
            input_ids=input_ids,
            attention_mask=torch.ones_like(input_ids),
            logits_to_keep=torch.tensor([position], device=device),
            use_cache=False,
        )
    return out.logits[0, -1].float().cpu()  # type: ignore[no-any-return]


def _cos(a: torch.Tensor, b: torch.Tensor) -> float:
    return float(torch.nn.functional.cosine_similarity(a.double(), b.double(), dim=0))


def trace(
    loaded: Loaded,
    prompt: str | None,
    *,
    pos: int = -1,
    dims: int = 4,
    top: int = 3,
    compare_pos: int | None = None,
    chat: ChatSpec | None = None,
) -> TraceResult:
    """One position's vector (``pos``, negative counts from the end) from the embedding through every
    layer, with a logit lens of ``top`` candidates per row and the first ``dims`` dims of each vector;
    ``compare_pos``: a second position to compare with (default: one with the same token id).
    ``prompt``: the text, or with ``chat.messages`` the last user turn."""
    validate(TRACE_PARAMS, dims=dims, top=top)
    model = loaded.model
    enc = encode_prompt(loaded.tokenizer, prompt, chat)
    check_length(len(enc.ids), anatomy.of(model).max_positions)
    p = query_at(enc, pos).index
    other: int | None = None
    if compare_pos is not None:
        other = query_at(enc, compare_pos, "compare_pos").index
        if other == p:
            raise AttnscopeError("compare_pos", arg="compare_pos", value=compare_pos)
    else:
        same = [i for i in range(len(enc.ids)) if enc.ids[i] == enc.ids[p] and i != p]
        if same:
            other = min(same, key=lambda i: (abs(i - p), i))

    hidden, normed_diff = stack(model, enc.ids)  # (L+1, T, hidden)
    if not bool(torch.isfinite(hidden).all()):
        check_finite(model, enc.ids, hidden)
    vec = hidden[:, p]  # (L+1, hidden): the traced position at every stage
    lens = logit_lens(model, vec)  # (L+1, vocab)
    tokenizer = loaded.tokenizer
    k = min(top, lens.shape[-1])
    rows = [
        TraceRow(
            layer=layer,
            norm=float(vec[layer].norm()),
            cos_prev=None if layer == 0 else _cos(vec[layer], vec[layer - 1]),
            head_dims=vec[layer, :dims].tolist(),
            top=_top(tokenizer, lens[layer], k),
        )
        for layer in range(hidden.shape[0])
    ]

    real = model_logits(model, enc.ids, p)  # (vocab,)
    lens_last = lens[-1]
    tol = tolerance(next(model.parameters()).dtype) * max(1.0, float(real.abs().max()))
    lens_top = _top(tokenizer, lens_last, 1)[0]
    real_top = _top(tokenizer, real, 1)[0]
    max_diff = float((lens_last - real).abs().max())
    check = NextCheck(
        lens=lens_top,
        model=real_top,
        match=lens_top.id == real_top.id,
        max_diff_logits=max_diff,
        hidden_states_last_normed=normed_diff,
        tolerance=tol,
        ok=lens_top.id == real_top.id and max_diff <= tol,
    )
    compare = None
    if other is not None:
        compare = Compare(
            position=other,
            token=enc.tokens[other],
            same_id=enc.ids[other] == enc.ids[p],
            rows=[
                CompareRow(
                    layer=layer,
                    cos=_cos(hidden[layer, p], hidden[layer, other]),
                    max_abs_diff=float((hidden[layer, p] - hidden[layer, other]).abs().max()),
                )
                for layer in range(hidden.shape[0])
            ],
        )
    return TraceResult(
        model=loaded.info,
        text=enc.text,
        chat=enc.chat,
        tokens=enc.tokens,
        position=p,
        token=enc.tokens[p],
        dims=dims,
        rows=rows,
        next_token=real_top,
        check=check,
        compare=compare,
    )
