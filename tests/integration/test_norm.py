"""The norm measure ||alpha_ij f_h(x_j)|| against a direct computation, and the completeness check."""

from __future__ import annotations

import pytest
import torch

from attnscope.capture import anatomy, engine, hooks, norm

from support import SEED, tiny


def _direct(model, ids):
    """Per layer: v_proj output (T, KV, D) and o_proj's real output (T, hidden), from hooks."""
    seen: dict[str, dict[int, torch.Tensor]] = {"v": {}, "o": {}}
    hooks = []
    for k, layer in enumerate(model.model.layers):
        attn = layer.self_attn
        hooks.append(attn.v_proj.register_forward_hook(lambda m, i, o, k=k: seen["v"].__setitem__(k, o[0].detach())))
        hooks.append(attn.o_proj.register_forward_hook(lambda m, i, o, k=k: seen["o"].__setitem__(k, o[0].detach())))
    return seen, hooks


@pytest.mark.parametrize("heads,kv", [(4, 2), (6, 3), (7, 1)])
def test_norms_equal_a_direct_computation(tokenizer, heads, kv):
    config = tiny.make_config(len(tokenizer), num_hidden_layers=2, num_attention_heads=heads, num_key_value_heads=kv)
    model = tiny.make_model(config)
    with torch.no_grad():  # give v_proj and o_proj a bias, so b_V and b_O are both exercised
        for layer in model.model.layers:
            layer.self_attn.v_proj.bias.normal_()
            layer.self_attn.o_proj.bias = torch.nn.Parameter(torch.randn(config.hidden_size))
    ids = torch.tensor([tokenizer(SEED)["input_ids"]])  # (1, T)
    T = ids.shape[1]
    seen, hooks = _direct(model, ids)
    positions = torch.tensor([[T - 1, T // 2]])
    try:
        got = engine.run(
            model,
            ids,
            torch.ones_like(ids),
            engine.Request(positions=positions, layers=frozenset({0, 1}), norms=frozenset({0, 1}), stop=False),
        )
    finally:
        for h in hooks:
            h.remove()
    D = config.hidden_size // heads
    groups = heads // kv
    with torch.no_grad():
        _check(model, got, seen, positions, T, D, heads, kv, groups, config.hidden_size)


def _check(model, got, seen, positions, T, D, heads, kv, groups, hidden):
    for layer in (0, 1):
        o_proj = model.model.layers[layer].self_attn.o_proj
        v = seen["v"][layer].clone().view(T, kv, D)  # (T, KV, D), b_V included
        rows = got.rows[layer][0]  # (H, P, T)
        mix = torch.zeros(positions.shape[1], hidden)
        for h in range(heads):
            w_h = o_proj.weight[:, h * D : (h + 1) * D]  # (hidden, D)
            f = v[:, h // groups, :] @ w_h.T  # (T, hidden): f_h(x_j) for every key
            assert torch.allclose(got.norms[layer][0, h], f.norm(dim=-1), rtol=1e-4, atol=1e-5)
            mix += rows[h] @ f  # (P, hidden)
        reference = seen["o"][layer].clone()[positions[0]]  # (P, hidden), the model's own o_proj output
        assert torch.allclose(mix + o_proj.bias, reference, atol=1e-4)
        assert got.completeness[layer] <= 1e-4


def test_completeness_fails_when_the_head_columns_are_wrong(loaded):
    """A permuted head order in o_proj's columns must break the check: it can fail."""
    model = loaded.model
    ids = torch.tensor([loaded.tokenizer(SEED)["input_ids"]])
    got = engine.run(
        model,
        ids,
        torch.ones_like(ids),
        engine.Request(
            positions=torch.tensor([[ids.shape[1] - 1]]),
            layers=frozenset({0}),
            norms=frozenset({0}),
        ),
    )
    kept = hooks.capture(anatomy.of(model), ids, torch.ones_like(ids), ["v.0", "z.0"], cpu=True)
    v, output = kept["v.0"], kept["z.0"]  # (1, KV, T, D), (1, T, H, D)
    rows = got.rows[0]
    o_proj = model.model.layers[0].self_attn.o_proj
    good = norm.completeness(rows, v, output, torch.tensor([[ids.shape[1] - 1]]), o_proj)
    assert good <= 1e-5
    assert abs(good - got.completeness[0]) < 1e-6
    swapped = rows[:, [2, 1, 0, 3]]  # heads 0 and 2 read different KV heads (4 heads, 2 KV heads)
    bad = norm.completeness(swapped, v, output, torch.tensor([[ids.shape[1] - 1]]), o_proj)
    assert bad > 1e-3
