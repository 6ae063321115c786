"""Derive a saved result's numbers again from its raw values; name the first stored number that disagrees.

``attnscope render`` draws a document written by ``--json`` with no model. The raw values
(the captured rows, the role scores) are what the model produced; sums, shares, charts
and rankings are derived from them by ``attnscope.results.derive``, the same functions
the analyses built the result with. ``problem(result)`` runs them on the document's raw
values and returns a one-line description of the first stored number that disagrees
(None when all agree), so an edited document is refused instead of drawn. Where two
heads or keys tie, either order is accepted. Dispatch is on the result's type; a type
with nothing derived has no check. No torch; nothing here prints.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from attnscope.results import Result
from attnscope.results import derive as d
from attnscope.results.ablate import AblateResult
from attnscope.results.circuit import CircuitResult, MethodRun
from attnscope.results.flow import FlowResult
from attnscope.results.generate import GenerateResult, GenerateStep
from attnscope.results.heads import HeadsResult
from attnscope.results.knockout import KnockoutResult
from attnscope.results.matrix import MatrixResult
from attnscope.results.patch import PatchResult
from attnscope.results.roles import ROLES, RolesResult
from attnscope.results.stats import Histogram, Statistic, StatsResult, stat_names
from attnscope.results.weights import Chart, WeightsResult

TOL = 1e-5


def _far(a: float, b: float) -> bool:
    return not math.isclose(a, b, rel_tol=TOL, abs_tol=TOL)


def _shaped(values: object, shape: tuple[int, ...]) -> d.F32 | None:
    """``values`` as a fp32 array of ``shape``, or None when it is not one."""
    try:
        out = d.f32(values)
    except ValueError:  # ragged lists
        return None
    return out if out.shape == shape else None


@functools.singledispatch
def problem(result: Result) -> str | None:
    """The first stored derived number that disagrees with its raw values, or None."""
    return None


# --- weights ----------------------------------------------------------------------------


def _chart_problem(stored: Chart, derived: Chart, what: str) -> str | None:
    if [b.tokens for b in stored.bars] != [b.tokens for b in derived.bars]:
        return f"{what}: the bars are not the keys {[b.tokens for b in derived.bars]}"
    for have, want in zip(stored.bars, derived.bars, strict=True):
        if _far(have.weight, want.weight):
            return (
                f"{what}: the bar of tokens {have.tokens} is {have.weight:.6g}, but the weights give {want.weight:.6g}"
            )
    if _far(stored.total, derived.total):
        return f"{what}: the stored sum {stored.total:.6g} is not the sum of its bars {derived.total:.6g}"
    return None


def _weights_raw(r: WeightsResult) -> tuple[d.F32, d.F32 | None] | str:
    """The rows and, with measure norm, the raw alpha ||f||; or what is wrong with them."""
    shape = (len(r.layers), len(r.heads), r.query.index + 1)
    weights = _shaped(r.weights, shape)
    if weights is None or not weights.size:
        return f"weights is not [layers][heads][{shape[-1]}]"
    if r.measure != "norm":
        return weights, None
    norms = _shaped(r.norms, shape)
    if norms is None:
        return f"norms is not [layers][heads][{shape[-1]}] like weights"
    if (norms < 0).any() or ((weights == 0) & (norms > TOL)).any():
        return "norms: a key with weight 0 (or a negative norm) has a norm"
    return weights, norms


def _hardest_problem(r: WeightsResult, derived: d.WeightsNumbers, shown: d.F32) -> str | None:
    by_key = {tuple(h.tokens): h for h in derived.hardest}
    for h in r.hardest:
        want = by_key.get(tuple(h.tokens))
        own = -1.0
        if h.layer in r.layers and h.head in r.heads:
            own = float(d.on_key(shown[r.layers.index(h.layer), r.heads.index(h.head)], h.tokens))
        if want is None or _far(h.weight, want.weight) or _far(h.weight, own):
            best = f"L{want.layer} H{want.head} {want.weight:.6g}" if want else "no such key"
            return f"who looks hardest at {h.label}: L{h.layer} H{h.head} {h.weight:.6g}, but the weights give {best}"
    return None


def _strip_problem(r: WeightsResult, derived: d.WeightsNumbers) -> str | None:
    want = derived.strip
    if r.strip.layers != want.layers or _shaped(r.strip.values, (len(want.keys), len(want.layers))) is None:
        return f"strip: not [{len(want.keys)} keys][{len(want.layers)} layers]"
    for key, have_row, want_row in zip(want.keys, r.strip.values, want.values, strict=True):
        for layer, have, value in zip(want.layers, have_row, want_row, strict=True):
            if _far(have, value):
                return f"strip: {key} at layer {layer} is {have:.6g}, but the weights give {value:.6g}"
    return None


def _per_head_problem(r: WeightsResult, derived: d.WeightsNumbers) -> str | None:
    by_head = {(c.layer, c.head): c for c in derived.per_head}
    for c in r.per_head:
        want = by_head.get((c.layer, c.head))
        if want is None:
            return f"per-head chart L{c.layer} H{c.head} is not among the selected layers and heads"
        bad = _chart_problem(c, want, f"L{c.layer} H{c.head}")
        if bad:
            return bad
    return None


@problem.register
def _weights(r: WeightsResult) -> str | None:
    raw = _weights_raw(r)
    if isinstance(raw, str):
        return raw
    weights, norms = raw
    groups = r.model.num_attention_heads // max(1, r.model.num_key_value_heads)
    keys = d.weight_keys(r.tokens, r.words, r.segments, r.query.index, r.view.by)
    derived = d.weights_numbers(weights, norms, keys, r.query.index, r.layers, r.heads, groups, r.view)
    shown = d.weights_shown(weights, norms, r.view.no_sink)
    bad = (
        _chart_problem(r.chart, derived.chart, "chart")
        or _per_head_problem(r, derived)
        or _strip_problem(r, derived)
        or _hardest_problem(r, derived, shown)
    )
    if bad:
        return bad
    if r.sink_share is not None and _far(r.sink_share, d.position0_share(shown, r.view.agg)):
        return f"sink_share {r.sink_share:.6g} is not position 0's share {d.position0_share(shown, r.view.agg):.6g}"
    return None


# --- heads, matrix, roles ---------------------------------------------------------------


@problem.register
def _heads(r: HeadsResult) -> str | None:
    scores = [s.score for s in r.ranking]
    if any(a < b for a, b in zip(scores, scores[1:], strict=False)):
        return "ranking: the heads are not in descending order of score"
    by_head = {(s.layer, s.head): s.score for s in r.ranking}
    for place, top in enumerate(r.top, start=1):
        if place > len(r.ranking) or (r.ranking[place - 1].layer, r.ranking[place - 1].head) != (top.layer, top.head):
            return f"top {place}: L{top.layer} H{top.head} is not the ranking's head at that place"
        from_row = float(d.key_scores(d.f32(top.row), r.key.span))
        if _far(top.score, from_row) or _far(by_head[(top.layer, top.head)], from_row):
            return f"L{top.layer} H{top.head}: the score {top.score:.6g} is not its row summed over the key ({from_row:.6g})"
    return None


@problem.register
def _matrix(r: MatrixResult) -> str | None:
    start = r.window[0]
    for i, (row, before) in enumerate(zip(r.weights, r.before, strict=True)):
        row_total = sum(row[: i + 1]) + before
        if _far(row_total, 1.0):
            return f"row of query position {start + i}: its weights and 'before' add up to {row_total:.6g}, not 1"
    if r.measure == "norm" or r.view.by == "token":
        return None  # a norm view needs the keys before the window; a token view is the weights themselves
    cells, before_g = d.group_cells(d.f32(r.weights), d.f32(r.before), r.view.groups, start)
    for g, (have_row, want_row) in enumerate(zip(r.view.cells, cells.tolist(), strict=True)):
        for c, (have, want) in enumerate(zip(have_row, want_row, strict=True)):
            if _far(have, want):
                return f"view: the cell of groups {g} and {c} is {have:.6g}, but the weights give {want:.6g}"
    if any(_far(have, want) for have, want in zip(r.view.before, before_g.tolist(), strict=True)):
        return "view: a group's weight before the window disagrees with the weights"
    return None


@problem.register
def _roles(r: RolesResult) -> str | None:
    groups = r.model.num_attention_heads // max(1, r.model.num_key_value_heads)
    ranking, rate = d.roles_numbers(r.scores, groups, len(r.top.previous_token), r.sink_threshold)
    for role in ROLES:
        for have, want in zip(getattr(r.top, role), getattr(ranking, role), strict=True):
            if (have.layer, have.head) != (want.layer, want.head) or _far(have.score, want.score):
                return (
                    f"top {role}: L{have.layer} H{have.head} {have.score:.6g} stored where the scores rank "
                    f"L{want.layer} H{want.head} {want.score:.6g}"
                )
    if _far(r.sink_rate, rate):
        return f"sink_rate {r.sink_rate:.6g} is not the share of heads over {r.sink_threshold} ({rate:.6g})"
    return None


# --- generate ---------------------------------------------------------------------------


def _first_off(have: Sequence[float], want: Sequence[float], own: Sequence[float]) -> int | None:
    """The first place whose stored weight is neither the derived one at that place nor the item's own."""
    for place, (h, w, o) in enumerate(zip(have, want, own, strict=False)):
        if _far(h, w) or _far(h, o):
            return place
    return None


