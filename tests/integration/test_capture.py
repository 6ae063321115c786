"""Captured rows against eager output_attentions, the independent reference."""

from __future__ import annotations

import pytest
import torch

from attnscope.capture import engine

from support import SEED, reference, tiny


def eager_rows(model, ids, mask):
    return reference.eager_attentions(model, ids, mask)


@pytest.mark.parametrize("side", ["none", "left", "right"])
@pytest.mark.parametrize("heads,kv", [(4, 2), (6, 3), (7, 1), (4, 4)])
def test_rows_equal_eager(tokenizer, side, heads, kv):
    model = tiny.make_model(
        tiny.make_config(len(tokenizer), num_hidden_layers=2, num_attention_heads=heads, num_key_value_heads=kv)
    )
    prompts = [SEED] if side == "none" else [SEED, "hello world", "The cat sat."]
    tokenizer.padding_side = "left" if side == "none" else side
    enc = tokenizer(prompts, padding=True, return_tensors="pt")
    ids, mask = enc["input_ids"], enc["attention_mask"]
    T = ids.shape[1]
    positions = torch.arange(T).expand(len(prompts), T)
    got = engine.run(model, ids, mask, engine.Request(positions=positions, layers=frozenset({0, 1})))
    ref = eager_rows(model, ids, mask)
    real = mask.bool()[:, None, :]  # (B, 1, T): real query rows
    for layer in (0, 1):
        rows = got.rows[layer]  # (B, H, T, T)
        diff = (rows - ref[layer]).abs().amax(dim=-1)  # (B, H, T)
        assert float(diff[real.expand_as(diff)].max()) < 1e-5
        sums = rows.sum(-1)[real.expand_as(diff)]
        assert torch.allclose(sums, torch.ones_like(sums), atol=1e-5)
        # nothing after the query position, exactly
        upper = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        assert float(rows[:, :, upper].abs().max()) == 0.0
        # pad columns are exactly zero
        pad_cols = ~mask.bool()[:, None, None, :]
        assert float((rows * pad_cols).abs().max()) == 0.0


def test_layers_after_the_last_requested_do_not_run(loaded):
    seen = []
    hooks = [
        layer.register_forward_hook(lambda m, i, o, k=k: seen.append(k))
        for k, layer in enumerate(loaded.model.model.layers)
    ]
    try:
        ids = torch.tensor([loaded.tokenizer(SEED)["input_ids"]])
        engine.run(
            loaded.model,
            ids,
            torch.ones_like(ids),
            engine.Request(positions=torch.tensor([[3]]), layers=frozenset({0})),
        )
    finally:
        for h in hooks:
            h.remove()
    assert seen == []  # layer 0 stops inside its attention; later layers never start


def test_no_logits_computed(loaded):
    calls = []
    hook = loaded.model.lm_head.register_forward_hook(lambda *a: calls.append(1))
    try:
        ids = torch.tensor([loaded.tokenizer(SEED)["input_ids"]])
        engine.run(
            loaded.model,
            ids,
            torch.ones_like(ids),
            engine.Request(positions=torch.tensor([[3]]), layers=frozenset({2})),
        )
    finally:
        hook.remove()
    assert calls == []
