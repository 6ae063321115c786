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


# --- heads, patch, flow: what the views read off a result --------------------------------


def test_heads_grid_lays_the_ranking_out():
    from attnscope.results.heads import HeadScore

    ranking = [HeadScore(1, 0, 0, 0.75), HeadScore(0, 3, 1, 0.6), HeadScore(0, 1, 0, 0.6), HeadScore(1, 2, 1, 0.5)]
    grid = derive.heads_grid(ranking, 2, 4)
    assert grid.scores == [[0.0, 0.6, 0.0, 0.6], [0.75, 0.0, 0.5, 0.0]]
    assert grid.kv_of == [0, 0, 1, 1]
    assert grid.best == [1, 0]  # layer 0: heads 1 and 3 tie, the first is named
    assert grid.top == 0.75
    assert grid.strong == 3  # more than half: 0.75, 0.6, 0.6 (0.5 is not)


def test_best_recovery_skips_nan_and_breaks_ties_low():
    nan = float("nan")
    assert derive.best_recovery([[0.2, nan], [0.9, 0.9]], [4, 8]) == (0.9, 8, 0)
    assert derive.best_recovery([[0.9, 0.1], [0.9, 0.9]], [4, 8]) == (0.9, 4, 0)
    v, layer, j = derive.best_recovery([[nan]], [3])
    assert v != v and (layer, j) == (3, 0)


def _edge(layer, from_, to, importance, kind="attention", head=None):
    from attnscope.results.flow import Edge

    return Edge(layer=layer, kind=kind, block="attention", from_=from_, to=to, head=head, importance=importance)


def test_flow_edges_have_one_order():
    """verify's first K and each layer's list come from the same order: importance, then the later layer."""
    from attnscope.results.flow import LayerCheck

    edges = [
        _edge(0, 1, 2, 0.5),
        _edge(1, 0, 2, 0.5),
        _edge(1, 1, 2, 0.5),
        _edge(1, 2, 2, 0.9, kind="residual"),
        _edge(0, 0, 1, 0.7),
        _edge(0, None, 2, 0.1, kind="bias"),
    ]
    ranked = derive.ranked_edges(edges)
    assert [(e.layer, e.from_, e.to) for e in ranked] == [(0, 0, 1), (1, 0, 2), (1, 1, 2), (0, 1, 2)]
    checks = [LayerCheck(layer, [2], [2], 0.0, 0.0, 1.0) for layer in range(3)]
    routes = derive.flow_routes(edges, checks, 1e-3, pos=2)
    for found in routes.attention.values():
        assert found == [e for e in ranked if e.layer == found[0].layer]
    assert [(e.layer, e.from_) for e in routes.direct] == [(1, 0), (1, 1), (0, 1)]  # later layers first
    assert routes.quiet == [2]
    assert routes.counts == {"attention": 4, "residual": 1, "mlp": 0, "bias": 1}


# --- stats: the rules the means and the intervals follow ---------------------------------


def _stats_doc():
    import json
    from pathlib import Path

    from attnscope.results import from_json

    doc = json.loads((Path(__file__).parents[1] / "data" / "schemas" / "stats-1.json").read_text(encoding="utf-8"))
    return from_json(doc)


def test_value_bounds_by_hand():
    import numpy as np

    edges = [0.0, 0.25, 0.5, 0.75, 1.0]
    counts = [[[0, 2, 1, 0], [3, 0, 0, 1], [0, 0, 0, 0]]]  # values in [0.25, 0.75); anywhere; nothing
    low, high = derive.value_bounds("sink", edges, counts)
    assert low[0, :2].tolist() == [0.25, 0.0] and high[0, :2].tolist() == [0.75, 1.0]
    assert np.isnan(low[0, 2]) and np.isnan(high[0, 2])
    low, high = derive.value_bounds("distance", [0.0, 1.0, 2.0, 4.0], [[[0, 0, 5]]])
    assert (low[0, 0], high[0, 0]) == (2.0, np.inf)  # the last bin holds anything above its edge


def test_the_stats_check_names_an_edited_mean_interval_or_count():
    r = _stats_doc()
    assert problem(r) is None

    def edited(name, what, layer, head, value):
        st = r.stats[name]
        grid = [list(row) for row in getattr(st, what)]
        grid[layer][head] = value
        stats = {**r.stats, name: dataclasses.replace(st, **{what: grid})}
        return problem(dataclasses.replace(r, stats=stats)) or ""

    assert "the mean of L0 H1 is 1.5, outside" in edited("sink", "mean", 0, 1, 1.5)
    assert "stats.sink: the ci_high of L1 H0" in edited("sink", "ci_high", 1, 0, -0.2)
    assert "n of L0 H0 is 1, but its histogram counts" in edited("self", "n", 0, 0, 1)
    assert "mean is null where n is not 0" in edited("entropy", "mean", 0, 0, None)
    sink = r.stats["sink"]
    low, high = sink.ci_low[0][0], sink.ci_high[0][0]
    assert low < high
    swapped = dataclasses.replace(
        sink,
        ci_low=[[high, *row[1:]] if i == 0 else row for i, row in enumerate(sink.ci_low)],
        ci_high=[[low, *row[1:]] if i == 0 else row for i, row in enumerate(sink.ci_high)],
    )
    assert "stats.sink: at L0 H0 its interval runs backwards" == problem(
        dataclasses.replace(r, stats={**r.stats, "sink": swapped})
    )
    corpus = dataclasses.replace(r.corpus, positions=r.corpus.positions + 1)
    assert "the corpus counted" in (problem(dataclasses.replace(r, corpus=corpus)) or "")