def _shares_problem(r: GenerateResult, step: GenerateStep, numbers: d.StepNumbers, what: str) -> str | None:
    n_segments = len(r.segments)
    if _shaped(step.segments, (len(r.layers), len(r.heads), n_segments)) is None:
        return f"{what}: segments is not [layers][heads][{n_segments}]"
    have, want = d.f32(step.segments), d.f32(numbers.segments)
    far = ~np.isclose(have, want, rtol=TOL, atol=TOL)
    if far.any():
        li, hi, si = (int(i) for i in np.argwhere(far)[0])
        return f"{what}: the share of segment {si} at L{r.layers[li]} H{r.heads[hi]} disagrees with its row"
    for g, (have_g, want_g) in enumerate(zip(step.group_segments, numbers.group_segments, strict=True)):
        for si, (h, w) in enumerate(zip(have_g, want_g, strict=True)):
            if _far(h, w):
                return f"{what}: the share of segment {si} in layer group {g} disagrees with the segment shares"
    return None


def _words_problem(r: GenerateResult, step: GenerateStep, numbers: d.StepNumbers, what: str) -> str | None:
    if len(step.top_words) != len(numbers.top_words):
        return f"{what}: {len(step.top_words)} top words stored, but the rows give {len(numbers.top_words)}"
    own = [float(numbers.by_word[s.word]) if 0 <= s.word < len(r.words) else -1.0 for s in step.top_words]
    place = _first_off([s.weight for s in step.top_words], [s.weight for s in numbers.top_words], own)
    if place is None:
        return None
    share = step.top_words[place]
    return f"{what}: the weight of word {share.word} is {share.weight:.6g}, but the rows give {own[place]:.6g}"


