"""The mergeable aggregates of attnscope stats, in numpy alone: Chan's merge against numpy on the
pooled values, any split and order, the Poisson weights, the byte form, and the rankings."""

from __future__ import annotations

import numpy as np
import pytest

from attnscope.core.stats.aggregates import Partial, add_prompt, bin_index, edges_of, poisson_weights, statistics
from attnscope.results.derive import stats_top
from attnscope.results.stats import Statistic

S, L, H, B = 2, 3, 2, 40


def _prompt(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One prompt's n values per (statistic, layer, head) and its aggregates as the worker makes them."""
    x = rng.random((S, L, H, n))
    count = np.full(S, n)
    sums = x.sum(-1)
    m2 = ((x - x.mean(-1, keepdims=True)) ** 2).sum(-1)
    hist = np.zeros((S, L, H, 20), np.int64)
    for s in range(S):
        idx = bin_index(x[s], edges_of("sink"))
        for k in range(20):
            hist[s, ..., k] = (idx == k).sum(-1)
    return x, count, sums, m2, hist


def _partial(prompts: list[tuple[int, tuple[np.ndarray, ...]]]) -> Partial:
    part = Partial.empty(S, L, H, B, 4)
    lines = np.array([line for line, _ in prompts])
    weights = poisson_weights(5, lines, B) if prompts else np.zeros((0, B))
    for (line, (_, count, sums, m2, hist)), w in zip(prompts, weights, strict=True):
        add_prompt(part, line, w, count, sums, m2, hist)
    return part


def test_chan_merge_equals_numpy_on_the_pooled_values_in_any_split_and_order() -> None:
    rng = np.random.default_rng(0)
    prompts = [(line, _prompt(rng, int(rng.integers(1, 30)))) for line in range(1, 41)]
    pooled = np.concatenate([p[0] for _, p in prompts], axis=-1)
    whole = _partial(prompts)
    np.testing.assert_allclose(whole.mean, pooled.mean(-1), rtol=1e-12)
    np.testing.assert_allclose(whole.m2 / whole.count[0], pooled.var(-1), rtol=1e-10)
    for cut in ([5, 17, 30], [1], [39]):
        pieces = [prompts[a:b] for a, b in zip([0, *cut], [*cut, len(prompts)], strict=True)]
        for order in (pieces, pieces[::-1]):
            merged = Partial.empty(S, L, H, B, 4)
            for piece in order:
                merged.merge(_partial(piece))
            np.testing.assert_allclose(merged.mean, whole.mean, rtol=1e-12)
            np.testing.assert_allclose(merged.m2, whole.m2, rtol=1e-10)
            np.testing.assert_allclose(merged.boot_sum, whole.boot_sum, rtol=1e-12)
            assert np.array_equal(merged.hist, whole.hist) and merged.count.tolist() == whole.count.tolist()
            assert sorted(merged.lines.tolist()) == list(range(1, 41))
    back = Partial.from_bytes(whole.to_bytes())
    assert np.array_equal(back.boot_sum, whole.boot_sum) and np.array_equal(back.lines, whole.lines)


def test_poisson_weights_depend_on_the_seed_and_the_line_only() -> None:
    a = poisson_weights(3, np.array([7, 8]), 100)
    assert np.array_equal(a[0], poisson_weights(3, np.array([7]), 100)[0])
    assert not np.array_equal(a[0], a[1]) and not np.array_equal(a, poisson_weights(4, np.array([7, 8]), 100))
    assert abs(a.mean() - 1.0) < 0.3


def test_the_interval_covers_the_mean_and_a_cell_without_count_is_null() -> None:
    rng = np.random.default_rng(1)
    part = _partial([(line, _prompt(rng, 10)) for line in range(1, 31)])
    got = statistics(part, ("sink", "self"))
    low, mean, high = (np.array(getattr(got["sink"], k), float) for k in ("ci_low", "mean", "ci_high"))
    assert ((low < mean) & (mean < high)).all() and got["sink"].n[0][0] == 300
    empty = statistics(Partial.empty(1, 2, 2, 10, 4), ("induction",))["induction"]
    assert empty.mean == [[None, None], [None, None]] and empty.n == [[0, 0], [0, 0]]


def test_bins_hold_their_lower_edge_and_the_last_holds_everything_above() -> None:
    edges = edges_of("sink")
    assert bin_index(np.array([0.0, 0.05, 0.999, 1.0, 7.0, -1.0]), edges).tolist() == [0, 1, 19, 19, 19, 0]
    assert edges_of("distance")[:4].tolist() == [0.0, 1.0, 2.0, 4.0]


def test_stats_top_ranks_by_mean_then_layer_and_head_and_skips_nulls() -> None:
    stat = Statistic(
        mean=[[0.5, None], [0.9, 0.5]],
        std=[[0.0, None], [0.0, 0.0]],
        n=[[1, 0], [1, 1]],
        ci_low=[[0.4, None], [0.8, 0.4]],
        ci_high=[[0.6, None], [1.0, 0.6]],
    )
    top = stats_top(stat, 5)
    assert [(h.layer, h.head) for h in top] == [(1, 0), (0, 0), (1, 1)]
    assert top[0].ci_low == pytest.approx(0.8)
