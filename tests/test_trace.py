"""`trace`: rows against the model's own hidden states and logits, the compare rows, a broken lens, CLI, render."""

from __future__ import annotations

import json

import pytest
import torch

from attnscope.core import trace as trace_mod
from attnscope.core.trace import trace
from attnscope.render import Ctx, render, to_text
from attnscope.results import from_json
from attnscope.results.common import ModelInfo, Token
from attnscope.results.trace import Compare, CompareRow, NextCheck, TopToken, TraceResult, TraceRow

from conftest import SEED


def reference(loaded, text):
    """Independent reference: one plain full forward of the causal LM, all positions."""
    ids = torch.tensor([loaded.tokenizer(text)["input_ids"]])
    with torch.no_grad():
        out = loaded.model(input_ids=ids, output_hidden_states=True)
    return ids[0], out.hidden_states, out.logits[0]


def test_rows_follow_the_model(loaded):
    r = trace(loaded, SEED, pos=-1, dims=4, top=3)
    ids, hidden, logits = reference(loaded, SEED)
    p = len(ids) - 1
    assert r.position == p
    assert [row.stage for row in r.rows] == ["embedding", "layer 1", "layer 2", "layer 3"]  # hidden_states index
    # The embedding row is the embedding table's row for this token id, by hand.
    table = loaded.model.model.embed_tokens.weight[int(ids[p])]
    assert r.rows[0].head_dims == pytest.approx(table[:4].tolist(), abs=1e-6)
    # Layers 1..L-1 are hidden_states[k]; the last row is the raw layer output, whose norm is hidden_states[-1].
    for k in range(1, 3):
        assert r.rows[k].norm == pytest.approx(float(hidden[k][0, p].norm()), rel=1e-5)
    assert r.check.hidden_states_last_normed == 0.0
    raw_last = torch.tensor(r.rows[-1].head_dims)
    assert not torch.allclose(raw_last, hidden[-1][0, p, :4], atol=1e-3)  # the raw output is not the normed one
    # cos_prev by hand from the reference hidden states.
    cos = torch.nn.functional.cosine_similarity(hidden[2][0, p], hidden[1][0, p], dim=0)
    assert r.rows[2].cos_prev == pytest.approx(float(cos), abs=1e-5)
    assert r.rows[0].cos_prev is None
    # The last row's top-1 is the model's own next-token prediction.
    assert r.check.ok and r.check.match
    assert r.next_token.id == int(logits[p].argmax())
    assert r.rows[-1].top[0].id == int(logits[p].argmax())
    assert r.rows[-1].top[0].prob == pytest.approx(float(torch.softmax(logits[p], -1).max()), abs=1e-5)
    assert len(r.rows[-1].top) == 3


def test_same_token_elsewhere_has_the_same_embedding_then_diverges(loaded):
    r = trace(loaded, SEED)
    ids = loaded.tokenizer(SEED)["input_ids"]
    assert r.compare is not None
    other = r.compare.position
    assert other != r.position and ids[other] == ids[r.position] and r.compare.same_id
    assert r.compare.rows[0].max_abs_diff == 0.0
    assert r.compare.rows[0].cos == pytest.approx(1.0)
    assert all(row.max_abs_diff > 1e-3 for row in r.compare.rows[1:])


def test_compare_pos_with_a_different_token(loaded):
    r = trace(loaded, SEED, pos=-1, compare_pos=0)
    assert r.compare is not None and r.compare.position == 0
    ids = loaded.tokenizer(SEED)["input_ids"]
    assert r.compare.same_id == (ids[0] == ids[-1])
    assert r.compare.rows[0].max_abs_diff > 0


def test_broken_lens_is_caught(loaded, monkeypatch):
    """A logit lens that forgets the final norm no longer matches the model's logits."""
    monkeypatch.setattr(trace_mod, "final_norm", lambda model: torch.nn.Identity())
    r = trace(loaded, SEED)
    assert not r.check.ok
    assert r.check.max_diff_logits > r.check.tolerance


def test_bad_inputs(loaded):
    from attnscope.errors import AttnscopeError

    with pytest.raises(AttnscopeError, match="pos 99 is out of range"):
        trace(loaded, SEED, pos=99)
    with pytest.raises(AttnscopeError, match="itself"):
        trace(loaded, SEED, pos=-1, compare_pos=-1)


def test_cli_json_and_roundtrip(cli, model_dir):
    res = cli("trace", SEED, "--model", str(model_dir), "--json", "--top", "2", "--dims", "3")
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["schema"] == "attnscope.trace/2"
    assert len(doc["rows"]) == 4
    row = doc["rows"][1]
    assert set(row) >= {"stage", "norm", "cos_prev", "head_dims", "top"}
    assert len(row["head_dims"]) == 3 and set(row["top"][0]) == {"token", "id", "prob"}
    assert doc["next_token"]["id"] == doc["rows"][-1]["top"][0]["id"]
    assert isinstance(doc["position"], int)
    assert from_json(doc).to_json() == doc