def _heads_problem(r: GenerateResult, step: GenerateStep, numbers: d.StepNumbers, what: str) -> str | None:
    if len(step.prompt_heads) != len(numbers.prompt_heads):
        return f"{what}: {len(step.prompt_heads)} prompt heads stored, but the rows give {len(numbers.prompt_heads)}"
    own = [
        float(numbers.on_prompt[r.layers.index(h.layer), r.heads.index(h.head)])
        if h.layer in r.layers and h.head in r.heads
        else -1.0
        for h in step.prompt_heads
    ]
    place = _first_off([h.weight for h in step.prompt_heads], [h.weight for h in numbers.prompt_heads], own)
    if place is None:
        return None
    h = step.prompt_heads[place]
    return f"{what}: L{h.layer} H{h.head} puts {own[place]:.6g} on the prompt, not {h.weight:.6g}"


@problem.register
def _generate(r: GenerateResult) -> str | None:
    keys = d.generate_keys(r.tokens, r.segments, len(r.words), r.prompt_len, r.layers, r.layer_groups)
    for n, step in enumerate(r.steps):
        what = f"step {n} (position {step.index})"
        if len(step.weights) != len(r.layers) or any(len(h) != len(r.heads) for h in step.weights):
            return f"{what}: weights is not [layers][heads][keys]"
        rows = _shaped(step.weights, (len(r.layers), len(r.heads), step.index))
        if rows is None:
            return f"{what}: a row does not have {step.index} keys (positions 0~{step.index - 1})"
        numbers = d.step_numbers(rows, keys, r.layers, r.heads)
        bad = (
            _shares_problem(r, step, numbers, what)
            or _words_problem(r, step, numbers, what)
            or _heads_problem(r, step, numbers, what)
        )
        if bad:
            return bad
    return None


