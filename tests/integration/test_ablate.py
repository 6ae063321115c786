"""``ablate`` on the tiny GQA model against the plain-transformers reference in support.causal
(the whole model run once per head, one head at a time, no kept residual)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from attnscope.core.causal.ablate import ablate
from attnscope.core.prompt.spec import IndexRange, Prompts, Selection
from attnscope.core.prompt.targets import Answer

from support.causal import Plain, max_diff

PROMPT = "민수는 사과를 샀다. 그는 그것을 먹었다."
TARGET = "."


@pytest.fixture(scope="module")
def plain(model_dir: Path) -> Plain:
    return Plain(model_dir)


@pytest.mark.parametrize("mode", ["zero", "mean"])
def test_equals_reference(loaded: Any, plain: Plain, mode: str) -> None:
    got = ablate(loaded, PROMPT, answer=Answer(TARGET), mode=mode)  # type: ignore[arg-type]
    ref = plain.ablate(PROMPT, TARGET, mode)
    assert max_diff(got.effects, ref) < 1e-5
    assert abs(got.baseline - plain.logprob(PROMPT, TARGET)) < 1e-5
    assert max(abs(v) for row in ref for v in row) > 1e-3  # the heads do matter on this model


def test_positions_and_mean_over(loaded: Any, plain: Plain) -> None:
    others = ["지수는 책을 읽었다.", "The cat sat on the mat."]
    at = [2, IndexRange(5, 7)]
    got = ablate(
        loaded, PROMPT, answer=Answer(TARGET), mode="mean", positions=at, mean_over=Prompts(others, source="f")
    )
    assert got.positions == [2, 5, 6, 7]
    assert max_diff(got.effects, plain.ablate(PROMPT, TARGET, "mean", [2, 5, 6, 7], others)) < 1e-5
    assert got.mean_tokens == sum(len(plain.tok(t)["input_ids"]) for t in others)


def test_batch_size_does_not_change_effects(loaded: Any) -> None:
    one = ablate(loaded, PROMPT, answer=Answer(TARGET), batch_size=1)
    many = ablate(loaded, PROMPT, answer=Answer(TARGET), batch_size=5)
    assert max_diff(one.effects, many.effects) < 1e-6


def test_logits_in_blocks_across_sweeps(loaded: Any, plain: Plain, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows' logits made at the end, a few rows a block across sweeps of another size, give the reference's effects."""
    from attnscope.core.causal import stack

    vocab = loaded.model.config.vocab_size
    monkeypatch.setattr(stack, "_LOGITS_BYTES", 4 * vocab * 3)  # at most 3 rows a block
    got = ablate(loaded, PROMPT, answer=Answer(TARGET), batch_size=5)
    assert max_diff(got.effects, plain.ablate(PROMPT, TARGET)) < 1e-5


def test_prefix_reuse_equals_full_rerun(loaded: Any, plain: Plain) -> None:
    """A sweep joining at layer l from the kept residual gives what running every layer gives."""
    from attnscope.core.causal.stack import Row, Stack
    from attnscope.core.prompt.targets import resolve_metric

    ids = loaded.tokenizer(PROMPT)["input_ids"]
    stack = Stack(loaded.model, ids)
    metric = resolve_metric(loaded.tokenizer, Answer(TARGET))
    rows = [Row(start=start, hidden=stack.residual[start][0]) for start in range(stack.n_layers)]
    full = plain.logprob(PROMPT, TARGET)
    for value in stack.metrics(stack.sweep(rows), metric):
        assert abs(value - full) < 1e-5


def test_selection_key_and_derived(loaded: Any, plain: Plain) -> None:
    got = ablate(loaded, PROMPT, answer=Answer(TARGET), selection=Selection(layers=[1, 2], heads=[0, 3]), key="사과를")
    assert got.layers == [1, 2] and got.heads == [0, 3]
    ref = plain.ablate(PROMPT, TARGET)
    assert max_diff(got.effects, [[ref[lay][h] for h in (0, 3)] for lay in (1, 2)]) < 1e-5
    assert [e.effect for e in got.ranking] == sorted(e.effect for e in got.ranking)
    assert got.key is not None and got.top_key is None
    assert got.rank_correlation is not None and -1 <= got.rank_correlation <= 1


def test_logit_diff(loaded: Any, plain: Plain) -> None:
    got = ablate(loaded, PROMPT, answer=Answer(TARGET, " 그"), selection=Selection(layers=[0], heads=[1]))
    assert got.metric.kind == "logit_diff" and got.metric.foil_id == plain.tid(" 그")


def test_approx_checks_the_top_exactly(loaded: Any) -> None:
    exact = ablate(loaded, PROMPT, answer=Answer(TARGET))
    est = ablate(loaded, PROMPT, answer=Answer(TARGET), approx=True, check=5)
    assert est.estimated and len(est.checked) == 5
    for c in est.checked:
        assert abs(c.exact - exact.effects[c.layer][c.head]) < 1e-5
    assert est.check_correlation is not None
