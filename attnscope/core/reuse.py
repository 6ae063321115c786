"""Why a KV cache works: K and V of earlier positions do not change when tokens are appended.

``reuse`` tokenizes PREFIX and SUFFIX separately and concatenates the ids (so the prefix's
tokens are exactly the same in both runs; it reports whether tokenizing the joined text
would differ). It captures K, V (the ``k`` and ``v`` hook points) and the prefix positions' attention rows at
every layer, for the prefix alone and inside prefix+suffix, and reports the max difference
per layer. It runs the prefix with ``use_cache=True``, runs the suffix on a deep copy of that
``DynamicCache`` (the forward kwarg is ``cache=`` in transformers 5.24; ``past_key_values`` is
deprecated) and compares the next-token logits with one full pass. Last, the cost claim:
T(T+1)/2 query-key comparisons per head per layer, for the prompt and the prompt doubled,
with the time of one layer's attention measured on the model's own q, k, v for both.

It does not batch, does not generate text and does not print.
"""

from __future__ import annotations

import copy
import statistics
import time
from typing import Any

import torch

from attnscope.capture import anatomy, engine, hooks
from attnscope.core.common import every_layer, tolerance
from attnscope.core.prompt.params import REUSE_PARAMS, validate
from attnscope.core.prompt.tokens import check_length, encode, readable, vocab_label
from attnscope.errors import AttnscopeError
from attnscope.model import Loaded
from attnscope.results.common import ResultWarning
from attnscope.results.reuse import CacheCheck, Comparisons, LayerDiff, ReuseResult
from attnscope.results.trace import TopToken


def _device(model: torch.nn.Module) -> torch.device:
    return next(model.parameters()).device


def _capture_all(model: torch.nn.Module, ids: list[int], n_query: int, n_layers: int) -> hooks.Run:
    """Rows of positions 0..n_query-1 and k/v at every layer (``rows.l``, ``k.l``, ``v.l``, on the CPU)."""
    input_ids = torch.tensor([ids])  # (1, T)
    names = [f"{point}.{layer}" for layer in range(n_layers) for point in ("rows", "k", "v")]
    run = hooks.capture(
        anatomy.of(model), input_ids, torch.ones_like(input_ids), names, positions=torch.arange(n_query)[None], cpu=True
    )
    assert run.captured is not None
    engine.check_finite(run.captured.rows)
    return run


def layer_diffs(prefix_run: hooks.Run, full_run: hooks.Run, n_prefix: int) -> list[LayerDiff]:
    out = []
    for layer in sorted(prefix_run.masks):
        k_p, v_p = prefix_run[f"k.{layer}"], prefix_run[f"v.{layer}"]  # (1, KV, P, D)
        k_f, v_f = full_run[f"k.{layer}"], full_run[f"v.{layer}"]  # (1, KV, T, D)
        rows_p = prefix_run[f"rows.{layer}"]  # (1, H, P, P)
        rows_f = full_run[f"rows.{layer}"]  # (1, H, P, T)
        future = rows_f[..., n_prefix:]
        out.append(
            LayerDiff(
                layer=layer,
                max_diff_k=float((k_f[:, :, :n_prefix].float() - k_p.float()).abs().max()),
                max_diff_v=float((v_f[:, :, :n_prefix].float() - v_p.float()).abs().max()),
                max_diff_rows=float((rows_f[..., :n_prefix] - rows_p).abs().max()),
                max_future_weight=float(future.abs().max()) if future.numel() else 0.0,
            )
        )
    return out


def _top1(tokenizer: Any, logits: torch.Tensor) -> TopToken:
    probs = torch.softmax(logits.float(), dim=-1)
    i = int(probs.argmax())
    return TopToken(token=vocab_label(tokenizer, i), id=i, prob=float(probs[i]))


