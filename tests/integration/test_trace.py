"""`trace`: rows against the model's own hidden states and logits, the compare rows, a broken lens, CLI, render."""

from __future__ import annotations

import json

import pytest
import torch

from attnscope.capture.anatomy import Anatomy
from attnscope.core.trace import trace
from attnscope.results import from_json

from support import SEED


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
    assert [row.layer for row in r.rows] == [0, 1, 2, 3]  # hidden_states index: 0 = the embedding
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
    monkeypatch.setattr(Anatomy, "norm_module", lambda self: torch.nn.Identity())
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
    assert doc["schema"] == "attnscope.trace/3"
    assert len(doc["rows"]) == 4
    row = doc["rows"][1]
    assert set(row) >= {"layer", "norm", "cos_prev", "head_dims", "top"} and "stage" not in row
    assert len(row["head_dims"]) == 3 and set(row["top"][0]) == {"token", "id", "prob"}
    assert doc["next_token"]["id"] == doc["rows"][-1]["top"][0]["id"]
    assert isinstance(doc["position"], int)
    assert from_json(doc).to_json() == doc


def test_cli_failed_check_exits_5(cli, model_dir, monkeypatch):
    monkeypatch.setattr(Anatomy, "norm_module", lambda self: torch.nn.Identity())
    res = cli("trace", SEED, "--model", str(model_dir))
    assert res.exit_code == 5
    assert "check failed" in res.stderr
    assert "MISMATCH" in res.stdout


def test_cli_bad_lang(cli, model_dir):
    res = cli("trace", SEED, "--model", str(model_dir), "--lang", "fr")
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr.strip().startswith("attnscope: error: --lang")


@pytest.mark.parametrize(
    "where,message", [("attn", "attention weights at layer 1, head 1"), ("mlp", "the output of layer 1")]
)
def test_nan_stops_with_the_layer(model_dir, where, message):
    from attnscope.capture.engine import load
    from attnscope.errors import AttnscopeError, ExitCode

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
