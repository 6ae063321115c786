"""``knockout`` and ``patch`` on the tiny GQA model against the plain-transformers references in
support.causal: knockout with eager attention and an additive mask edited by hand in the chosen
layers; patch with one hook per patched run that copies the donor's activation in (K and V at
k_proj's and v_proj's outputs, so a KV head's patch reaches every query head of its group)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from attnscope.core.causal.knockout import knockout, windows_of
from attnscope.core.causal.patch import patch
from attnscope.core.prompt.spec import Selection
from attnscope.core.prompt.targets import Answer
from attnscope.errors import AttnscopeError

from support.causal import Plain, max_diff

PROMPT = "민수는 사과를 샀다. 그는 그것을 먹었다."
CLEAN = "민수는 사과를 샀다. 그는 그것을"
CORRUPT = "지수는 사과를 샀다. 그는 그것을"


@pytest.fixture(scope="module")
def eager(model_dir: Path) -> Plain:
    return Plain(model_dir, attn="eager")


@pytest.fixture(scope="module")
def plain(model_dir: Path) -> Plain:
    return Plain(model_dir)


@pytest.mark.parametrize(("window", "heads"), [(1, None), (2, None), (3, [1, 2])])
def test_knockout_equals_eager_reference(loaded: Any, eager: Plain, window: int, heads: list[int] | None) -> None:
    got = knockout(
        loaded,
        PROMPT,
        key="사과를",
        query="그것을",
        answer=Answer("."),
        window=window,
        selection=Selection(heads=heads),
    )
    keys, queries = eager.span(PROMPT, "사과를"), eager.span(PROMPT, "그것을")
    assert got.key.span == keys and got.query.span == queries
    base = eager.knockout(PROMPT, ".", [], queries, keys, None)
    assert abs(got.baseline - base) < 1e-5
    assert [w.layers for w in got.windows] == windows_of(3, window)
    for w in got.windows:
        ref = eager.knockout(PROMPT, ".", w.layers, queries, keys, heads) - base
        assert abs(w.effect - ref) < 1e-5, (w.layers, w.effect, ref)
    assert any(abs(w.effect) > 1e-4 for w in got.windows)


def test_knockout_last_position_and_layer_range(loaded: Any, eager: Plain) -> None:
    got = knockout(loaded, PROMPT, key="사과를", answer=Answer("."), selection=Selection(layers=[0, 1]))
    t = eager.ids(PROMPT).shape[1]
    assert got.query.span == [t - 1] and [w.layers for w in got.windows] == [[0, 1]] and got.window == 0
    ref = eager.knockout(PROMPT, ".", [0, 1], [t - 1], got.key.span, None) - got.baseline
    assert abs(got.windows[0].effect - ref) < 1e-5


@pytest.mark.parametrize("direction", ["denoise", "noise"])
def test_patch_equals_reference(loaded: Any, plain: Plain, direction: str) -> None:
    got = patch(loaded, CLEAN, CORRUPT, answer=Answer(" 그"), direction=direction, sites=["head", "resid", "k", "v"])  # type: ignore[arg-type]
    into, donor = (CORRUPT, CLEAN) if direction == "denoise" else (CLEAN, CORRUPT)
    assert abs(got.clean - plain.logprob(CLEAN, " 그")) < 1e-5
    assert abs(got.corrupt - plain.logprob(CORRUPT, " 그")) < 1e-5
    for site, raw, rec in (
        ("head", got.heads_metric, got.heads),
        ("resid", got.residual_metric, got.residual),
        ("k", got.k_metric, got.k),
        ("v", got.v_metric, got.v),
    ):
        ref = plain.patch(into, donor, site, " 그")
        assert raw is not None and rec is not None
        assert max_diff(raw, ref) < 1e-5, site
        expect = [[(v - got.corrupt) / (got.clean - got.corrupt) for v in row] for row in ref]
        assert max_diff(rec, expect) < 1e-3, site
    assert got.shared_by == [[0, 1], [2, 3]]
    assert got.residual is not None and len(got.residual[0]) == len(got.clean_tokens)


def test_patch_lengths_differ_and_align(loaded: Any, plain: Plain) -> None:
    other = "민수는 책을 샀다. 그는 그것을"
    with pytest.raises(AttnscopeError, match="21 tokens and the corrupt prompt is 18 tokens"):
        patch(loaded, CLEAN, other, answer=Answer(" 그"))
    got = patch(loaded, CLEAN, other, answer=Answer(" 그"), align=True, sites=["head", "resid"])
    assert got.offset == 3 and got.positions == list(range(18))
    assert max_diff(got.heads_metric, plain.patch(other, CLEAN, "head", " 그", offset=3)) < 1e-5
    assert max_diff(got.residual_metric, plain.patch(other, CLEAN, "resid", " 그", offset=3)) < 1e-5