def cache_check(
    model: torch.nn.Module, tokenizer: Any, prefix_ids: list[int], suffix_ids: list[int], prefix_k0: torch.Tensor
) -> tuple[CacheCheck, float, torch.Tensor, torch.Tensor]:
    """(check, max |logits cached - logits full|, cached logits, full logits); logits (vocab,) at the last token."""
    device = _device(model)
    pre = torch.tensor([prefix_ids], device=device)  # (1, P)
    suf = torch.tensor([suffix_ids], device=device)  # (1, S)
    full = torch.cat([pre, suf], dim=1)  # (1, P+S)
    with torch.inference_mode():
        first = model(input_ids=pre, attention_mask=torch.ones_like(pre), use_cache=True, logits_to_keep=1)
        cache = first.cache
        if cache is None:
            raise AttnscopeError("reuse_no_cache")
        prefix_len = int(cache.get_seq_length())
        stored_k0 = cache.layers[0].keys.float().cpu()  # (1, KV, P, D)
        reused = copy.deepcopy(cache)
        second = model(
            input_ids=suf, attention_mask=torch.ones_like(full), cache=reused, use_cache=True, logits_to_keep=1
        )
        whole = model(input_ids=full, attention_mask=torch.ones_like(full), use_cache=False, logits_to_keep=1)
    cached = second.logits[0, -1].float().cpu()
    one_pass = whole.logits[0, -1].float().cpu()
    check = CacheCheck(
        prefix_len=prefix_len,
        copy_len=int(reused.get_seq_length()),
        original_len_after=int(cache.get_seq_length()),
        cached=_top1(tokenizer, cached),
        full=_top1(tokenizer, one_pass),
        max_diff_cache_k=float((stored_k0 - prefix_k0.float()).abs().max()),
    )
    return check, float((cached - one_pass).abs().max()), cached, one_pass


def _layer0_qkv(model: torch.nn.Module, ids: list[int]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, float]:
    """Layer 0's post-RoPE q (1,H,T,D), k, v (1,KV,T,D) on the model's device, and its scaling."""
    input_ids = torch.tensor([ids])  # (1, T)
    run = hooks.capture(anatomy.of(model), input_ids, torch.ones_like(input_ids), ["q.0", "k.0", "v.0"], stop=True)
    q, k, v = run["q.0"], run["k.0"], run["v.0"]
    body = anatomy.of(model)
    scaling = body.layers[0].scaling(q.shape[-1] ** -0.5) if body.layers else 1.0
    return q, k, v, scaling


def time_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scaling: float, budget_s: float = 0.3
) -> tuple[float, int]:
    """Median seconds of one causal sdpa call (all heads, GQA) and how many runs it took."""
    sdpa = torch.nn.functional.scaled_dot_product_attention

    def once() -> float:
        if q.device.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.inference_mode():
            sdpa(q, k, v, is_causal=True, scale=scaling, enable_gqa=True)
        if q.device.type == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter() - t0

    threads = torch.get_num_threads()
    if q.device.type == "cpu":
        torch.set_num_threads(1)  # one thread: other load on a shared CPU swamps multi-threaded timings
    try:
        for _ in range(3):
            once()
        times: list[float] = []
        start = time.perf_counter()
        while len(times) < 5 or (time.perf_counter() - start < budget_s and len(times) < 2000):
            times.append(once())
    finally:
        torch.set_num_threads(threads)
    return statistics.median(times), len(times)


def comparisons(loaded: Loaded, ids: list[int], repeat: int) -> Comparisons:
    info = loaded.info
    base = ids * repeat
    doubled = base * 2
    max_pos = anatomy.of(loaded.model).max_positions
    check_length(len(doubled), max_pos)
    n, n2 = len(base), len(doubled)
    per, per2 = n * (n + 1) // 2, n2 * (n2 + 1) // 2
    q, k, v, scaling = _layer0_qkv(loaded.model, base)
    seconds, runs = time_attention(q, k, v, scaling)
    q2, k2, v2, _ = _layer0_qkv(loaded.model, doubled)
    seconds2, runs2 = time_attention(q2, k2, v2, scaling)
    per_layer_heads = info.num_hidden_layers * info.num_attention_heads
    return Comparisons(
        repeat=repeat,
        tokens=n,
        per_head_per_layer=per,
        doubled_tokens=n2,
        doubled_per_head_per_layer=per2,
        ratio=per2 / per,
        layers=info.num_hidden_layers,
        heads=info.num_attention_heads,
        total=per * per_layer_heads,
        doubled_total=per2 * per_layer_heads,
        seconds=seconds,
        doubled_seconds=seconds2,
        time_ratio=seconds2 / seconds if seconds > 0 else 0.0,
        runs=min(runs, runs2),
        timed_on="cpu, 1 thread" if q.device.type == "cpu" else str(q.device),
    )