# --- ablate, knockout, patch ------------------------------------------------------------


@problem.register
def _ablate(r: AblateResult) -> str | None:
    shape = (len(r.layers), len(r.heads))
    effects, attention = _shaped(r.effects, shape), _shaped(r.attention, shape)
    if effects is None or not effects.size:
        return "effects is not [layers][heads]"
    if attention is None:
        return "attention is not [layers][heads]"
    if r.top_key is not None and _shaped(r.top_key, shape) is None:
        return "top_key is not [layers][heads]"
    groups = r.model.num_attention_heads // max(1, r.model.num_key_value_heads)
    again = d.ablate_numbers(effects, attention, r.layers, r.heads, groups, r.top_key, r.checked)
    by_head = {(e.layer, e.head): e.effect for e in again.ranking}
    if len(r.ranking) != len(again.ranking):
        return f"ranking holds {len(r.ranking)} heads, not the {len(again.ranking)} of effects"
    for place, (have, want) in enumerate(zip(r.ranking, again.ranking, strict=True), start=1):
        if (have.layer, have.head) != (want.layer, want.head) and _far(have.effect, want.effect):
            return f"ranking {place}: L{have.layer} H{have.head} is not the head effects rank there (L{want.layer} H{want.head})"
        if (have.layer, have.head) not in by_head or _far(have.effect, by_head[(have.layer, have.head)]):
            return f"ranking {place}: L{have.layer} H{have.head} {have.effect:.6g} is not its effect in effects"
    for name in ("rank_correlation", "check_correlation"):
        a, b = getattr(again, name), getattr(r, name)
        if (a is None) != (b is None) or (a is not None and b is not None and _far(a, b)):
            return f"{name} {b} does not follow from the raw values ({a})"
    return None


@problem.register
def _knockout(r: KnockoutResult) -> str | None:
    effects = d.knockout_effects(r.baseline, [w.metric for w in r.windows])
    for w, e in zip(r.windows, effects, strict=True):
        if _far(w.effect, e):
            return f"windows: the effect of layers {w.layers} is {w.effect:.6g}, but its metric gives {e:.6g}"
    return None


@problem.register
def _patch(r: PatchResult) -> str | None:
    for raw, stored, name in (
        (r.heads_metric, r.heads, "heads"),
        (r.residual_metric, r.residual, "residual"),
        (r.k_metric, r.k, "k"),
        (r.v_metric, r.v, "v"),
    ):
        again = d.recovery(r.clean, r.corrupt, raw)
        if (again is None) != (stored is None):
            return f"{name} is missing or extra beside {name}_metric"
        if again is not None and stored is not None:
            a = np.asarray(again, dtype=np.float64)
            b = _shaped(stored, a.shape)
            if b is None or not np.allclose(a, b, rtol=TOL, atol=TOL, equal_nan=True):
                return f"{name} does not follow from {name}_metric"
    return None


