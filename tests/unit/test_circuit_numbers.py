"""The circuit graph's edge counts and MIB pruning, and the curve's numbers (faithfulness, CPR and
CMD by MIB's area rule, the bootstrap), each against a hand computation. No model, no torch."""

from __future__ import annotations

import numpy as np
import pytest

from attnscope.results import derive
from attnscope.results.circuit import FRACTIONS
from attnscope.results.graph import Graph, prune


def test_qwen25_05b_has_the_issues_edge_counts() -> None:
    """24 layers, 14 query heads, 2 KV heads: every attention input of layer l reads 1 + 15 l
    upstream nodes, its MLP 15 + 15 l, logits all 361."""
    gqa, mib = Graph("gqa", 24, 14, 2), Graph("mib", 24, 14, 2)
    by_hand_gqa = sum((14 + 2 + 2) * (1 + 15 * layer) + (15 + 15 * layer) for layer in range(24)) + 361
    by_hand_mib = sum((14 * 3) * (1 + 15 * layer) + (15 + 15 * layer) for layer in range(24)) + 361
    assert (gqa.n_edges, mib.n_edges) == (by_hand_gqa, by_hand_mib) == (79_813, 179_749)
    assert len(gqa.upstream) == 361 and len(gqa.downstream) == 24 * 19 + 1
    up, down = gqa.edges
    assert len(up) == gqa.n_edges and gqa.upstream[up[0]] == "input" and gqa.downstream[down[-1]].node == "logits"
    assert gqa.index[("a3.h5", "a7.kv1", "k")] < gqa.index[("a3.h5", "a7.kv1", "v")]
    assert ("m7", "a7.kv0", "k") not in gqa.index and ("a7.h0", "m7", "mlp") in gqa.index


def _keep(graph: Graph, edges: list[tuple[str, str, str]]) -> np.ndarray:
    keep = np.zeros(graph.n_edges, dtype=bool)
    for edge in edges:
        keep[graph.index[edge]] = True
    return keep


def test_pruning_keeps_exactly_the_edges_on_a_path_from_input_to_logits() -> None:
    g = Graph("gqa", 2, 4, 2)
    on_path = [
        ("input", "a0.kv1", "k"),  # reaches heads 2 and 3 of layer 0 (KV head 1's group)
        ("a0.h3", "a1.h0", "q"),
        ("a1.h0", "logits", "logits"),
        ("input", "m1", "mlp"),
        ("m1", "logits", "logits"),
        ("a0.h2", "logits", "logits"),  # a0.h2 is reached through KV head 1 only (query heads 2 and 3 read it)
    ]
    dangling = [
        ("a0.h0", "a1.h1", "q"),  # a0.h0 is never reached from input
        ("input", "a0.h1", "q"),  # a0.h1 reaches nothing
        ("input", "a1.kv1", "v"),  # a1.h2 and a1.h3 reach nothing
        ("a0.h2", "m0", "mlp"),  # a0.h2 is reached (kv1) but m0 reaches nothing
    ]
    kept = prune(g, _keep(g, on_path + dangling))
    assert set(np.flatnonzero(kept)) == set(np.flatnonzero(_keep(g, on_path)))
    everything = np.ones(g.n_edges, dtype=bool)
    assert prune(g, everything).all()
    assert not prune(g, np.zeros(g.n_edges, dtype=bool)).any()
    mib = Graph("mib", 2, 4, 2)  # per query head: a K input reaches its own head only
    kept = prune(mib, _keep(mib, [("input", "a0.h2", "k"), ("a0.h3", "logits", "logits")]))
    assert not kept.any()


def test_cpr_and_cmd_are_mibs_trapezoid_on_a_linear_axis() -> None:
    faith = [0.0, 0.1, 0.3, 0.2, 0.6, 0.8, 1.1, 0.9, 1.0, 1.0]
    cpr = cmd = 0.0
    for (x0, y0), (x1, y1) in zip(
        zip(FRACTIONS, faith, strict=True), list(zip(FRACTIONS, faith, strict=True))[1:], strict=False
    ):
        cpr += (x1 - x0) * (y0 + y1) / 2
        cmd += (x1 - x0) * (abs(1 - y0) + abs(1 - y1)) / 2
    got = derive.areas(FRACTIONS, faith)
    assert got == pytest.approx((cpr, cmd), abs=1e-15)
    # a hand-made curve: 0.5 up to 10%, then 1 => CPR = 0.099*0.5 + 0.1*0.75 + 0.8*1, CMD = 0.099*0.5 + 0.1*0.25
    step = [0.5] * 7 + [1.0] * 3
    assert derive.areas(FRACTIONS, step) == pytest.approx((0.099 * 0.5 + 0.1 * 0.75 + 0.8, 0.099 * 0.5 + 0.1 * 0.25))
    assert derive.areas(FRACTIONS, [1.0] * 10) == pytest.approx((0.999, 0.0), abs=1e-15)


def test_faithfulness_and_its_bootstrap() -> None:
    clean, corrupt = [3.0, 5.0, 4.0], [1.0, 1.0, 2.0]
    assert derive.faithfulness(clean, corrupt, clean) == 1.0
    assert derive.faithfulness(clean, corrupt, corrupt) == 0.0
    assert derive.faithfulness(clean, corrupt, [2.0, 3.0, 3.0]) == pytest.approx((8 / 3 - 4 / 3) / (4 - 4 / 3))
    weights = derive.poisson_weights(0, [1, 2, 3], 200)
    assert weights.shape == (3, 200)
    assert np.array_equal(derive.poisson_weights(0, [2], 200)[0], weights[1])  # a pair keeps its weights
    reps = derive.replicate_faithfulness(clean, corrupt, [2.0, 3.0, 3.0], weights)
    w = weights[:, 7]
    expect = (np.average([2, 3, 3], weights=w) - np.average(corrupt, weights=w)) / (
        np.average(clean, weights=w) - np.average(corrupt, weights=w)
    )
    assert reps[7] == pytest.approx(expect)
    low, high = derive.interval(reps)
    assert low <= derive.faithfulness(clean, corrupt, [2.0, 3.0, 3.0]) <= high
    numbers = derive.curve_numbers(clean, corrupt, [corrupt] * 5 + [clean] * 5, FRACTIONS, weights)
    assert numbers.faithfulness == [0.0] * 5 + [1.0] * 5
    assert numbers.cpr_ci[0] == pytest.approx(numbers.cpr) and numbers.cmd_ci[1] == pytest.approx(numbers.cmd)


def test_top_edges_by_absolute_score_ties_in_graph_order() -> None:
    assert derive.top_edges([0.1, -0.5, 0.5, 0.2], 3).tolist() == [1, 2, 3]
    assert derive.chosen_count(0.001, 79_813) == 80 and derive.chosen_count(0.001, 10) == 1
