"""`explain`: the hand computation against eager attention and o_proj's input, broken q/k/v/RoPE, CLI, render."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
import torch

from attnscope.capture import engine
from attnscope.core import explain as explain_mod
from attnscope.core.explain import explain
from attnscope.render import Ctx, render, to_text
from attnscope.results import from_json

from support import SEED


def eager_reference(loaded, text, layer):
    """Eager attention weights (B, H, T, T) at ``layer`` and o_proj's input (T, H, D) at that layer."""
    model = loaded.model
    ids = torch.tensor([loaded.tokenizer(text)["input_ids"]])
    seen = {}
    attn = model.model.layers[layer].self_attn
    handle = attn.o_proj.register_forward_pre_hook(lambda m, args: seen.__setitem__("x", args[0]))
    model.set_attn_implementation("eager")
    try:
        with torch.no_grad():
            out = model(input_ids=ids, output_attentions=True)
    finally:
        handle.remove()
        engine.prepare(model)
    n_tok = ids.shape[1]
    pre_o = seen["x"][0].view(n_tok, -1, attn.head_dim)  # (T, H*D) -> (T, H, D)
    return out.attentions[layer][0], pre_o


@pytest.mark.parametrize("layer,head", [(0, 0), (1, 3), (2, 2)])
def test_weights_and_out_equal_eager(loaded, layer, head):
    r = explain(loaded, SEED, query="그것을", layer=layer, head=head)
    i = r.query.index
    weights, pre_o = eager_reference(loaded, SEED, layer)
    assert r.keys == list(range(i + 1))
    assert float((torch.tensor(r.weights) - weights[head, i, : i + 1]).abs().max()) < 1e-5
    assert float((torch.tensor(r.out) - pre_o[i, head]).abs().max()) < 1e-5
    assert r.ok and r.max_diff_weights < 1e-5 and r.max_diff_out < 1e-5
    # The note's pseudo-code, by hand, from the reported q and k.
    q, k = torch.tensor(r.q), torch.tensor(r.k)
    assert r.scores == pytest.approx((k @ q).tolist(), abs=1e-4)
    assert r.scaled == pytest.approx([s / math.sqrt(r.head_dim) for s in r.scores], abs=1e-5)
    assert r.weights == pytest.approx(torch.softmax(torch.tensor(r.scaled), -1).tolist(), abs=1e-6)
    assert sum(r.weights) == pytest.approx(1.0, abs=1e-6)
    # GQA: 4 query heads on 2 KV heads.
    assert r.kv_head == head // 2 and head in r.shared_heads and len(r.shared_heads) == 2
    n_tok = len(r.tokens)
    assert r.masked == list(range(i + 1, n_tok)) and r.masked_captured_max == 0.0


def test_q_k_are_post_rope_and_v_is_not_rotated(loaded):
    r = explain(loaded, SEED, query=-1, layer=1, head=1)
    assert r.rope.k_pre_vs_post > 1e-2 and r.rope.q_pre_vs_post > 1e-2
    assert r.rope.k_rotated_vs_post < 1e-5 and r.rope.q_rotated_vs_post < 1e-5
    assert r.rope.v_pre_vs_post < 1e-6


def _perturbed(field: str, monkeypatch):
    """Shift dim 0 of one tensor at position 1 (a shift at every key would cancel in the softmax)."""
    real = explain_mod.project

    def fake(*args, **kwargs):
        proj = real(*args, **kwargs)
        tensor = getattr(proj, field).clone()  # (heads, T, D)
        tensor[:, 1, 0] += 2.0
        return dataclasses.replace(proj, **{field: tensor})

    monkeypatch.setattr(explain_mod, "project", fake)


def _failed(r) -> set[str]:
    return {c.name for c in r.checks if not c.ok}


def test_every_check_passes_and_only_the_row_sum_is_arithmetic(loaded):
    r = explain(loaded, SEED, query="그것을", layer=1, head=0)
    assert r.ok and _failed(r) == set()
    assert {c.name for c in r.checks if c.kind == "arithmetic"} == {"rows_sum_to_one"}