def test_cli_failed_check_exits_5(cli, model_dir, monkeypatch):
    monkeypatch.setattr(trace_mod, "final_norm", lambda model: torch.nn.Identity())
    res = cli("trace", SEED, "--model", str(model_dir))
    assert res.exit_code == 5
    assert "check failed" in res.stderr
    assert "MISMATCH" in res.stdout


def test_cli_bad_lang(cli, model_dir):
    res = cli("trace", SEED, "--model", str(model_dir), "--lang", "fr")
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr.strip().startswith("attnscope: error: --lang")


def _hand_result() -> TraceResult:
    tok = Token(index=1, id=7, text="는", start=2, end=3, word=0, label="는")
    top = [TopToken(token=" 그", id=5, prob=0.5)]
    rows = [
        TraceRow(stage="embedding", layer=0, norm=1.0, cos_prev=None, head_dims=[0.1, -0.2], top=top),
        TraceRow(stage="layer 1", layer=1, norm=2.5, cos_prev=0.25, head_dims=[0.3, 0.4], top=top),
    ]
    return TraceResult(
        model=ModelInfo(
            id="tiny", num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1, dtype="float32", device="cpu"
        ),
        text="민수는",
        chat=False,
        tokens=[Token(index=0, id=3, text="민수", start=0, end=2, word=0, label="민수"), tok],
        position=1,
        token=tok,
        dims=2,
        rows=rows,
        next_token=top[0],
        check=NextCheck(
            lens=top[0],
            model=top[0],
            match=True,
            max_diff_logits=0.0,
            hidden_states_last_normed=0.0,
            tolerance=1e-4,
            ok=True,
        ),
        compare=Compare(
            position=0,
            token=tok,
            same_id=True,
            rows=[
                CompareRow(stage="embedding", layer=0, cos=1.0, max_abs_diff=0.0),
                CompareRow(stage="layer 1", layer=1, cos=0.9, max_abs_diff=0.5),
            ],
        ),
    )


def test_render_snapshot():
    text = to_text(render(_hand_result()), width=100)
    lines = [line.rstrip() for line in text.splitlines()]
    assert lines[0] == "trace of position 1 '는' (token id 7)"
    assert "stage          first 2 dims       norm  cos prev  cos vs 0  logit lens top-1" in lines
    assert "embedding      [+0.100 -0.200]    1.00         -    1.0000  ' 그' 0.50" in lines
    assert "after layer 0  [+0.300 +0.400]    2.50     0.250    0.9000  ' 그' 0.50" in lines
    assert any("same ✓ (max |Δlogit| 0)" in line for line in lines)
    ko = to_text(render(_hand_result(), Ctx(lang="ko")), width=100)
    assert "임베딩은 토큰 ID만으로 정해진다" in ko
    assert any(line.startswith("레이어 0 뒤  [+0.300 +0.400]") for line in ko.splitlines())
    narrow = to_text(render(_hand_result()), width=62)  # only the logit-lens column is cut
    assert any(
        line.startswith("after layer 0  [+0.300 +0.400]    2.50     0.250    0.9000") for line in narrow.splitlines()
    )


@pytest.mark.slow
def test_real_model_trace(real_loaded):
    r = trace(real_loaded, SEED)
    assert len(r.rows) == 25 and r.check.ok and r.check.hidden_states_last_normed == 0.0
    assert r.compare is not None and r.compare.same_id  # the two '.' tokens
    assert r.compare.rows[0].max_abs_diff == 0.0 and r.compare.rows[1].max_abs_diff > 0


@pytest.mark.parametrize(
    "where,message", [("attn", "attention weights at layer 1, head 1"), ("mlp", "the output of layer 1")]
)
def test_nan_stops_with_the_layer(model_dir, where, message):
    from attnscope.errors import AttnscopeError, ExitCode
    from attnscope.loading import load

    fresh = load(str(model_dir), device="cpu", dtype="float32")  # not the shared fixture: this one is broken
    layer = fresh.model.model.layers[1]
    with torch.no_grad():
        if where == "attn":
            layer.self_attn.q_proj.weight[8:16] = float("nan")  # head 1 (head_dim 8)
        else:
            layer.mlp.down_proj.weight[0, 0] = float("inf")
    with pytest.raises(AttnscopeError, match=message) as info:
        trace(fresh, SEED)
    assert info.value.code == ExitCode.NUMERIC