@problem.register
def _flow(r: FlowResult) -> str | None:
    again = d.flow_numbers(r.baseline, r.verified)
    for v, w in zip(r.verified, again.verified, strict=True):
        if _far(v.effect, w.effect):
            return f"verified: the effect of L{v.layer} {v.from_} -> {v.to} is {v.effect:.6g}, but its log-prob gives {w.effect:.6g}"
    a, b = again.rank_correlation, r.rank_correlation
    if (a is None) != (b is None) or (a is not None and b is not None and _far(a, b)):
        return f"rank_correlation {b} does not follow from the raw values ({a})"
    return None


# --- stats ------------------------------------------------------------------------------


def _grid(values: Sequence[Sequence[float | None]]) -> npt.NDArray[np.float64]:
    return np.array([[np.nan if v is None else v for v in row] for row in values], dtype=np.float64)


def _statistic_problem(name: str, st: Statistic, hist: Histogram) -> str | None:
    """One statistic against its histogram: n is what the histogram counted; a cell is null exactly
    where nothing counted; the mean and the interval lie within the values the histogram allows
    (``derive.value_bounds``), the interval in order and the std within half their range."""
    n = np.asarray(st.n, dtype=np.int64)
    counts = np.asarray(hist.counts, dtype=np.int64)
    if counts.shape[:2] != n.shape or counts.shape[-1] != len(hist.edges) - 1:
        return f"stats.{name}: its histogram is not one row of {len(hist.edges) - 1} bins per head"
    if not np.array_equal(counts.sum(-1), n):
        layer, head = np.argwhere(counts.sum(-1) != n)[0]
        return f"stats.{name}: n of L{layer} H{head} is {n[layer, head]}, but its histogram counts {counts[layer, head].sum()}"
    low, high = d.value_bounds(name, hist.edges, counts)
    grids = {what: _grid(getattr(st, what)) for what in ("mean", "std", "ci_low", "ci_high")}
    for what, grid in grids.items():
        if grid.shape != n.shape or not np.array_equal(np.isnan(grid), n == 0):
            return f"stats.{name}: {what} is null where n is not 0, or holds a number where n is 0"
    finite_high = np.where(np.isfinite(high), np.abs(high), 0.0)
    slack = TOL * np.maximum(1.0, np.nan_to_num(np.maximum(np.abs(low), finite_high)))  # (L, H)
    for what in ("mean", "ci_low", "ci_high"):
        grid = grids[what]
        outside = (n > 0) & ((grid < low - slack) | (grid > high + slack))
        if outside.any():
            layer, head = np.argwhere(outside)[0]
            return (
                f"stats.{name}: the {what} of L{layer} H{head} is {grid[layer, head]:.6g}, outside the values its "
                f"histogram allows ({low[layer, head]:.6g} to {high[layer, head]:.6g})"
            )
    backwards = (n > 0) & (grids["ci_low"] > grids["ci_high"] + slack)
    spread = (n > 0) & ((grids["std"] < -slack) | (grids["std"] > (high - low) / 2 + slack))
    for bad, what in ((backwards, "its interval runs backwards"), (spread, "its std is outside 0 to half the range")):
        if bad.any():
            layer, head = np.argwhere(bad)[0]
            return f"stats.{name}: at L{layer} H{head} {what}"
    return None


@problem.register
def _stats(r: StatsResult) -> str | None:
    names = list(stat_names(r.options.chat, r.options.measure == "norm"))
    if list(r.stats) != names or list(r.histograms) != names:
        return f"stats: holds {list(r.stats)}, but its options give {names}"
    for name in names:
        found = _statistic_problem(name, r.stats[name], r.histograms[name])
        if found is not None:
            return found
    counted = {int(v) for row in r.stats["sink"].n for v in row}
    if counted != {r.corpus.positions}:
        return f"stats.sink: n is {sorted(counted)}, but the corpus counted {r.corpus.positions} positions"
    return None


# --- circuit ----------------------------------------------------------------------------


