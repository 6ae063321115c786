"""weights: --measure norm, the sink line, who looks hardest, largest-remainder sums, long prompts."""

from __future__ import annotations

import json
import re

import pytest
import torch

from attnscope import render
from attnscope.capture import engine
from attnscope.core.prompt.spec import Selection
from attnscope.core.weights import weights
from attnscope.render.weights import MAX_KEYS
from attnscope.results.weights import WeightsView

from support import SEED


def _text(result, lang="en", width=120):
    console = render.console(width=width)
    with console.capture() as cap:
        console.print(render.view(result, render.Ctx(lang=lang, width=width)))
    return cap.get()


def test_norms_are_alpha_times_the_value_vector_norm(loaded):
    """norms[l][h][j] = alpha_ij ||f_h(x_j)||, with f_h from v_proj and o_proj's columns of head h (GQA)."""
    r = weights(loaded, SEED, query="그것을", view=WeightsView(by="token"), measure="norm")
    model = loaded.model
    q = r.query.index
    ids = torch.tensor([loaded.tokenizer(SEED)["input_ids"]])
    seen = {}
    hooks = [
        layer.self_attn.v_proj.register_forward_hook(lambda m, i, o, k=k: seen.__setitem__(k, o[0].detach().clone()))
        for k, layer in enumerate(model.model.layers)
    ]
    try:
        with torch.no_grad():
            model(input_ids=ids)
    finally:
        for h in hooks:
            h.remove()
        engine.prepare(model)
    n_heads, n_kv = r.model.num_attention_heads, r.model.num_key_value_heads
    for li, layer in enumerate(r.layers):
        attn = model.model.layers[layer].self_attn
        d = attn.head_dim
        v = seen[layer].view(-1, n_kv, d)  # (T, KV, D)
        for hi, head in enumerate(r.heads):
            w = attn.o_proj.weight[:, head * d : (head + 1) * d]  # (hidden, D)
            with torch.no_grad():
                f = v[: q + 1, head // (n_heads // n_kv)] @ w.T  # (q+1, hidden)
            expected = torch.tensor(r.weights[li][hi]) * f.norm(dim=-1)
            assert torch.allclose(torch.tensor(r.norms[li][hi]), expected, rtol=1e-4, atol=1e-6)
    assert r.measure == "norm" and r.completeness_max_diff is not None and r.completeness_max_diff <= 1e-4
    # the chart shows shares of the norm, each head's row summing to 1 before the mean
    shares = torch.tensor(r.norms) / torch.tensor(r.norms).sum(-1, keepdim=True)
    assert [b.weight for b in r.chart.bars] == pytest.approx(shares.mean(dim=(0, 1)).tolist(), abs=1e-6)


def test_weight_measure_leaves_norms_empty(loaded):
    r = weights(loaded, SEED, query="그것을")
    assert r.measure == "weight" and r.norms == [] and r.completeness_max_diff is None


def test_hardest_is_the_head_with_most_weight_on_each_word(loaded):
    r = weights(loaded, SEED, query="그것을", view=WeightsView(by="word"))
    raw = torch.tensor(r.weights)  # (L, H, q+1)
    q = r.query.index
    words = [w for w in r.words if w.tokens and w.tokens[-1] <= q and q not in w.tokens]
    assert {h.label for h in r.hardest} == {w.text for w in words if [t for t in w.tokens if t != 0]}
    for h in r.hardest:
        on = raw[..., h.tokens].sum(-1)  # (L, H)
        assert h.weight == pytest.approx(float(on.max()))
        assert float(on[r.layers.index(h.layer), r.heads.index(h.head)]) == pytest.approx(h.weight)
        assert 0 not in h.tokens
    assert [h.weight for h in r.hardest] == sorted((h.weight for h in r.hardest), reverse=True)


def test_sink_share_is_named_only_when_position_zero_leads(loaded):
    r = weights(loaded, SEED, query="그것을", view=WeightsView(by="token"))
    bars = [b.weight for b in r.chart.bars]
    if max(bars) == bars[0]:
        assert r.sink_share == pytest.approx(bars[0])
        assert "attention sink" in _text(r)
    else:
        assert r.sink_share is None and "attention sink" not in _text(r)
    assert weights(loaded, SEED, query="그것을", view=WeightsView(no_sink=True)).sink_share is None


def test_printed_values_add_up_in_the_view(loaded):
    r = weights(loaded, SEED, query="그것을", view=WeightsView(by="token"))
    text = _text(r)
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("weights the query mixes in"))
    end = next(i for i, line in enumerate(lines) if "-----" in line and i > start)
    cells = [re.findall(r"(?<!\S)(\d\.\d\d)(?!\S)", line)[0] for line in lines[start + 1 : end]]
    printed = [float(c) for c in cells]
    total = float(lines[end + 1].split()[-1])
    assert round(sum(printed), 2) == total


