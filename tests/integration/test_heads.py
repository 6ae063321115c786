"""``heads``: the ranking against eager output_attentions (tiny model, and the real one in the slow tier)."""

from __future__ import annotations

import json

import pytest
import torch

from attnscope.core.heads import heads
from attnscope.core.prompt.spec import ChatSpec, Text
from attnscope.render import render, to_text
from attnscope.results.common import ResultWarning

from support import SEED, reference


def eager_attentions(loaded, ids):
    """Per layer (1, H, T, T) from eager output_attentions: the independent reference."""
    return reference.eager_attentions(loaded.model, torch.tensor([ids]))


@pytest.mark.parametrize("agg", ["last", "mean"])
@pytest.mark.parametrize("no_sink", [False, True])
def test_ranking_matches_eager(loaded, agg, no_sink):
    r = heads(loaded, SEED, query="그것을", key="사과를", query_agg=agg, no_sink=no_sink, top=3)
    assert len(r.query.span) == 3 and len(r.key.span) > 1  # the tiny tokenizer splits both into several tokens
    ref = reference.heads_scores(
        eager_attentions(loaded, loaded.tokenizer(SEED)["input_ids"]), r.query.span, r.key.span, agg, no_sink
    )
    L, H = ref.shape
    assert len(r.ranking) == L * H == 12
    for s in r.ranking:
        assert s.score == pytest.approx(float(ref[s.layer, s.head]), abs=1e-5)
        assert s.kv_head == s.head // 2
    assert [s.score for s in r.ranking] == sorted((s.score for s in r.ranking), reverse=True)
    best = divmod(int(ref.flatten().argmax()), H)
    assert (r.ranking[0].layer, r.ranking[0].head) == best
    assert [(t.layer, t.head) for t in r.top] == [(s.layer, s.head) for s in r.ranking[:3]]
    assert r.top[0].row[r.key.span[0]] >= 0 and len(r.top[0].row) == r.query.index + 1
    assert sum(r.top[0].row) == pytest.approx(1.0, abs=1e-5)


def test_mean_and_last_differ_for_a_multi_token_query(loaded):
    last = heads(loaded, SEED, query="그것을", key="사과를", query_agg="last")
    mean = heads(loaded, SEED, query="그것을", key="사과를", query_agg="mean")
    assert [s.score for s in last.ranking] != [s.score for s in mean.ranking]
    assert "their rows are averaged (--query-agg mean)" in to_text(render(mean), width=160)


def test_cli_json(cli, model_dir):
    res = cli("heads", SEED, "--query", "그것을", "--key", "사과를", "--model", str(model_dir), "--json", "--top", "2")
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["schema"] == "attnscope.heads/2"
    assert doc["query"] == {"index": 20, "text": "그것을", "span": [18, 19, 20]}
    assert doc["key"] == {"text": "사과를", "span": [5, 6, 7, 8, 9, 10]}
    assert len(doc["ranking"]) == 12 and set(doc["ranking"][0]) == {"layer", "head", "kv_head", "score"}
    assert {(e["layer"], e["head"]) for e in doc["ranking"]} == {(a, b) for a in range(3) for b in range(4)}
    assert len(doc["top"]) == 2


def test_view_shows_top_heads_and_heatmap(loaded):
    r = heads(loaded, SEED, query="그것을", key="사과를", top=2)
    text = to_text(render(r), width=100)
    first = r.ranking[0]
    assert f"{first.score:.2f}" in text
    assert "그것을" in text and "사과를" in text
    assert "│" in text  # KV group separator in the heatmap (4 heads, 2 KV heads)
    assert text.count("\n") > 3 + 3  # the top table and one heatmap row per layer


@pytest.mark.parametrize(
    "args, message",
    [
        (["--query", "사과를", "--key", "그것을"], "ends after the query"),
        (["--query", "그것을", "--key", "바나나"], "not in the prompt"),
        (["--query", "그것을", "--key", "사과를", "--query-agg", "max"], "--query-agg"),
        (["--query", "그것을", "--key", "사과를", "--top", "0"], "--top"),
        (["--query", "그것을", "--key", "사과를", "--key-occurrence", "2"], "--key-occurrence 2 is out of range"),
        (["--query", "민수는", "--key", "민", "--no-sink"], "position 0"),
    ],
)
def test_bad_inputs(cli, model_dir, args, message):
    res = cli("heads", SEED, *args, "--model", str(model_dir))
    assert res.exit_code == 2
    assert res.stdout == ""
    errors = [line for line in res.stderr.splitlines() if line.startswith("attnscope: error:")]
    assert len(errors) == 1 and message in errors[0]


def test_ambiguous_key_warns(loaded):
    r = heads(loaded, "그는 그는 그것을", query="그것을", key="그는")
    assert r.warnings == [ResultWarning(code="ambiguous_key", text="그는", count=2)]
    assert r.key == heads(loaded, "그는 그는 그것을", query="그것을", key=Text("그는", occurrence=1)).key


def test_chat_template_spans(loaded):
    plain = heads(loaded, SEED, query="그것을", key="사과를")
    chat = heads(loaded, SEED, query="그것을", key="사과를", chat=ChatSpec(system="짧게"))
    assert chat.chat and chat.text.startswith("<|im_start|>system\n짧게")
    shift = chat.query.span[0] - plain.query.span[0]
    assert shift > 0 and [i - shift for i in chat.key.span] == plain.key.span  # same spans, after the template's prefix
