"""The derived numbers, written once in ``attnscope.results.derive``: hand-built rows with known
bars, no-sink and ties, and the check that ``render`` runs on the same functions."""

from __future__ import annotations

import dataclasses

import pytest

from attnscope.results import derive
from attnscope.results.check import problem
from attnscope.results.common import ModelInfo, Query, Token, Word
from attnscope.results.segments import Segment, SegmentedToken
from attnscope.results.weights import WeightsResult, WeightsView

LABELS = ["a", "b", "c", "d"]
TOKENS = [Token(index=i, id=i, text=t, start=2 * i, end=2 * i + 1, word=i // 2, label=t) for i, t in enumerate(LABELS)]
WORDS = [Word(index=0, text="a b", tokens=[0, 1]), Word(index=1, text="c d", tokens=[2, 3])]
# one layer, two heads, query 3 (keys 0..3)
ROWS = [[[0.4, 0.2, 0.3, 0.1], [0.6, 0.1, 0.1, 0.2]]]


def _numbers(rows: list[list[list[float]]], view: WeightsView) -> derive.WeightsNumbers:
    keys = derive.weight_keys(TOKENS, WORDS, [], 3, view.by)
    return derive.weights_numbers(derive.f32(rows), None, keys, 3, [0], [0, 1], 2, view)


def _bars(numbers: derive.WeightsNumbers) -> list[float]:
    return [round(b.weight, 6) for b in numbers.chart.bars]


def test_bars_mean_max_and_words():
    mean = _numbers(ROWS, WeightsView())
    assert _bars(mean) == [0.5, 0.15, 0.2, 0.15] and mean.chart.total == pytest.approx(1.0)
    assert [b.is_query for b in mean.chart.bars] == [False, False, False, True]
    assert _bars(_numbers(ROWS, WeightsView(agg="max"))) == [0.6, 0.2, 0.3, 0.2]
    words = _numbers(ROWS, WeightsView(by="word"))
    assert [b.tokens for b in words.chart.bars] == [[0, 1], [2, 3]] and _bars(words) == [0.65, 0.35]
    assert [v for (v,) in words.strip.values] == pytest.approx([0.65, 0.35])  # one layer: the mean over its heads
    assert mean.sink_share == pytest.approx(0.5)  # position 0 leads, so it is named


def test_no_sink_drops_position_zero_and_renormalises():
    numbers = _numbers(ROWS, WeightsView(no_sink=True, per_head=True))
    head0, head1 = ([round(b.weight, 6) for b in c.bars] for c in numbers.per_head)
    assert head0 == [0.0, round(0.2 / 0.6, 6), 0.5, round(0.1 / 0.6, 6)]
    assert head1 == [0.0, 0.25, 0.25, 0.5]
    assert numbers.chart.bars[0].excluded and not numbers.chart.bars[1].excluded
    assert numbers.sink_share is None
    with pytest.raises(Exception, match="no_sink"):
        derive.drop_sink(derive.f32([[[1.0]]]))


def test_ties_go_to_the_first_head_and_the_first_key():
    same = [[[0.4, 0.2, 0.2, 0.2], [0.4, 0.2, 0.2, 0.2]]]
    hardest = _numbers(same, WeightsView()).hardest
    assert [(h.label, h.head) for h in hardest] == [("b", 0), ("c", 0)]  # equal weights: key order, head 0
    assert [(h.label, h.head) for h in _numbers(ROWS, WeightsView()).hardest] == [("c", 0), ("b", 0)]
    grid = derive.f32([[0.5, 0.5], [0.5, 0.1]])
    assert [(layer, head) for layer, head, _ in derive.ranked(grid)] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert derive.order(derive.f32([0.1, 0.3, 0.3, 0.0])) == [1, 2, 0, 3]


def _result(view: WeightsView) -> WeightsResult:
    numbers = _numbers(ROWS, view)
    return WeightsResult(
        model=ModelInfo(
            id="hand", num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1, dtype="float32", device="cpu"
        ),
        text="a b c d",
        chat=False,
        tokens=TOKENS,
        words=WORDS,
        query=Query(index=3, text="d", span=[3]),
        layers=[0],
        heads=[0, 1],
        kv_heads=[0, 0],
        weights=ROWS,
        view=view,
        chart=numbers.chart,
        strip=numbers.strip,
        per_head=numbers.per_head,
        sink_share=numbers.sink_share,
        hardest=numbers.hardest,
        segments=[Segment(index=0, kind="prompt", tokens=[0, 1, 2, 3])],
    )


@pytest.mark.parametrize("view", [WeightsView(), WeightsView(by="word", no_sink=True, per_head=True, agg="max")])
def test_the_check_derives_with_the_same_functions(view):
    """A result built from the derivation passes the check; one edited number is named."""
    r = _result(view)
    assert problem(r) is None
    bars = list(r.chart.bars)
    bars[1] = dataclasses.replace(bars[1], weight=bars[1].weight + 0.01)
    edited = dataclasses.replace(r, chart=dataclasses.replace(r.chart, bars=bars))
    assert f"the bar of tokens {bars[1].tokens} is" in (problem(edited) or "")
    moved = dataclasses.replace(r, weights=[[[0.3, 0.3, 0.3, 0.1], ROWS[0][1]]])  # raw rows edited instead
    assert (problem(moved) or "").startswith("chart:")


def test_a_generate_step():
    tokens = [SegmentedToken(**dataclasses.asdict(t), segment=0 if t.index < 3 else 1) for t in TOKENS]
    segments = [Segment(index=0, kind="prompt", tokens=[0, 1, 2]), Segment(index=1, kind="answer", tokens=[3])]
    keys = derive.generate_keys(tokens, segments, len(WORDS), 3, [0], [[0]])
    rows = derive.f32([[r[:3] for r in [[0.5, 0.3, 0.2], [0.2, 0.2, 0.6]]]])  # (1, 2, 3): the step at position 3
    step = derive.step_numbers(rows, keys, [0], [0, 1])
    assert step.segments == [[[1.0, 0.0], [1.0, 0.0]]]
    assert [(w.word, round(w.weight, 6)) for w in step.top_words] == [(0, 0.6), (1, 0.4)]
    # the prompt's own text leaves position 0 out: head 1 puts 0.8 there, head 0 0.5
    assert [(h.head, round(h.weight, 6)) for h in step.prompt_heads] == [(1, 0.8), (0, 0.5)]
