"""`reuse`: prefix K/V/rows unchanged, cache == full pass, the counts by hand, and two broken cases it catches."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
import torch

from attnscope.capture import engine
from attnscope.core import reuse as reuse_mod
from attnscope.core.reuse import reuse
from attnscope.errors import AttnscopeError
from attnscope.render import Ctx, render, to_text
from attnscope.results import from_json

PREFIX = "민수는 사과를 샀다."


SUFFIX = " 그는 그것을 먹었다."


def test_prefix_kv_unchanged_and_cache_matches(loaded):
    r = reuse(loaded, PREFIX, SUFFIX)
    tok = loaded.tokenizer
    n_pre = len(tok(PREFIX)["input_ids"])
    n_all = n_pre + len(tok(SUFFIX, add_special_tokens=False)["input_ids"])
    assert r.prefix_tokens == n_pre and len(r.tokens) == n_all
    assert [d.layer for d in r.per_layer] == [0, 1, 2]
    assert r.max_diff_k < 1e-5 and r.max_diff_v < 1e-5 and r.max_diff_rows < 1e-5
    assert all(d.max_future_weight == 0.0 for d in r.per_layer)
    assert r.cache.prefix_len == n_pre and r.cache.copy_len == n_all and r.cache.original_len_after == n_pre
    assert r.cache.cached.id == r.cache.full.id and r.max_diff_logits < 1e-4
    assert r.cache.max_diff_cache_k < 1e-6
    assert r.ok and r.kv_ok and r.cache_ok


def test_full_pass_reference(loaded):
    """The full-pass logits the cache is compared with are a plain forward's, by an independent call."""
    r = reuse(loaded, PREFIX, SUFFIX)
    ids = torch.tensor([[t.id for t in r.tokens]])
    with torch.no_grad():
        logits = loaded.model(input_ids=ids).logits[0, -1]
    assert r.cache.full.id == int(logits.argmax())
    assert r.cache.full.prob == pytest.approx(float(torch.softmax(logits, -1).max()), abs=1e-5)


def test_comparison_counts_by_hand(loaded):
    r = reuse(loaded, "hello", " world", repeat=2)
    c = r.comparisons
    t = 2 * len(r.tokens)
    assert c.tokens == t and c.doubled_tokens == 2 * t
    assert c.per_head_per_layer == t * (t + 1) // 2
    assert c.doubled_per_head_per_layer == (2 * t) * (2 * t + 1) // 2
    assert c.ratio == pytest.approx(2 * (2 * t + 1) / (t + 1))
    assert c.total == c.per_head_per_layer * 3 * 4
    assert c.seconds > 0 and c.doubled_seconds > 0 and c.runs >= 5


def test_positions_counted_from_the_end_are_caught(loaded, monkeypatch):
    """If positions depended on the sequence's length, earlier K would change: the check must say so."""
    monkeypatch.setattr(engine, "position_ids", lambda mask: (mask.long().cumsum(-1) - 1).flip(-1))
    r = reuse(loaded, PREFIX, SUFFIX)
    assert not r.kv_ok and not r.ok
    assert r.per_layer[0].max_diff_k > 1e-3
    assert r.per_layer[0].max_diff_v < 1e-5  # v has no position in it


def test_a_cache_used_in_place_is_caught(loaded, monkeypatch):
    """Without the copy, the prefix's own cache grows: the check reports it."""
    monkeypatch.setattr(reuse_mod, "copy", SimpleNamespace(deepcopy=lambda c: c))
    r = reuse(loaded, PREFIX, SUFFIX)
    assert r.cache.original_len_after == len(r.tokens) != r.cache.prefix_len
    assert not r.cache_ok and not r.ok


def test_boundary_warning(loaded):
    # "hello world" as one text may merge across the boundary; tokenized apart it may not.
    r = reuse(loaded, "hel", "lo world")
    joint = loaded.tokenizer("hello world")["input_ids"]
    assert r.boundary_same == ([t.id for t in r.tokens] == joint)
    if not r.boundary_same:
        assert [w.code for w in r.warnings] == ["boundary_tokens_differ"]


def test_bad_inputs(loaded):
    with pytest.raises(AttnscopeError, match="suffix is empty"):
        reuse(loaded, PREFIX, "")
    with pytest.raises(AttnscopeError, match="prompt is empty"):
        reuse(loaded, "  ", SUFFIX)
    with pytest.raises(AttnscopeError, match="repeat must be at least 1"):
        reuse(loaded, PREFIX, SUFFIX, repeat=0)
    with pytest.raises(AttnscopeError, match="max_position_embeddings"):
        reuse(loaded, PREFIX, SUFFIX, repeat=10)  # the tiny model has 128 positions


def test_cli_json(cli, model_dir):
    res = cli("reuse", PREFIX, SUFFIX, "--model", str(model_dir), "--json")
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["schema"] == "attnscope.reuse/2"
    assert set(doc["per_layer"][0]) >= {"layer", "max_diff_k", "max_diff_v"}
    assert "max_diff_logits" in doc and doc["comparisons"]["ratio"] > 3
    assert from_json(doc).to_json() == doc


def test_cli_failed_check_exits_5(cli, model_dir, monkeypatch):
    monkeypatch.setattr(reuse_mod, "copy", SimpleNamespace(deepcopy=lambda c: c))
    res = cli("reuse", PREFIX, SUFFIX, "--model", str(model_dir))
    assert res.exit_code == 5 and "check failed" in res.stderr


def test_render(loaded):

    r = reuse(loaded, PREFIX, SUFFIX)
    text = to_text(render(r), width=140)
    assert "K, V and the prefix rows are unchanged at every layer ✓" in text
    n = len(r.tokens)
    assert any(line.split()[:3] == ["prompt", str(n), str(n * (n + 1) // 2)] for line in text.splitlines())
    ko = to_text(render(r, Ctx(lang="ko")), width=140)
    assert "토큰을 뒤에 더 붙여도 앞 위치의 K와 V는 그대로다" in ko
