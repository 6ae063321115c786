"""``flow`` on the families whose blocks are normed before they are added (Gemma 2/3 and GLM-4's
sandwich, OLMo 2/3 and EXAONE 4's post norms), against the reference in support.flow, which writes
each post norm out by hand from its modeling file and freezes its scale at the real forward's.
The norms' weights are random here, so a gain of ``weight`` in place of ``1 + weight`` (or no
norm at all) would not pass; a wrong frozen scale fails the completeness check and the reference."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from attnscope.capture import anatomy
from attnscope.core.causal.flow import flow
from attnscope.errors import AttnscopeError

from support import SEED, families, one_error
from support.flow import reference, value, walk

THRESHOLD = 0.01
POST_NORMED = ("gemma2", "gemma3_text", "olmo2", "olmo3", "glm4", "exaone4")


@pytest.fixture(scope="module", params=POST_NORMED)
def post_normed(request: pytest.FixtureRequest, tokenizer: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp(request.param)
    return families.save(folder / request.param, request.param, tokenizer, norm_gains=True)


def _load(folder: Path) -> Any:
    from attnscope.capture.engine import load

    return load(str(folder), device="cpu", dtype="float32")


def _groups(r: Any) -> list[list[int]]:
    n = r.pos + 1
    if r.by == "token":
        return [[j] for j in range(n)]
    return [g for g in ([j for j in w.tokens if j < n] for w in r.words) if g]


def _key(e: Any) -> tuple[int, str, str, int | None, int, int | None]:
    return (e.layer, e.kind, e.block, e.from_, e.to, e.head)


def _largest_error(r: Any) -> float:
    return max(max(c.attention_error, c.mlp_error) for c in r.layers)


@pytest.mark.parametrize(("by", "heads"), [("token", False), ("word", True)])
def test_parts_add_up_and_equal_the_reference(post_normed: Path, by: str, heads: bool) -> None:
    r = flow(_load(post_normed), SEED, threshold=THRESHOLD, by=by, heads=heads)  # type: ignore[arg-type]
    assert sum(e.kind == "attention" for e in r.edges) >= 3, post_normed.name
    for c in r.layers:
        assert c.attention_error < 1e-4 * max(1.0, c.scale) and c.mlp_error < 1e-4 * max(1.0, c.scale), c
    groups = _groups(r)
    ref = reference(post_normed, r.token_ids[: r.pos + 1], groups, r.heads)
    assert max(float(lay.attention_error.max()) for lay in ref) < 1e-4  # the hand-written norms add up too
    assert {_key(e) for e in r.edges} == walk(ref, r.pos, groups, r.threshold, r.heads)
    for e in r.edges:
        assert abs(e.importance - value(ref, groups, e)) < 1e-5, (post_normed.name, e, value(ref, groups, e))


def test_a_wrong_frozen_scale_fails_completeness(post_normed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = _load(post_normed)
    right = flow(loaded, SEED, threshold=THRESHOLD)
    assert _largest_error(right) < 1e-5
    scale = anatomy.RmsNorm.scale
    monkeypatch.setattr(anatomy.RmsNorm, "scale", lambda self, x: scale(self, x) * 1.01)
    wrong = flow(loaded, SEED, threshold=THRESHOLD)
    assert _largest_error(wrong) > 1e-3, post_normed.name
    groups = _groups(wrong)
    ref = reference(post_normed, wrong.token_ids[: wrong.pos + 1], groups, False)
    assert max(abs(e.importance - value(ref, groups, e)) for e in wrong.edges) > 1e-5


def test_a_norm_flow_cannot_freeze_is_refused(tokenizer: Any) -> None:
    import torch

    model = families.model("gemma3_text", len(tokenizer))
    assert anatomy.Anatomy(model).flow_problem() is None
    model.model.layers[2].post_feedforward_layernorm = torch.nn.LayerNorm(model.config.hidden_size)
    why = anatomy.Anatomy(model).flow_problem()
    assert str(why) == (
        "layer 2 of this gemma3_text model normalises a block's output with post_feedforward_layernorm"
        " (LayerNorm), which is not an RMS norm gain * x / rms(x): with its scale frozen it would still"
        " not be linear in the block's parts"
    )
    with pytest.raises(AttnscopeError, match="post_feedforward_layernorm"):
        anatomy.Anatomy(model).post_norms(2)


def test_cli_on_gemma3_with_verify(cli: Any, tokenizer: Any, tmp_path: Path) -> None:
    post_normed = families.save(tmp_path / "gemma3_text", "gemma3_text", tokenizer, norm_gains=True)
    res = cli("flow", SEED, "--threshold", "0.01", "--verify", "3", "--json", "-m", str(post_normed))
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert max(max(c["attention_error"], c["mlp_error"]) for c in doc["layers"]) < 1e-5
    assert len(doc["verified"]) == 3
    for lang in ("en", "ko"):
        shown = cli("flow", SEED, "--threshold", "0.01", "--lang", lang, "-m", str(post_normed))
        assert shown.exit_code == 0 and ("completeness: the parts add back" in shown.stdout or "합계와" in shown.stdout)


def test_parallel_blocks_are_still_refused(cli: Any, tokenizer: Any, tmp_path: Path) -> None:
    cohere = families.save(tmp_path / "cohere", "cohere", tokenizer)
    one_error(cli("flow", SEED, "-m", str(cohere)), 3, "run attention and MLP side by side")