def _far_nan(a: float | None, b: float | None) -> bool:
    """Two derived numbers disagree (NaN agrees with NaN, None with None)."""
    if a is None or b is None:
        return (a is None) != (b is None)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) != math.isnan(b)
    return _far(a, b)


def _circuit_run(r: CircuitResult, run: MethodRun, weights: npt.NDArray[np.float64]) -> str | None:
    n = len(r.pairs.used)
    if any(len(p.pair_metric) != n for p in run.curve):
        return f"{run.method}: a curve point's pair_metric is not one value per pair ({n})"
    again = d.curve_numbers(
        r.pair_clean, r.pair_corrupt, [p.pair_metric for p in run.curve], [p.fraction for p in run.curve], weights
    )
    for i, p in enumerate(run.curve):
        for name, have, want in (
            ("metric", p.metric, again.metric[i]),
            ("faithfulness", p.faithfulness, again.faithfulness[i]),
            ("ci_low", p.ci_low, again.ci[i][0]),
            ("ci_high", p.ci_high, again.ci[i][1]),
        ):
            if _far_nan(have, want):
                return f"{run.method}: the {name} at {p.fraction:g} is {have:.6g}, but its pair metrics give {want:.6g}"
    areas: list[tuple[str, float | None, float]] = [
        ("cpr", run.cpr, again.cpr),
        ("cmd", run.cmd, again.cmd),
        ("cpr_ci low", run.cpr_ci[0] if run.cpr_ci else None, again.cpr_ci[0]),
        ("cpr_ci high", run.cpr_ci[1] if run.cpr_ci else None, again.cpr_ci[1]),
        ("cmd_ci low", run.cmd_ci[0] if run.cmd_ci else None, again.cmd_ci[0]),
        ("cmd_ci high", run.cmd_ci[1] if run.cmd_ci else None, again.cmd_ci[1]),
    ]
    for name, stored, want in areas:
        if _far_nan(stored, want):
            return f"{run.method}: {name} is {stored}, but its curve gives {want:.6g}"
    return None


@problem.register
def _circuit(r: CircuitResult) -> str | None:
    n = len(r.pairs.used)
    if len(r.pair_clean) != n or len(r.pair_corrupt) != n:
        return f"pair_clean and pair_corrupt are not one value per pair ({n})"
    if _far(r.clean, float(np.mean(r.pair_clean))) or _far(r.corrupt, float(np.mean(r.pair_corrupt))):
        return "clean or corrupt is not the mean of its pair metrics"
    weights = d.poisson_weights(r.seed, r.pairs.used, r.bootstrap)
    runs = (
        []
        if r.method is None
        else [MethodRun(r.method, r.edges, r.curve, r.cpr or 0.0, r.cmd or 0.0, r.cpr_ci, r.cmd_ci)]
    ) + list(r.compare)
    for run in runs:
        found = _circuit_run(r, run, weights)
        if found is not None:
            return found
    for c in r.check:
        if _far(c.exact, d.check_exact(r.pair_clean, c.pair_metric)):
            return f"check: the exact effect of edge {c.index} does not follow from its pair metrics"
    rho = d.spearman([c.estimate for c in r.check], [c.exact for c in r.check]) if r.check else None
    if _far_nan(rho, r.check_correlation):
        return f"check_correlation is {r.check_correlation}, but the checked edges give {rho}"
    e = r.evaluation
    if e is not None:
        low, high = d.interval(d.replicate_faithfulness(r.pair_clean, r.pair_corrupt, e.pair_metric, weights))
        for name, have, want in (
            ("metric", e.metric, float(np.mean(e.pair_metric))),
            ("faithfulness", e.faithfulness, d.faithfulness(r.pair_clean, r.pair_corrupt, e.pair_metric)),
            ("ci_low", e.ci_low, low),
            ("ci_high", e.ci_high, high),
        ):
            if _far_nan(have, want):
                return f"evaluation: the {name} is {have:.6g}, but its pair metrics give {want:.6g}"
    return None