def test_wrong_captured_k_is_caught(loaded, monkeypatch):
    """q and k are recomputed from the layer's input, so a wrong captured k no longer agrees with them."""
    _perturbed("k", monkeypatch)
    r = explain(loaded, SEED, query="그것을", layer=1, head=0)
    assert not r.ok and _failed(r) == {"k_recomputed"}


def test_wrong_k_projection_is_caught(loaded, monkeypatch):
    """A wrong recomputed k changes the recomputed weights: they no longer match the captured row."""
    _perturbed("k_pre", monkeypatch)
    r = explain(loaded, SEED, query="그것을", layer=1, head=0)
    assert not r.ok and {"k_recomputed", "weights"} <= _failed(r) and r.max_diff_weights > 1e-4


def test_wrong_v_is_caught(loaded, monkeypatch):
    _perturbed("v_pre", monkeypatch)
    r = explain(loaded, SEED, query="그것을", layer=1, head=0)
    assert not r.ok and r.max_diff_out > 1e-4 and r.max_diff_weights < 1e-5
    assert _failed(r) == {"v_recomputed", "out"}


def test_missing_rope_is_caught(loaded, monkeypatch):
    monkeypatch.setattr(explain_mod, "model_rope", lambda attn: lambda q, k, cos, sin: (q, k))
    r = explain(loaded, SEED, query="그것을", layer=1, head=0)
    assert not r.ok and {"q_recomputed", "k_recomputed", "weights"} <= _failed(r)


def test_query_at_position_zero(loaded):
    r = explain(loaded, SEED, query=0, layer=0, head=0)
    assert r.keys == [0] and r.weights == pytest.approx([1.0]) and r.ok
    assert r.rope.k_pre_vs_post == pytest.approx(0.0, abs=1e-6)  # angle 0 at position 0


def test_bad_layer_and_head(loaded):
    from attnscope.errors import AttnscopeError

    with pytest.raises(AttnscopeError, match="layer 3 is out of range"):
        explain(loaded, SEED, layer=3, head=0)
    with pytest.raises(AttnscopeError, match="out of range"):
        explain(loaded, SEED, layer=0, head=9)


def test_cli_json(cli, model_dir):
    res = cli("explain", SEED, "--query", "그것을", "--layer", "-1", "--head", "3", "--model", str(model_dir), "--json")
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["schema"] == "attnscope.explain/3"
    for key in ("scores", "scaled", "weights", "out", "max_diff_weights", "max_diff_out"):
        assert key in doc
    assert doc["layer"] == 2 and doc["kv_head"] == 1
    assert len(doc["weights"]) == doc["query"]["index"] + 1
    assert from_json(doc).to_json() == doc


def test_cli_errors(cli, model_dir):
    res = cli("explain", SEED, "--layer", "all", "--head", "0", "--model", str(model_dir))
    assert res.exit_code == 2 and res.stdout == ""
    errors = [line for line in res.stderr.splitlines() if "error" in line]
    assert errors == ["attnscope: error: --layer 'all': give one layer here, a single index such as 0 or -1"]
    res = cli("explain", SEED, "--layer", "0", "--head", "0", "--query", "없음", "--model", str(model_dir))
    assert res.exit_code == 2 and "not in the prompt" in res.stderr


def test_cli_failed_check_exits_5(cli, model_dir, monkeypatch):
    _perturbed("v_pre", monkeypatch)
    res = cli("explain", SEED, "--layer", "0", "--head", "0", "--model", str(model_dir))
    assert res.exit_code == 5 and "check failed" in res.stderr and "MISMATCH" in res.stdout


def test_render_shows_the_steps_in_both_languages(loaded):
    r = explain(loaded, SEED, query="그것을", layer=1, head=3)
    text = to_text(render(r), width=140)
    assert "layer 1, head 3: query '그것을'" in text
    assert "KV head 1, shared by query heads 2-3" in text
    assert "✓ matches the model" in text
    assert "v is not rotated: |v_proj(x) - v| = 0." in text
    row = next(line for line in text.splitlines() if line.strip().startswith("0 "))
    assert f"{r.weights[0]:.4f}" in row and f"{r.scores[0]:.2f}" in row
    ko = to_text(render(r, Ctx(lang="ko")), width=140)
    assert "레이어 1, 헤드 3: Q '그것을'" in ko and "v는 회전하지 않는다" in ko
