"""Recompute a saved result's derived numbers from its raw values; name the first that disagrees.

``attnscope render`` draws a document written by ``--json`` with no model. The raw values
(the captured rows, the role scores) are what the model produced; sums, shares, charts
and rankings are derived from them. ``problem(result)`` recomputes the derived numbers
and returns a one-line description of the first stored number that disagrees (None when
all agree), so an edited document is refused instead of drawn. Dispatch is on the
result's type; a type with nothing derived has no check. Pure Python: ``render`` does
not import torch. This module does not print.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

from attnscope.core.ranking import rank
from attnscope.results import Result
from attnscope.results.generate import GenerateResult
from attnscope.results.heads import HeadsResult
from attnscope.results.matrix import MatrixResult
from attnscope.results.roles import ROLES, RolesResult
from attnscope.results.weights import WeightsResult

TOL = 1e-5


def _far(a: float, b: float) -> bool:
    return not math.isclose(a, b, rel_tol=TOL, abs_tol=TOL)


def _drop_sink(row: list[float]) -> list[float]:
    """``core.weights.drop_sink`` for one row, in plain Python."""
    if len(row) < 2:
        return row
    rest = [0.0, *row[1:]]
    total = max(sum(rest), 1e-30)
    return [v / total for v in rest]


@functools.singledispatch
def problem(result: Result) -> str | None:
    """The first stored derived number that disagrees with its raw values, or None."""
    return None


@problem.register
def _weights(r: WeightsResult) -> str | None:
    n_keys = r.query.index + 1
    rows = [row for per_layer in r.weights for row in per_layer]  # L*Hsel rows of q+1 keys
    if len(r.weights) != len(r.layers) or any(len(row) != n_keys for row in rows) or not rows:
        return f"weights is not [layers][heads][{n_keys}]"
    if r.measure == "norm":
        normed = [row for per_layer in r.norms for row in per_layer]
        if len(normed) != len(rows) or any(len(row) != n_keys for row in normed):
            return f"norms is not [layers][heads][{n_keys}] like weights"
        for a, n in zip(rows, normed, strict=True):
            if any(x < 0 for x in n) or any(ai == 0 and ni > TOL for ai, ni in zip(a, n, strict=True)):
                return "norms: a key with weight 0 (or a negative norm) has a norm"
        rows = [[v / max(sum(row), 1e-30) for v in row] for row in normed]  # each key's share
    flat = [_drop_sink(row) for row in rows] if r.view.no_sink else rows

    def chart_problem(
        bars_tokens: Sequence[list[int]], weights: Sequence[float], rows: list[list[float]], what: str
    ) -> str | None:
        for members, stored in zip(bars_tokens, weights, strict=True):
            per_row = [sum(row[t] for t in members) for row in rows]
            value = sum(per_row) / len(per_row) if r.view.agg == "mean" else max(per_row)
            if _far(stored, value):
                return f"{what}: the bar of tokens {members} is {stored:.6g}, but the weights give {value:.6g}"
        return None

    bad = chart_problem([b.tokens for b in r.chart.bars], [b.weight for b in r.chart.bars], flat, "chart")
    if bad:
        return bad
    total = sum(b.weight for b in r.chart.bars)
    if _far(r.chart.total, total):
        return f"chart: the stored sum {r.chart.total:.6g} is not the sum of its bars {total:.6g}"
    for chart in r.per_head:
        if chart.layer not in r.layers or chart.head not in r.heads:
            return f"per-head chart L{chart.layer} H{chart.head} is not among the selected layers and heads"
        row = flat[r.layers.index(chart.layer) * len(r.heads) + r.heads.index(chart.head)]
        bad = chart_problem(
            [b.tokens for b in chart.bars], [b.weight for b in chart.bars], [row], f"L{chart.layer} H{chart.head}"
        )
        if bad:
            return bad
        if _far(chart.total, sum(b.weight for b in chart.bars)):
            return f"L{chart.layer} H{chart.head}: the stored sum {chart.total:.6g} is not the sum of its bars"
    for h in r.hardest:
        on_key = [sum(row[t] for t in h.tokens if t < n_keys) for row in flat]
        best = max(range(len(on_key)), key=lambda i: (on_key[i], -i))
        layer, head = r.layers[best // len(r.heads)], r.heads[best % len(r.heads)]
        if _far(h.weight, on_key[best]) or _far(
            h.weight,
            on_key[r.layers.index(h.layer) * len(r.heads) + r.heads.index(h.head)]
            if h.layer in r.layers and h.head in r.heads
            else -1.0,
        ):
            return f"who looks hardest at {h.label}: L{h.layer} H{h.head} {h.weight:.6g}, but the weights give L{layer} H{head} {on_key[best]:.6g}"
    if r.sink_share is not None:
        first = [row[0] for row in flat]
        value = sum(first) / len(first) if r.view.agg == "mean" else max(first)
        if _far(r.sink_share, value):
            return f"sink_share {r.sink_share:.6g} is not position 0's share {value:.6g}"
    return None


@problem.register
def _heads(r: HeadsResult) -> str | None:
    scores = [s.score for s in r.ranking]
    if any(a < b for a, b in zip(scores, scores[1:], strict=False)):
        return "ranking: the heads are not in descending order of score"
    by_head = {(s.layer, s.head): s.score for s in r.ranking}
    for place, top in enumerate(r.top, start=1):
        if place > len(r.ranking) or (r.ranking[place - 1].layer, r.ranking[place - 1].head) != (top.layer, top.head):
            return f"top {place}: L{top.layer} H{top.head} is not the ranking's head at that place"
        from_row = sum(top.row[k] for k in r.key.span if k < len(top.row))
        if _far(top.score, from_row) or _far(by_head[(top.layer, top.head)], from_row):
            return f"L{top.layer} H{top.head}: the score {top.score:.6g} is not its row summed over the key ({from_row:.6g})"
    return None


@problem.register
def _matrix(r: MatrixResult) -> str | None:
    start = r.window[0]
    for i, (row, before) in enumerate(zip(r.weights, r.before, strict=True)):
        total = sum(row[: i + 1]) + before
        if _far(total, 1.0):
            return f"row of query position {start + i}: its weights and 'before' add up to {total:.6g}, not 1"
    return None


@problem.register
def _roles(r: RolesResult) -> str | None:
    groups = r.model.num_attention_heads // max(1, r.model.num_key_value_heads)
    for role in ROLES:
        grid = getattr(r.scores, role)
        stored = getattr(r.top, role)
        expected = rank(grid, groups, len(stored))
        for have, want in zip(stored, expected, strict=True):
            if (have.layer, have.head) != (want.layer, want.head) or _far(have.score, want.score):
                return (
                    f"top {role}: L{have.layer} H{have.head} {have.score:.6g} stored where the scores rank "
                    f"L{want.layer} H{want.head} {want.score:.6g}"
                )
    sink = [v for row in r.scores.sink for v in row]
    rate = sum(1 for v in sink if v > r.sink_threshold) / len(sink) if sink else 0.0
    if _far(r.sink_rate, rate):
        return f"sink_rate {r.sink_rate:.6g} is not the share of heads over {r.sink_threshold} ({rate:.6g})"
    return None


@problem.register
def _generate(r: GenerateResult) -> str | None:
    seg_of = {i: s.index for s in r.segments for i in s.tokens}
    content = [i for i in range(1, r.prompt_len) if r.segments[seg_of[i]].kind not in ("template", "answer")]
    for n, step in enumerate(r.steps):
        what = f"step {n} (position {step.index})"
        if len(step.weights) != len(r.layers) or any(len(h) != len(r.heads) for h in step.weights):
            return f"{what}: weights is not [layers][heads][keys]"
        rows = [row for per_layer in step.weights for row in per_layer]
        if any(len(row) != step.index for row in rows):
            return f"{what}: a row does not have {step.index} keys (positions 0~{step.index - 1})"
        for li, per_layer in enumerate(step.weights):
            for hi, row in enumerate(per_layer):
                sums = [0.0] * len(r.segments)
                for key, value in enumerate(row):
                    sums[seg_of[key]] += value
                for si, value in enumerate(sums):
                    if _far(step.segments[li][hi][si], value):
                        return f"{what}: the share of segment {si} at L{r.layers[li]} H{r.heads[hi]} disagrees with its row"
        for g, layers in enumerate(r.layer_groups):
            idx = [r.layers.index(layer) for layer in layers]
            for si in range(len(r.segments)):
                value = sum(step.segments[li][hi][si] for li in idx for hi in range(len(r.heads))) / (
                    len(idx) * len(r.heads)
                )
                if _far(step.group_segments[g][si], value):
                    return f"{what}: the share of segment {si} in layer group {g} disagrees with the segment shares"
        mean = [sum(row[k] for row in rows) / len(rows) for k in range(step.index)]
        for share in step.top_words:
            value = sum(mean[k] for k in r.words[share.word].tokens if k < step.index)
            if _far(share.weight, value):
                return f"{what}: the weight of word {share.word} is {share.weight:.6g}, but the rows give {value:.6g}"
        for h in step.prompt_heads:
            row = step.weights[r.layers.index(h.layer)][r.heads.index(h.head)]
            value = sum(row[k] for k in content)
            if _far(h.weight, value):
                return f"{what}: L{h.layer} H{h.head} puts {value:.6g} on the prompt, not {h.weight:.6g}"
    return None
