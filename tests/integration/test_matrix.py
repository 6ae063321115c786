"""``matrix``: one head's T x T weights against eager output_attentions, grouping rules, memory refusal."""

from __future__ import annotations

import json

import pytest
import torch

from attnscope.capture import engine
from attnscope.core.matrix import matrix
from attnscope.errors import AttnscopeError
from attnscope.render import render, to_text

from support import SEED, reference, tiny


def eager(model, ids):
    return reference.eager_attentions(model, torch.tensor([ids]))  # per layer (1, H, T, T)


@pytest.fixture(scope="module")
def ref(loaded):
    return eager(loaded.model, loaded.tokenizer(SEED)["input_ids"])


def test_weights_equal_eager(loaded, ref):
    r = matrix(loaded, SEED, layer=1, head=3)
    want = ref[1][0, 3]  # (T, T)
    got = torch.tensor(r.weights)
    assert got.shape == want.shape == (28, 28)
    assert float((got - want).abs().max()) < 1e-5
    assert torch.allclose(got.sum(-1), torch.ones(28), atol=1e-5)
    assert float(got.triu(diagonal=1).abs().max()) == 0.0  # nothing after the query, exactly
    assert r.kv_head == 1 and r.window == [0, 28] and r.view.by == "token"
    assert r.view.cells == r.weights


def test_negative_indices(loaded, ref):
    r = matrix(loaded, SEED, layer=-1, head=-1)
    assert (r.layer, r.head) == (2, 3)
    assert float((torch.tensor(r.weights) - ref[2][0, 3]).abs().max()) < 1e-5


@pytest.mark.parametrize("n_heads, n_kv", [(4, 2), (7, 1), (6, 3)])
def test_head_filter_computes_one_head(tokenizer, n_heads, n_kv):
    model = tiny.make_model(
        tiny.make_config(len(tokenizer), num_hidden_layers=1, num_attention_heads=n_heads, num_key_value_heads=n_kv)
    )
    ids = torch.tensor([tokenizer(SEED)["input_ids"]])
    T = ids.shape[1]
    positions = torch.arange(T)[None, :]
    every = engine.run(model, ids, torch.ones_like(ids), engine.Request(positions=positions, layers=frozenset({0})))
    for head in range(n_heads):
        one = engine.run(
            model,
            ids,
            torch.ones_like(ids),
            engine.Request(positions=positions, layers=frozenset({0}), heads=frozenset({head})),
        )
        assert one.rows[0].shape == (1, 1, T, T)  # only that head is ever built
        assert torch.equal(one.rows[0][0, 0], every.rows[0][0, head])


def test_window(loaded, ref):
    r = matrix(loaded, SEED, layer=0, head=2, window=(5, 20))
    full = ref[0][0, 2]
    assert r.window == [5, 20]
    assert float((torch.tensor(r.weights) - full[5:20, 5:20]).abs().max()) < 1e-5
    assert float((torch.tensor(r.before) - full[5:20, :5].sum(-1)).abs().max()) < 1e-5
    text = to_text(render(r), width=100)
    assert "<5" in text


def test_by_word_is_mean_over_query_tokens_of_sum_over_key_tokens(loaded, ref):
    r = matrix(loaded, SEED, layer=2, head=0, by="word")
    full = ref[2][0, 0]
    words = [w.tokens for w in r.words]
    assert r.view.by == "word" and r.view.groups == words
    for i, qw in enumerate(words):
        for j, kw in enumerate(words):
            want = float(full[qw][:, kw].sum(-1).mean())
            assert r.view.cells[i][j] == pytest.approx(want, abs=1e-5)
        assert sum(r.view.cells[i]) == pytest.approx(1.0, abs=1e-5)
    assert r.view.labels[1] == "사과를"
    assert "mean over the row word's query tokens" in to_text(render(r), width=300)


