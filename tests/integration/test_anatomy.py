"""``capture.anatomy`` on every family of ``support.families``, each fact checked against the config
or against what the model itself does in a forward: the head counts and head_dim against the
config, each layer's attention kind and window against the ``sliding_window`` the layer hands its
attention function, each norm's place against the tensors it reads and writes (hooks written here),
and the logits head (scale, soft-cap) against the model's own logits."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from attnscope.capture import anatomy, engine
from attnscope.model.config import layer_kinds

from support import SEED, families

_KINDS = {"full_attention": "full", "sliding_attention": "sliding", "linear_attention": "linear"}


@pytest.fixture(scope="module", params=sorted(families.FAMILIES))
def family(request: pytest.FixtureRequest, tokenizer: Any) -> tuple[str, Any, torch.Tensor]:
    model = families.model(request.param, len(tokenizer))
    engine.prepare(model)
    ids = torch.tensor([tokenizer(SEED)["input_ids"]])
    return request.param, model, ids


def test_counts_and_modules_follow_the_config(family: tuple[str, Any, torch.Tensor]) -> None:
    _, model, _ = family
    body = anatomy.of(model)
    config = model.config
    assert anatomy.of(model) is body  # built once, kept on the model
    assert body.n_heads == config.num_attention_heads
    assert body.n_kv == config.num_key_value_heads
    assert body.groups == config.num_attention_heads // config.num_key_value_heads
    assert body.head_dim == (getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads)
    assert [layer.block for layer in body.layers] == list(model.model.layers)
    assert body.final_norm is model.model.norm and body.lm_head is model.lm_head
    for layer in body.layers:
        attn = getattr(layer.block, "self_attn", None)
        assert layer.attn is attn
        if attn is None:
            assert layer.kind == "linear" and layer.mixer is layer.block.linear_attn
            continue
        for name in ("q", "k", "v", "o"):
            assert getattr(layer, name) is getattr(attn, f"{name}_proj", None)
        assert layer.fused == hasattr(attn, "qkv_proj")


def test_kinds_and_windows_are_what_the_layers_hand_their_attention(family: tuple[str, Any, torch.Tensor]) -> None:
    model_type, model, ids = family
    body = anatomy.of(model)
    config = model.config
    types = getattr(config, "layer_types", None)
    if types is not None:
        assert body.kinds == [_KINDS.get(t, t) for t in types]
    assert body.kinds == layer_kinds(config.to_dict())
    attention = [layer.index for layer in body.layers if layer.kind != "linear"]
    every = frozenset(range(body.n_layers))
    settings: dict[int, engine.Settings] = {}

    def keep(handed: engine.Handed) -> None:
        settings[handed.layer] = handed.settings

    request = engine.Request(positions=None, layers=frozenset(), stop=False, taps=dict.fromkeys(every, keep))
    with engine.session(request) as got, torch.inference_mode():
        model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False)
    assert sorted(got.seen) == attention == sorted(settings)  # linear layers never call the attention function
    for index in attention:
        given = settings[index].sliding_window
        layer = body.layers[index]
        assert layer.window == given, (model_type, index)
        assert (layer.kind == "sliding") == (given is not None)
        if given is not None:
            assert given == config.sliding_window == families.WINDOW


def test_norms_sit_where_they_read_and_write(family: tuple[str, Any, torch.Tensor]) -> None:
    """Each norm the anatomy names reads or writes exactly the tensor its place says, and no
    norm module of a layer is left out."""
    model_type, model, ids = family
    body = anatomy.of(model)
    seen: dict[tuple[int, str], torch.Tensor] = {}
    handles = []

    def keep(key: tuple[int, str], where: str) -> Any:
        def hook(_m: Any, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> None:
            x = args[0] if args else kwargs["hidden_states"]
            seen[(*key, "in")] = x.detach().clone()  # type: ignore[index]
            seen[(*key, "out")] = (out[0] if isinstance(out, tuple) else out).detach().clone()  # type: ignore[index]

        return hook

    for layer in body.layers:
        parts = {"mixer": layer.mixer, "mlp": layer.mlp, **vars(layer.norms)}
        for name, module in parts.items():
            if module is not None:
                handles.append(module.register_forward_hook(keep((layer.index, name), name), with_kwargs=True))
        named = {n for n, m in layer.block.named_children() if "norm" in n}
        assert {id(getattr(layer.block, n)) for n in named} <= {
            id(m) for m in vars(layer.norms).values() if m is not None
        }
    try:
        with torch.inference_mode():
            model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False)
    finally:
        for handle in handles:
            handle.remove()

    def same(a: tuple[int, str, str], b: tuple[int, str, str]) -> bool:
        return torch.equal(seen[a], seen[b])  # type: ignore[index]

    for layer in body.layers:
        i, n = layer.index, layer.norms
        if n.attn_pre is not None:
            assert same((i, "attn_pre", "out"), (i, "mixer", "in")), model_type
        if n.attn_post is not None:
            assert same((i, "attn_post", "in"), (i, "mixer", "out")), model_type
        if n.mlp_pre is not None:
            assert same((i, "mlp_pre", "out"), (i, "mlp", "in")), model_type
        if n.mlp_post is not None:
            assert same((i, "mlp_post", "in"), (i, "mlp", "out")), model_type
        if n.placement == "parallel":
            assert same((i, "mlp", "in"), (i, "mixer", "in")), model_type
    expected = {"cohere": "parallel", "gemma2": "sandwich", "gemma3_text": "sandwich", "glm4": "sandwich"}
    expected |= {"olmo2": "post", "olmo3": "post", "exaone4": "post"}
    assert {layer.norms.placement for layer in body.layers} == {expected.get(model_type, "pre")}


def test_logits_are_the_models_own(family: tuple[str, Any, torch.Tensor]) -> None:
    """final norm, lm_head, the scale and the soft-cap of the anatomy give the model's own logits."""
    model_type, model, ids = family
    body = anatomy.of(model)
    config = model.config
    assert body.softcap == getattr(config, "final_logit_softcapping", None)
    assert body.logit_scale == getattr(config, "logit_scale", None)
    assert body.logits_scaling == getattr(config, "logits_scaling", None)
    last: dict[str, torch.Tensor] = {}
    handle = body.layers[-1].block.register_forward_hook(
        lambda _m, _a, out: last.__setitem__("x", out[0] if isinstance(out, tuple) else out)
    )
    try:
        with torch.inference_mode():
            own = model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False).logits
            mine = body.logits(last["x"])
    finally:
        handle.remove()
    assert torch.allclose(mine, own, atol=1e-5, rtol=1e-5), model_type


def test_refusals_name_their_reason(family: tuple[str, Any, torch.Tensor]) -> None:
    model_type, model, _ = family
    body = anatomy.of(model)
    if any(layer.kind == "linear" for layer in body.layers):
        assert str(body.stack_problem()) == f"this {model_type} model has linear_attention layers"
    elif any(layer.fused for layer in body.layers):
        assert str(body.stack_problem()) == f"the attention of this {model_type} model has no k_proj, v_proj module"
    else:
        assert body.stack_problem() is None
    flows = model_type not in ("cohere", "granite")  # a parallel block, a scaled residual
    flows = flows and not any(layer.kind == "linear" for layer in body.layers)
    assert (body.flow_problem() is None) == flows, (model_type, body.flow_problem())
