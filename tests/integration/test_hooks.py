"""``capture.hooks`` against plain hooks written here: for each hook point, the value a run reads
equals the one a plain ``register_forward_hook`` / pre-hook (or a wrapper around the modeling
module's own ``apply_rotary_pos_emb``) takes in the same forward, on the tiny GQA Qwen2 model and
on a hybrid (Qwen3-Next: linear-attention layers 0 and 2, gated full attention at 1 and 3). Edits
change the output as the same edit through a plain hook does, and a kept gradient equals
``torch.autograd.grad`` through a plain hook."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import torch

from attnscope.capture import anatomy, engine, hooks
from attnscope.errors import AttnscopeError

from support import SEED, families, reference

Case = tuple[Any, torch.Tensor]


@pytest.fixture(scope="module", params=["tiny", "qwen3_next"])
def case(request: pytest.FixtureRequest, loaded: Any, tokenizer: Any) -> Case:
    model = loaded.model if request.param == "tiny" else families.model("qwen3_next", len(tokenizer))
    engine.prepare(model)
    return model, torch.tensor([tokenizer(SEED)["input_ids"]])


def _first(out: Any) -> torch.Tensor:
    return out[0] if isinstance(out, tuple) else out


@contextmanager
def plain(model: Any) -> Iterator[dict[str, Any]]:
    """Plain hooks on every module a point sits on; ``apply_rotary_pos_emb`` of the modeling module
    wrapped so that its post-RoPE q and k are seen, in the order the layers call it."""
    seen: dict[str, Any] = {"rope": []}
    handles = []
    layers = model.model.layers

    def keep(name: str, what: str) -> Callable[..., None]:
        def hook(_m: Any, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any = None) -> None:
            if what == "in":
                seen[name] = (args[0] if args else kwargs["hidden_states"]).detach().clone()
                seen[name + ".kwargs"] = kwargs
            else:
                seen[name] = _first(out).detach().clone()

        return hook

    for i, layer in enumerate(layers):
        mixer = getattr(layer, "self_attn", None) or layer.linear_attn
        pre = [(layer, f"resid_pre.{i}"), (mixer, f"attn_in.{i}"), (layer.post_attention_layernorm, f"norm2_in.{i}")]
        post = [(layer, f"resid_post.{i}"), (mixer, f"attn_out.{i}"), (layer.mlp, f"mlp_out.{i}")]
        attn = getattr(layer, "self_attn", None)
        if attn is not None:
            pre.append((attn.o_proj, f"o_in.{i}"))
            post += [(attn.q_proj, f"q_proj.{i}"), (attn.k_proj, f"k_proj.{i}"), (attn.v_proj, f"v_proj.{i}")]
            post.append((attn.o_proj, f"o_out.{i}"))
        for module, name in pre:
            handles.append(module.register_forward_pre_hook(keep(name, "in"), with_kwargs=True))
        for module, name in post:
            handles.append(
                module.register_forward_hook(
                    lambda m, a, k, o, name=name: keep(name, "out")(m, a, k, o), with_kwargs=True
                )
            )
    modeling = importlib.import_module(type(model).__module__)
    real = modeling.apply_rotary_pos_emb

    def rope(q: torch.Tensor, k: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
        q_out, k_out = real(q, k, *args, **kwargs)
        seen["rope"].append((q_out.detach().clone(), k_out.detach().clone()))
        return q_out, k_out

    modeling.apply_rotary_pos_emb = rope
    try:
        yield seen
    finally:
        modeling.apply_rotary_pos_emb = real
        for handle in handles:
            handle.remove()


def _attention_layers(model: Any) -> list[int]:
    return [i for i, layer in enumerate(model.model.layers) if getattr(layer, "self_attn", None) is not None]


def test_every_point_reads_what_a_plain_hook_sees(case: Case) -> None:
    model, ids = case
    body = anatomy.of(model)
    d, n = body.head_dim, ids.shape[1]
    attention = _attention_layers(model)
    positions = torch.tensor([[n - 3, n - 1]])
    names = [f"{p}.*" for p in ("resid_pre", "resid_mid", "resid_post", "attn_in", "attn_out", "mlp_out")]
    names += [f"{p}.*" for p in ("z", "k_proj", "v_proj", "q", "k", "v", "rows", "mask")]
    with plain(model) as seen, hooks.Run(body, positions=positions) as run:
        run.read(*names, "logits")
        if model.config.model_type != "qwen3_next":  # its heads are gated: no per-head contribution
            run.read("head_out.*")
        out = run.forward(ids, torch.ones_like(ids))
    with torch.no_grad():
        own = model(input_ids=ids, use_cache=False).logits
    assert torch.equal(run["logits"], out.logits) and torch.allclose(run["logits"], own, atol=1e-6)
    for i in range(body.n_layers):
        for point in ("resid_pre", "resid_post", "attn_in", "attn_out", "mlp_out"):
            assert torch.equal(run[f"{point}.{i}"], seen[f"{point}.{i}"]), (point, i)
        assert torch.equal(run[f"resid_mid.{i}"], seen[f"norm2_in.{i}"])
        assert torch.equal(run[f"resid_mid.{i}"], seen[f"resid_pre.{i}"] + seen[f"attn_out.{i}"])
        assert run.calls[f"resid_pre.{i}"].keys() == seen[f"resid_pre.{i}.kwargs"].keys() - {"hidden_states"}
    eager = dict(zip(attention, reference.eager_attentions(model, ids), strict=True))
    for order, i in enumerate(attention):
        b, t = ids.shape
        assert torch.equal(run[f"z.{i}"], seen[f"o_in.{i}"].view(b, t, body.n_heads, d))
        assert torch.equal(run[f"k_proj.{i}"], seen[f"k_proj.{i}"].view(b, t, body.n_kv, d))
        assert torch.equal(run[f"v_proj.{i}"], seen[f"v_proj.{i}"].view(b, t, body.n_kv, d))
        q_rot, k_rot = seen["rope"][order]  # (B, H, T, D), (B, KV, T, D)
        assert torch.equal(run[f"q.{i}"], q_rot) and run[f"q.{i}"].shape[1] == body.n_heads
        assert torch.equal(run[f"k.{i}"], k_rot) and run[f"k.{i}"].shape[1] == body.n_kv
        assert torch.equal(run[f"v.{i}"], seen[f"v_proj.{i}"].view(b, t, body.n_kv, d).transpose(1, 2))
        expect = eager[i][:, :, positions[0]]  # (B, H, P, T)
        assert torch.allclose(run[f"rows.{i}"], expect, atol=1e-5), i
        given = seen[f"attn_in.{i}.kwargs"].get("attention_mask")
        assert (run.masks[i] is None) == (given is None)
        if given is not None:
            assert torch.equal(run.masks[i], given)
        if f"head_out.{i}" in run.values:
            parts = run[f"head_out.{i}"]  # (B, T, H, hidden)
            o_proj = model.model.layers[i].self_attn.o_proj
            with torch.no_grad():
                by_hand = torch.stack(
                    [
                        seen[f"o_in.{i}"][..., h * d : (h + 1) * d] @ o_proj.weight[:, h * d : (h + 1) * d].T
                        for h in range(body.n_heads)
                    ],
                    dim=2,
                )
                summed = parts.sum(dim=2) + (0 if o_proj.bias is None else o_proj.bias)
            assert torch.allclose(parts, by_hand, atol=1e-6)
            assert torch.allclose(summed, seen[f"o_out.{i}"], atol=1e-5)


def test_attn_weights_are_what_the_eager_attention_module_returns(case: Case) -> None:
    """``attn_weights.l`` in an eager forward: what a plain forward hook on the layer's attention
    module sees as its second output, and eager ``output_attentions``; the capturing attention is
    put back afterwards, and a capturing forward returns no weights to keep."""
    model, ids = case
    body = anatomy.of(model)
    attention = _attention_layers(model)
    seen: dict[int, torch.Tensor] = {}
    handles = [
        model.model.layers[i].self_attn.register_forward_hook(
            lambda _m, _a, out, i=i: seen.__setitem__(i, out[1].detach().clone())
        )
        for i in attention
    ]
    try:
        with hooks.Run(body) as run:
            run.read("attn_weights.*", "attn_in.*")
            run.forward(ids, torch.ones_like(ids), eager=True)
    finally:
        for handle in handles:
            handle.remove()
    assert model.config._attn_implementation == engine.IMPL
    assert sorted(k for k in run.values if k.startswith("attn_weights")) == [f"attn_weights.{i}" for i in attention]
    eager = dict(zip(attention, reference.eager_attentions(model, ids), strict=True))
    for i in attention:
        assert torch.equal(run[f"attn_weights.{i}"], seen[i]), i
        assert torch.allclose(run[f"attn_weights.{i}"], eager[i], atol=1e-6), i
    with hooks.Run(body) as run:
        run.read("attn_weights.*")
        run.forward(ids, torch.ones_like(ids))
    assert run.values == {}
    with hooks.Run(body) as run:
        with pytest.raises(AttnscopeError, match="read only"):
            run.edit(f"attn_weights.{attention[0]}", lambda x: x)


def test_points_a_layer_lacks_are_refused(case: Case) -> None:
    model, _ = case
    body = anatomy.of(model)
    linear = [layer.index for layer in body.layers if layer.attn is None]
    with hooks.Run(body) as run:
        with pytest.raises(AttnscopeError, match="no hook point 'resid'"):
            run.read("resid")
        with pytest.raises(AttnscopeError, match="layers are 0 to"):
            run.read(f"z.{body.n_layers}")
        with pytest.raises(AttnscopeError, match="read only"):
            run.edit("rows.1", lambda x: x)
        for i in linear:
            with pytest.raises(AttnscopeError, match=f"layer {i} of this qwen3_next model has no point z"):
                run.read(f"z.{i}")
        if linear:  # the full layers of the hybrid gate each head's output: no per-head contribution
            with pytest.raises(AttnscopeError, match="gates each head's output"):
                run.read("head_out.1")


def _metric(logits: torch.Tensor) -> torch.Tensor:
    return torch.log_softmax(logits[0, -1].float(), dim=-1)[5]


EDITS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "z": lambda x: torch.cat([x[..., :1, :] * 0, x[..., 1:, :]], dim=-2),  # head 0 zeroed
    "k_proj": lambda x: torch.cat(
        [x[..., :1, :], x[..., 1:, :] + 1], dim=-2
    ),  # KV head 1 moved (a k_norm undoes a scale)
    "resid_mid": lambda x: x + 0.5,
    "mlp_out": lambda x: x * 0.5,
    "k": lambda x: torch.cat([x[:, :1], x[:, 1:] * 2], dim=1),  # KV head 1 doubled, after RoPE
    "q": lambda x: x.flip(2),  # queries in reverse order
}


@pytest.mark.parametrize("point", sorted(EDITS))
def test_an_edit_changes_the_output_as_a_plain_hook_does(case: Case, point: str) -> None:
    model, ids = case
    body = anatomy.of(model)
    layer = _attention_layers(model)[0]
    fn, d = EDITS[point], body.head_dim
    with hooks.Run(body) as run:
        run.edit(f"{point}.{layer}", fn)
        edited = run.forward(ids, torch.ones_like(ids), full=True).logits
    block = model.model.layers[layer]
    attn = block.self_attn

    def per_head(x: torch.Tensor) -> torch.Tensor:
        return fn(x.view(*x.shape[:-1], -1, d)).reshape(x.shape)

    handles = []
    if point == "z":
        handles.append(attn.o_proj.register_forward_pre_hook(lambda _m, a: (per_head(a[0]),)))
    elif point == "k_proj":
        handles.append(attn.k_proj.register_forward_hook(lambda _m, _a, out: per_head(out)))
    elif point == "resid_mid":
        handles.append(block.post_attention_layernorm.register_forward_pre_hook(lambda _m, a: (fn(a[0]),)))
    elif point == "mlp_out":
        handles.append(block.mlp.register_forward_hook(lambda _m, _a, out: fn(out)))
    modeling = importlib.import_module(type(model).__module__)
    real = modeling.apply_rotary_pos_emb
    calls = []

    def rope(q: torch.Tensor, k: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
        q_out, k_out = real(q, k, *args, **kwargs)
        calls.append(1)
        if len(calls) == 1 and point in ("q", "k"):  # the first attention layer's call
            return (fn(q_out), k_out) if point == "q" else (q_out, fn(k_out))
        return q_out, k_out

    modeling.apply_rotary_pos_emb = rope
    try:
        with torch.no_grad():
            expect = model(input_ids=ids, use_cache=False).logits
    finally:
        modeling.apply_rotary_pos_emb = real
        for handle in handles:
            handle.remove()
    with torch.no_grad():
        clean = model(input_ids=ids, use_cache=False).logits
    assert not torch.allclose(edited, clean, atol=1e-4)  # the edit matters
    assert torch.allclose(edited, expect, atol=1e-5)


@pytest.mark.parametrize("point", ["resid_mid", "z", "resid_pre", "mlp_out", "k_proj"])
def test_a_kept_gradient_is_autograd_through_a_plain_hook(case: Case, point: str) -> None:
    model, ids = case
    body = anatomy.of(model)
    layer = _attention_layers(model)[0]
    with hooks.Run(body) as run:
        run.grad(f"{point}.{layer}")
        out = run.forward(ids, torch.ones_like(ids), full=True)
        _metric(out.logits).backward()
        got = run.gradient(f"{point}.{layer}")
    model.zero_grad(set_to_none=True)
    block = model.model.layers[layer]
    kept: dict[str, torch.Tensor] = {}

    def grab(x: torch.Tensor) -> None:
        kept["x"] = x

    module, where = {
        "resid_mid": (block.post_attention_layernorm, "in"),
        "resid_pre": (block, "in"),
        "z": (block.self_attn.o_proj, "in"),
        "mlp_out": (block.mlp, "out"),
        "k_proj": (block.self_attn.k_proj, "out"),
    }[point]
    if where == "in":
        handle = module.register_forward_pre_hook(
            lambda _m, a, k: grab(a[0] if a else k["hidden_states"]), with_kwargs=True
        )
    else:
        handle = module.register_forward_hook(lambda _m, _a, out: grab(_first(out)))
    try:
        with torch.enable_grad():
            metric = _metric(model(input_ids=ids, use_cache=False).logits)
            (expect,) = torch.autograd.grad(metric, kept["x"])
    finally:
        handle.remove()
    assert float(expect.abs().max()) > 0
    assert torch.allclose(got.reshape(expect.shape), expect, atol=1e-6, rtol=1e-5)


def test_runs_do_not_nest_and_a_plain_forward_has_no_capture(case: Case) -> None:
    model, ids = case
    body = anatomy.of(model)
    with hooks.Run(body) as outer, hooks.Run(body) as inner:
        outer.read("q.1")
        inner.read("k.1")
        with engine.session(engine.Request(positions=None, layers=frozenset())):
            with pytest.raises(RuntimeError, match="do not nest"):
                outer.forward(ids, torch.ones_like(ids))
    assert engine._current.get() is None


def test_the_memory_guard_counts_only_the_layers_whose_qkv_or_z_are_kept(case: Case) -> None:
    """A run that reads only masks keeps no layer's q/k/v (mask's real-batch check must not be refused
    for the q/k/v it never holds); reading q or z keeps that layer."""
    model, _ = case
    body = anatomy.of(model)
    with hooks.Run(body) as run:
        run.read("mask.*")
        assert run.request().kept == frozenset()
    attention = [layer.index for layer in body.layers if layer.kind != "linear"]
    with hooks.Run(body) as run:
        run.read(f"q.{attention[-1]}", f"z.{attention[0]}", "mask.*")
        assert run.request().kept == frozenset({attention[0], attention[-1]})


def _proj_reference(block: Any, kind: str, x: torch.Tensor, inputs: torch.Tensor, d: int) -> torch.Tensor:
    """q/k/v_proj's output where head ``n`` reads ``inputs[..., n, :]`` (pre-norm), by plain F.linear
    on the full rows of each head's own normed input, the head's slice kept."""
    proj = getattr(block.self_attn, f"{kind}_proj")
    parts = []
    for n in range(inputs.shape[-2]):
        full = torch.nn.functional.linear(block.input_layernorm(inputs[..., n, :]), proj.weight, proj.bias)
        parts.append(full[..., n * d : (n + 1) * d])
    return torch.cat(parts, dim=-1)


@pytest.mark.parametrize("kind", ["q", "k", "v"])
def test_each_heads_projection_input_reads_edits_and_keeps_gradients_as_plain_hooks(
    loaded: Any, tokenizer: Any, kind: str
) -> None:
    """``q_in``/``k_in``/``v_in``: the input of the layer's attention norm, one view per query head
    (q) or per KV head (k, v); an edit of one head's input changes the logits as a plain hook on the
    projection that recomputes that head's slice from its own input; the kept gradient of each head's
    input is ``torch.autograd.grad`` through such a hook."""
    model = loaded.model
    body = anatomy.of(model)
    ids = torch.tensor([tokenizer(SEED)["input_ids"]])
    layer, d = 1, body.head_dim
    n = body.n_heads if kind == "q" else body.n_kv
    block = model.model.layers[layer]
    seen: dict[str, torch.Tensor] = {}
    grab = block.input_layernorm.register_forward_pre_hook(lambda _m, a: seen.update(x=a[0].detach().clone()))
    try:
        run = hooks.capture(body, ids, torch.ones_like(ids), [f"{kind}_in.{layer}"])
    finally:
        grab.remove()
    got = run[f"{kind}_in.{layer}"]
    assert got.shape == (1, ids.shape[1], n, body.hidden)
    for head in range(n):
        assert torch.equal(got[0, :, head], seen["x"][0])

    shift = torch.zeros(n, body.hidden)
    shift[n - 1] = 0.7  # the last head's input moved, the others as they were

    with hooks.Run(body) as run:
        run.edit(f"{kind}_in.{layer}", lambda x: x + shift)
        edited = run.forward(ids, torch.ones_like(ids), full=True).logits
    proj = getattr(block.self_attn, f"{kind}_proj")
    stash: dict[str, torch.Tensor] = {}
    keep = block.input_layernorm.register_forward_pre_hook(lambda _m, a: stash.update(x=a[0]))
    swap = proj.register_forward_hook(
        lambda _m, _a, _o: _proj_reference(block, kind, stash["x"], stash["x"].unsqueeze(-2) + shift, d)
    )
    try:
        with torch.no_grad():
            expect = model(input_ids=ids, use_cache=False).logits
    finally:
        swap.remove()
        keep.remove()
    with torch.no_grad():
        clean = model(input_ids=ids, use_cache=False).logits
    assert not torch.allclose(edited, clean, atol=1e-4)
    assert torch.allclose(edited, expect, atol=1e-5)

    with hooks.Run(body) as run:
        run.grad(f"{kind}_in.{layer}")
        _metric(run.forward(ids, torch.ones_like(ids), full=True).logits).backward()
        grads = run.gradient(f"{kind}_in.{layer}")
    model.zero_grad(set_to_none=True)
    zero = torch.zeros(1, ids.shape[1], n, body.hidden, requires_grad=True)
    keep = block.input_layernorm.register_forward_pre_hook(lambda _m, a: stash.update(x=a[0]))
    swap = proj.register_forward_hook(
        lambda _m, _a, _o: _proj_reference(block, kind, stash["x"], stash["x"].unsqueeze(-2) + zero, d)
    )
    try:
        with torch.enable_grad():
            (reference,) = torch.autograd.grad(_metric(model(input_ids=ids, use_cache=False).logits), zero)
    finally:
        swap.remove()
        keep.remove()
    model.zero_grad(set_to_none=True)
    assert float(reference[0, :, 0].abs().max()) > 0 and float(reference[0, :, -1].abs().max()) > 0
    assert not torch.allclose(reference[0, :, 0], reference[0, :, -1])  # heads see different gradients
    assert torch.allclose(grads, reference, atol=1e-6, rtol=1e-5)
