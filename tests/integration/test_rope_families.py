"""``rope`` and ``explain`` on the families whose q and k go through q_norm / k_norm before RoPE
(Qwen 3 and Gemma 3 per head, OLMo 2 over the whole projection) and whose layer types have a RoPE
each (Gemma 3: 10,000 for the sliding layers, 1,000,000 for the full ones), against the model's own
rotary embedding module called with the layer type, and eager attention. The q/k norm weights are
random, so leaving a norm out (or applying it the wrong way) breaks k against the captured k."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from attnscope.capture import anatomy, engine
from attnscope.core import rotary
from attnscope.core.explain import explain
from attnscope.core.rope import rope
from attnscope.render import Ctx, render, to_text
from attnscope.results.rope import RopeBase

from support import SEED, families

QK_NORMED = ("qwen3", "gemma3_text", "olmo2")


@pytest.fixture(scope="module", params=QK_NORMED)
def qk_normed(request: pytest.FixtureRequest, tokenizer: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder = families.save(tmp_path_factory.mktemp(request.param) / request.param, request.param, tokenizer)
    with torch.no_grad():  # random q_norm / k_norm gains: a norm left out would show
        loaded = engine.load(str(folder), device="cpu", dtype="float32")
        for name, param in loaded.model.named_parameters():
            if name.endswith(("q_norm.weight", "k_norm.weight")):
                param.add_(0.5 * torch.randn_like(param))
    return loaded


def _eager(loaded: Any, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Eager attention weights (H, T, T) at ``layer`` and o_proj's input (T, H, D) there."""
    model = loaded.model
    ids = torch.tensor([loaded.tokenizer(SEED)["input_ids"]])
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
    return out.attentions[layer][0], seen["x"][0].view(ids.shape[1], -1, attn.head_dim)


@pytest.mark.parametrize("layer", [0, 1])
def test_explain_through_the_qk_norms_equals_eager(qk_normed: Any, layer: int) -> None:
    r = explain(qk_normed, SEED, query="그것을", layer=layer, head=3)
    assert r.ok and r.qk_norm, [c for c in r.checks if not c.ok]
    weights, pre_o = _eager(qk_normed, layer)
    i = r.query.index
    row = weights[3, i]  # (T,): a sliding layer's keys are the window's
    assert float((torch.tensor(r.weights) - row[r.keys]).abs().max()) < 1e-5
    assert float(row[r.masked].abs().max()) == 0.0 and sorted(r.keys + r.masked) == list(range(len(row)))
    assert float((torch.tensor(r.out) - pre_o[i, 3]).abs().max()) < 1e-5
    assert r.rope.q_rotated_vs_post < 1e-5 and r.rope.k_rotated_vs_post < 1e-5


@pytest.mark.parametrize("layer", [0, 1])
def test_rope_through_the_qk_norms(qk_normed: Any, layer: int) -> None:
    r = rope(qk_normed, layer=layer, head=1, deltas=[1, 5])
    assert r.ok and r.qk_norm
    assert r.v_check.k_rotated_vs_post < 1e-5 and r.v_check.q_rotated_vs_post < 1e-5
    assert r.relative_check.max_diff_vs_model < 1e-4


def test_a_left_out_qk_norm_is_caught(qk_normed: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    def plain(body: Any, layer: int, which: Any, x: torch.Tensor, head_dim: int) -> torch.Tensor:
        return body.layers[layer].proj(which)(x).view(*x.shape[:2], -1, head_dim)  # no q_norm / k_norm

    monkeypatch.setattr(rotary, "_pre_rope", plain)
    r = explain(qk_normed, SEED, query="그것을", layer=1, head=0)
    assert not r.ok and {"q_recomputed", "k_recomputed"} <= {c.name for c in r.checks if not c.ok}
    assert rope(qk_normed, layer=1, head=0, deltas=[1]).v_check.k_rotated_vs_post > 1e-3


def test_gemma3_has_a_rope_per_layer_type(tokenizer: Any, tmp_path: Path) -> None:
    loaded = engine.load(str(families.save(tmp_path / "g3", "gemma3_text", tokenizer)), device="cpu", dtype="float32")
    rotary = loaded.model.model.rotary_emb
    body = anatomy.of(loaded.model)
    expected = [
        RopeBase("sliding_attention", 10000.0, "default", [0, 2]),
        RopeBase("full_attention", 1000000.0, "default", [1, 3]),
    ]
    for layer, (kind, theta) in enumerate([("sliding_attention", 1e4), ("full_attention", 1e6)] * 2):
        r = rope(loaded, pos=7, layer=layer, head=0, deltas=[1, 3])
        assert (r.rope_theta, r.bases) == (theta, expected) and r.ok
        own = getattr(rotary, f"{kind}_inv_freq")  # the module's own speeds for this layer type
        assert torch.allclose(torch.tensor([p.inv_freq for p in r.pairs], dtype=torch.float32), own, rtol=1e-6)
        assert r.inv_freq_max_rel_diff is not None and r.inv_freq_max_rel_diff < 1e-6
        positions = torch.tensor([[0, 3, 9, 40]])
        cos, sin = rotary(torch.zeros(1), positions, kind)  # the module itself, called as the model calls it
        mine = body.cos_sin([0, 3, 9, 40], layer)
        assert torch.equal(mine[0], cos[0]) and torch.equal(mine[1], sin[0])
    text = " ".join(to_text(render(rope(loaded, layer=1, head=0, deltas=[1])), width=200).split())
    assert (
        "each layer type has its own RoPE: sliding_attention (layers 0,2) rope_theta 10,000; full_attention"
        " (layers 1,3) rope_theta 1,000,000; the table and the check are layer 1's (full_attention)"
    ) in text
    assert "k is rotated: |k_norm(k_proj(x)) - k|" in text
    ko = " ".join(to_text(render(rope(loaded, layer=0, head=0, deltas=[1]), Ctx(lang="ko")), width=200).split())
    assert (
        "레이어 종류마다 RoPE가 따로 있다. sliding_attention(레이어 0, 2)의 rope_theta는 10,000이고,"
        " full_attention(레이어 1, 3)의 rope_theta는 1,000,000이다." in ko
    )
    assert "위 표와 아래 검사는 레이어 0(sliding_attention)의 것이다." in ko


def test_one_rope_for_every_layer_prints_no_list(loaded: Any) -> None:
    r = rope(loaded, layer=1, head=0, deltas=[1])
    assert [(b.layer_type, b.layers) for b in r.bases] == [("full_attention", [0, 1, 2])] and not r.qk_norm
    text = to_text(render(r), width=200)
    assert "own RoPE" not in text and "|k_proj(x) - k|" in text


def test_explain_says_when_the_scaling_is_not_one_over_root_d(qk_normed: Any) -> None:
    r = explain(qk_normed, SEED, query="그것을", layer=1, head=0)
    assert r.scaled == pytest.approx([s * r.scaling for s in r.scores], abs=1e-5)
    en = " ".join(to_text(render(r), width=200).split())  # the lines as one, wherever they wrap
    ko = " ".join(to_text(render(r, Ctx(lang="ko")), width=200).split())
    if qk_normed.model.config.model_type == "gemma3_text":  # query_pre_attn_scalar 16, head_dim 8
        assert r.scaling == 0.25
        assert "this model multiplies the scores by its own scaling 0.25, not by 1/√d = 0.3536" in en
        assert "scaled = score × scaling" in en and "÷√d" not in en
        assert "점수에 1/√d = 0.3536 대신 자기 scaling 값 0.25를 곱한다." in ko
    else:
        assert "so scores are divided by √d = 2.828" in en and "×scaling" not in en
