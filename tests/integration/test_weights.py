"""`weights`: core against eager rows, the view maths, the CLI and JSON schema, a render snapshot."""

from __future__ import annotations

import json
from typing import Any

import pytest
import torch

import attnscope
from attnscope.core.prompt.spec import Selection, Text
from attnscope.core.weights import weights
from attnscope.render import render, to_text
from attnscope.results import from_json
from attnscope.results.weights import WeightsResult, WeightsView

from support import SEED, reference


def eager_query_rows(loaded, text, q):
    ids = torch.tensor([loaded.tokenizer(text)["input_ids"]])
    attentions = reference.eager_attentions(loaded.model, ids)
    return torch.stack([a[0, :, q, : q + 1] for a in attentions])  # (L, H, q+1)


def test_weights_equal_eager(loaded):
    r = weights(loaded, SEED, query="그것을")
    ref = eager_query_rows(loaded, SEED, r.query.index)
    got = torch.tensor(r.weights)
    assert got.shape == ref.shape == (3, 4, r.query.index + 1)
    assert float((got - ref).abs().max()) < 1e-5
    assert r.chart.total == pytest.approx(1.0, abs=1e-5)
    assert r.kv_heads == [0, 0, 1, 1]


def test_selection_and_aggregation(loaded):
    full = weights(loaded, SEED, query="그것을")
    r = weights(
        loaded, SEED, query="그것을", selection=Selection(layers=[-1], heads=[1, 3]), view=WeightsView(agg="max")
    )
    assert r.layers == [2] and r.heads == [1, 3]
    rows = torch.tensor(full.weights)[2][[1, 3]]
    assert [b.weight for b in r.chart.bars] == pytest.approx(rows.max(dim=0).values.tolist())


def test_by_word_sums_tokens(loaded):
    r = weights(loaded, SEED, query="그것을", view=WeightsView(by="word"))
    tok = weights(loaded, SEED, query="그것을")
    labels = [b.label for b in r.chart.bars]
    assert labels[:4] == ["민수는", "사과를", "샀다.", "그는"]
    first_word = [b.weight for b in tok.chart.bars if b.tokens[0] in r.words[0].tokens]
    assert r.chart.bars[0].weight == pytest.approx(sum(first_word))
    assert r.chart.total == pytest.approx(1.0, abs=1e-5)


def test_no_sink_renormalises_per_head(loaded):
    r = weights(loaded, SEED, query=5, view=WeightsView(no_sink=True, per_head=True))
    raw = torch.tensor(r.weights)  # raw rows stay raw
    assert float(raw[..., 0].min()) > 0
    for chart in r.per_head:
        assert chart.bars[0].excluded and chart.bars[0].weight == 0.0
        assert chart.total == pytest.approx(1.0, abs=1e-5)
        row = raw[r.layers.index(chart.layer), r.heads.index(chart.head)]
        assert chart.bars[1].weight == pytest.approx(float(row[1] / row[1:].sum()), abs=1e-6)
    assert "--no-sink: position 0 excluded" in to_text(render(r), width=120)


def test_cli_json_schema(cli, model_dir):
    res = cli("weights", SEED, "--query", "그것을", "--model", str(model_dir), "--json", "--layer", "0,2")
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["schema"] == "attnscope.weights/3"
    assert set(doc["model"]) >= {
        "id",
        "num_hidden_layers",
        "num_attention_heads",
        "num_key_value_heads",
        "dtype",
        "device",
    }
    assert set(doc["tokens"][0]) >= {"index", "id", "text", "start", "end", "word"}
    q = doc["query"]["index"]
    assert doc["layers"] == [0, 2] and doc["heads"] == [0, 1, 2, 3]
    assert len(doc["weights"]) == 2 and len(doc["weights"][0]) == 4 and len(doc["weights"][0][0]) == q + 1
    assert "사과를" in res.stdout  # Korean stays Korean in JSON
    assert isinstance(from_json(doc), WeightsResult)


def test_cli_view(cli, model_dir):
    res = cli("weights", SEED, "--query", "그것을", "--model", str(model_dir), "--by", "word", "--width", "100")
    assert res.exit_code == 0
    out = res.stdout
    assert "사과를" in out and "<- self" in out and "sum" in out and "1.00" in out
    assert "keys x layers" in out


def test_cli_per_head_shows_kv_group(cli, model_dir):
    res = cli("weights", SEED, "--model", str(model_dir), "--layer", "1", "--head", "2-3", "--per-head")
    assert res.exit_code == 0
    assert "layer 1 head 2 (KV head 1)" in res.stdout and "layer 1 head 3 (KV head 1)" in res.stdout


def test_python_api_errors_do_not_mention_flags(loaded: Any) -> None:
    for kwargs, words in (
        ({"selection": Selection(layers=[99])}, "layer 99 is out of range: the model has 3 layers (0-2, or -1 to -3)"),
        ({"selection": Selection(heads=[7])}, "head 7 is out of range: the model has 4 heads"),
        ({"query": "없는말"}, "query '없는말' is not in the prompt"),
        ({"query": 99}, "pos 99 is out of range: the prompt has"),
        ({"query": Text("그", occurrence=5)}, "occurrence 5 is out of range"),
        ({"measure": "size"}, "measure 'size': use weight or norm"),
    ):
        with pytest.raises(attnscope.AttnscopeError) as bad:
            attnscope.weights(loaded, SEED, **kwargs)
        assert words in bad.value.message and "--" not in bad.value.message, bad.value.message