def test_long_prompt_is_condensed_into_blocks(loaded, ref):
    r = matrix(loaded, SEED, layer=1, head=1, max_groups=5)
    full = ref[1][0, 1]
    assert r.view.by == "block" and len(r.view.groups) <= 5
    assert sum(r.view.groups, []) == list(range(28))
    for i, qg in enumerate(r.view.groups):
        for j, kg in enumerate(r.view.groups):
            assert r.view.cells[i][j] == pytest.approx(float(full[qg][:, kg].sum(-1).mean()), abs=1e-5)
    assert len(r.weights) == 28  # JSON still has every weight


def test_view_has_causal_triangle_and_labels(loaded):
    r = matrix(loaded, "민수는 사과를 샀다.", layer=0, head=0)
    n = len(r.tokens)
    text = to_text(render(r), width=100)
    assert text.count(" ·") == n * (n - 1) // 2 + 1  # one per masked cell, plus the legend's
    assert "민 1/3" in text and "를 3/3" in text


def test_cli_refuses_when_memory_is_short(cli, model_dir, monkeypatch):
    monkeypatch.setenv("ATTNSCOPE_MEMORY_LIMIT", "40K")  # 28 x 28 needs about 78 KB, 8 x 28 about 22 KB
    res = cli("matrix", SEED, "--layer", "0", "--head", "0", "--model", str(model_dir))
    assert res.exit_code == 4 and res.stdout == ""
    assert "need about" in res.stderr and "--window" in res.stderr
    res = cli("matrix", SEED, "--layer", "0", "--head", "0", "--window", "20:28", "--model", str(model_dir))
    assert res.exit_code == 0, res.stderr  # 8 x 28 fits


def test_cli_json(cli, model_dir):
    res = cli("matrix", SEED, "--layer", "1", "--head", "2", "--model", str(model_dir), "--json")
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["schema"] == "attnscope.matrix/2"
    assert (doc["layer"], doc["head"], doc["kv_head"]) == (1, 2, 1)
    assert len(doc["tokens"]) == 28 and len(doc["weights"]) == 28 and len(doc["weights"][5]) == 28


@pytest.mark.parametrize(
    "args, message",
    [
        (["--layer", "all", "--head", "0"], "one layer"),
        (["--layer", "0,1", "--head", "0"], "one layer"),
        (["--layer", "3", "--head", "0"], "out of range"),
        (["--layer", "0", "--head", "9"], "out of range"),
        (["--layer", "0", "--head", "0", "--window", "9:3"], "out of range"),
        (["--layer", "0", "--head", "0", "--window", "a:b"], "whole numbers"),
        (["--layer", "0", "--head", "0", "--window", "2:5", "--by", "word"], "--by word"),
        (["--layer", "0", "--head", "0", "--by", "char"], "--by"),
    ],
)
def test_bad_inputs(cli, model_dir, args, message):
    res = cli("matrix", SEED, *args, "--model", str(model_dir))
    assert res.exit_code == 2 and res.stdout == ""
    errors = [line for line in res.stderr.splitlines() if line.startswith("attnscope: error:")]
    assert len(errors) == 1 and message in errors[0]


def test_capture_memory_guard_counts_only_the_selected_heads(loaded, monkeypatch):
    ids = torch.tensor([loaded.tokenizer(SEED)["input_ids"]])  # (1, 28)
    positions = torch.arange(28)[None, :]
    monkeypatch.setenv("ATTNSCOPE_MEMORY_LIMIT", "30K")  # 4 heads: about 50 KB; 1 head: about 12 KB
    one = engine.Request(positions=positions, layers=frozenset({0}), heads=frozenset({1}))
    assert engine.run(loaded.model, ids, torch.ones_like(ids), one).rows[0].shape == (1, 1, 28, 28)
    with pytest.raises(AttnscopeError):
        engine.run(loaded.model, ids, torch.ones_like(ids), engine.Request(positions=positions, layers=frozenset({0})))