def _suffix_ids(tokenizer: Any, suffix: str) -> list[int]:
    """The suffix's token ids, tokenized on its own (no special tokens); it must give some."""
    if not suffix:
        raise AttnscopeError("suffix_empty")
    ids = list(tokenizer(suffix, add_special_tokens=False)["input_ids"])
    if not ids:
        raise AttnscopeError("suffix_no_tokens")
    return ids


def _cache_consistent(cache: CacheCheck, n_tokens: int) -> bool:
    """The cached run picks the full run's next token, the original cache still holds the prefix
    only, and the copy holds all ``n_tokens``."""
    return (
        cache.cached.id == cache.full.id and cache.original_len_after == cache.prefix_len and cache.copy_len == n_tokens
    )


def reuse(loaded: Loaded, prefix: str, suffix: str, *, repeat: int = 1) -> ReuseResult:
    """Everything ``attnscope reuse`` does."""
    validate(REUSE_PARAMS, repeat=repeat)
    tokenizer = loaded.tokenizer
    model = loaded.model
    pre = encode(tokenizer, prefix)
    suffix_ids = _suffix_ids(tokenizer, suffix)
    text = prefix + suffix
    ids = pre.ids + suffix_ids
    check_length(len(ids), anatomy.of(model).max_positions)
    joint = list(tokenizer(text)["input_ids"])
    tokens, _ = readable(tokenizer, text, ids)
    n_prefix = len(pre.ids)
    n_layers = len(every_layer(loaded.info, "reuse"))

    prefix_run = _capture_all(model, pre.ids, n_prefix, n_layers)
    full_run = _capture_all(model, ids, n_prefix, n_layers)
    per_layer = layer_diffs(prefix_run, full_run, n_prefix)
    cache, max_diff_logits, cached, one_pass = cache_check(model, tokenizer, pre.ids, suffix_ids, prefix_run["k.0"])
    cost = comparisons(loaded, ids, repeat)

    dtype = next(model.parameters()).dtype
    tol = tolerance(dtype)
    max_k = max(d.max_diff_k for d in per_layer)
    max_v = max(d.max_diff_v for d in per_layer)
    max_rows = max(d.max_diff_rows for d in per_layer)
    # K/V grow with depth (hundreds in late layers), so their bar scales with their size.
    kv_scale = max(1.0, max(float(full_run[f"k.{layer}"].abs().max()) for layer in full_run.masks))
    kv_ok = (
        max_k <= tol * kv_scale
        and max_v <= tol * kv_scale
        and max_rows <= 10 * tol  # probabilities from scores of size ~100: fp32 rounding reaches ~1e-4
        and all(d.max_future_weight == 0.0 for d in per_layer)
    )
    logit_tol = tol * max(1.0, float(one_pass.abs().max()))
    cache_ok = max_diff_logits <= logit_tol and _cache_consistent(cache, len(ids))
    warnings = [] if joint == ids else [ResultWarning(code="boundary_tokens_differ")]
    return ReuseResult(
        model=loaded.info,
        prefix=prefix,
        suffix=suffix,
        text=text,
        tokens=tokens,
        prefix_tokens=n_prefix,
        boundary_same=joint == ids,
        per_layer=per_layer,
        max_diff_k=max_k,
        max_diff_v=max_v,
        max_diff_rows=max_rows,
        max_diff_logits=max_diff_logits,
        cache=cache,
        comparisons=cost,
        tolerance=tol,
        kv_ok=kv_ok,
        cache_ok=cache_ok,
        ok=kv_ok and cache_ok,
        warnings=warnings,
    )