def test_long_prompt_shows_top_keys_and_one_row_for_the_rest(cli, model_dir):
    prompt = " ".join(["a b c d e f"] * 4)  # 24 words, one token each
    res = cli("weights", prompt, "--model", str(model_dir), "--width", "120")
    assert res.exit_code == 0, res.stderr
    assert "other words" in res.stdout
    doc = json.loads(cli("weights", prompt, "--model", str(model_dir), "--json").stdout)
    n_words = len(doc["chart"]["bars"])
    assert n_words > MAX_KEYS + 1
    assert f"{n_words - MAX_KEYS} other words" in res.stdout
    everything = cli("weights", prompt, "--model", str(model_dir), "--all-keys", "--width", "120")
    assert "other words" not in everything.stdout


def test_cli_norm_json_and_both_languages(cli, model_dir):
    res = cli("weights", SEED, "--query", "그것을", "--measure", "norm", "--model", str(model_dir), "--json")
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["measure"] == "norm" and doc["view"]["by"] == "word"
    assert len(doc["norms"]) == len(doc["weights"]) and len(doc["norms"][0][0]) == len(doc["weights"][0][0])
    assert doc["completeness_max_diff"] <= 1e-4
    for lang, word in (("en", "completeness"), ("ko", "완전성 검사")):
        shown = cli(
            "weights", SEED, "--query", "그것을", "--measure", "norm", "--model", str(model_dir), "--lang", lang
        )
        assert shown.exit_code == 0 and word in shown.stdout
    bad = cli("weights", SEED, "--measure", "size", "--model", str(model_dir))
    assert bad.exit_code == 2 and "--measure 'size'" in bad.stderr


def test_heads_norm_scores_match_the_weights_norm_chart(loaded):
    """heads --measure norm ranks by the key's share of the norm: the same number weights --measure norm charts."""
    from attnscope.core.heads import heads

    r = heads(loaded, SEED, query="그것을", key="사과를", measure="norm", top=3)
    assert r.measure == "norm" and r.completeness_max_diff is not None and r.completeness_max_diff <= 1e-4
    best = r.top[0]
    w = weights(
        loaded,
        SEED,
        query="그것을",
        selection=Selection(layers=[best.layer], heads=[best.head]),
        view=WeightsView(by="token"),
        measure="norm",
    )
    on_key = sum(b.weight for b in w.chart.bars if b.tokens[0] in r.key.span)
    assert best.score == pytest.approx(on_key, abs=1e-6)
    plain = heads(loaded, SEED, query="그것을", key="사과를", top=3)
    assert plain.measure == "weight" and plain.completeness_max_diff is None
    assert {(s.layer, s.head): s.score for s in plain.ranking} != {(s.layer, s.head): s.score for s in r.ranking}


def test_matrix_measure_norm_cells_are_shares_of_the_weights_norms(loaded):
    """matrix --measure norm: each row is alpha_ij ||f_h(x_j)|| over its sum, the same numbers weights gives."""
    from attnscope.core.matrix import matrix

    layer, head = 1, 3
    plain = matrix(loaded, SEED, layer=layer, head=head)
    r = matrix(loaded, SEED, layer=layer, head=head, measure="norm")
    assert r.measure == "norm" and r.value_norms is not None and plain.value_norms is None
    assert r.weights == plain.weights  # the raw weights stay the raw weights
    last = len(r.weights) - 1
    for i, row in enumerate(r.weights):
        measured = [row[j] * r.value_norms[j] for j in range(i + 1)]
        total = sum(measured)
        assert r.view.cells[i][: i + 1] == pytest.approx([m / total for m in measured], abs=1e-6)
    assert max(abs(a - b) for a, b in zip(r.view.cells[last], plain.view.cells[last], strict=True)) > 1e-3
    w = weights(
        loaded,
        SEED,
        query=last,
        selection=Selection(layers=[layer], heads=[head]),
        view=WeightsView(by="token"),
        measure="norm",
    )
    from_weights = w.norms[0][0]
    total = sum(from_weights)
    assert r.view.cells[last] == pytest.approx([x / total for x in from_weights], abs=1e-5)
