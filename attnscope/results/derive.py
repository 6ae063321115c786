"""The derived numbers of each result, computed from its raw values: written once, in numpy.

A result holds raw values (the captured attention rows, the role scores) and numbers
derived from them (chart bars and their sums, segment shares, rankings, the sink share).
The analyses in ``attnscope.core`` build their results with the functions here, handing
in their tensors as numpy arrays; ``attnscope.results.check`` calls the same functions on
the raw values of a saved document and compares. So a change to tie-breaking,
``no_sink`` or the arithmetic is made in one place.

Arithmetic is fp32, as the captured rows are, except that sums accumulate in fp64 and
are rounded to fp32 once: the result of a sum then does not depend on the order or memory
layout of the values, and a JSON array gives the same number as the tensor it came from.
Nothing here imports torch, reads files or prints.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from attnscope.errors import AttnscopeError
from attnscope.results.ablate import CheckedHead, RankedEffect
from attnscope.results.common import Token, Word
from attnscope.results.flow import Edge as FlowEdge
from attnscope.results.flow import LayerCheck as FlowCheck
from attnscope.results.flow import VerifiedEdge
from attnscope.results.generate import HeadShare, WordShare
from attnscope.results.heads import HeadScore, TopHead
from attnscope.results.roles import ROLES, RankedHead, RoleScores, RoleTop
from attnscope.results.segments import Segment, SegmentedToken
from attnscope.results.weights import Bar, By, Chart, Hardest, Strip, WeightsView

F32 = npt.NDArray[np.float32]
TINY = np.float32(1e-30)  # the floor of a denominator, so a row of zeros stays zeros
HARDEST_KEPT = 20  # keys listed under "who looks hardest"
TOP_WORDS = 3  # generate: words listed per step
TOP_HEADS = 3  # generate: heads listed per step


def f32(values: Any) -> F32:
    """Values (a nested list from JSON, or an array) as a fp32 array."""
    return np.asarray(values, dtype=np.float32)


def total(a: npt.NDArray[Any], axis: int | tuple[int, ...] = -1) -> F32:
    """The sum over ``axis``, accumulated in fp64 and rounded to fp32."""
    return np.asarray(a.sum(axis=axis, dtype=np.float64), dtype=np.float32)


def mean(a: npt.NDArray[Any], axis: int | tuple[int, ...]) -> F32:
    """The fp32 mean over ``axis``: its sum (see :func:`total`) divided by the count in fp32."""
    axes = (axis,) if isinstance(axis, int) else axis
    count = np.float32(np.prod([a.shape[i] for i in axes]))
    return np.asarray(total(a, axis) / count, dtype=np.float32)


# --- shared steps -----------------------------------------------------------------------


def shares(measured: F32) -> F32:
    """Each key's share of its row: measured (..., K) divided by the row's sum."""
    return np.asarray(measured / np.maximum(total(measured, -1), TINY)[..., None], dtype=np.float32)


def drop_sink(rows: F32) -> F32:
    """rows (..., K): position 0 set to 0 and each row renormalised over the rest."""
    if rows.shape[-1] < 2:
        raise AttnscopeError("no_sink_first", arg="no_sink")
    out = rows.copy()
    out[..., 0] = 0.0
    return shares(out)


def ranked(grid: F32) -> list[tuple[int, int, float]]:
    """Every (layer, head, score) of a [layer][head] grid: score descending; ties by layer, then head."""
    flat = [(layer, head, float(v)) for (layer, head), v in np.ndenumerate(grid)]
    flat.sort(key=lambda s: (-s[2], s[0], s[1]))
    return flat


def order(values: F32) -> list[int]:
    """Indices of a 1-d array by value descending; ties by index."""
    return [int(i) for i in np.argsort(-values, kind="stable")]


# --- weights ----------------------------------------------------------------------------

# (label, token indices, partial: a word or segment cut at the query, segment index with by segment)
Key = tuple[str, list[int], bool, int | None]


def segment_label(segment: Segment) -> str:
    """A segment's label in JSON: its kind, and its turn for a user or assistant turn (``user 2``)."""
    return segment.kind if segment.turn is None or segment.kind == "system" else f"{segment.kind} {segment.turn}"


def weight_keys(
    tokens: Sequence[Token], words: Sequence[Word], segments: Sequence[Segment], q: int, by: By
) -> list[Key]:
    """The chart's keys up to the query ``q``: one per token, word or segment (``by``), in order.

    With ``by`` segment each segment's tokens up to the query form one key (the template's
    tokens are one key wherever they sit)."""
    if by == "token":
        return [(tokens[i].label, [i], False, None) for i in range(q + 1)]
    keys: list[Key] = []
    groups = (
        [(segment_label(s), s.tokens, s.index) for s in segments]
        if by == "segment"
        else [(w.text, w.tokens, None) for w in words]
    )
    for label, members, segment in groups:
        kept = [i for i in members if i <= q]
        if kept:
            keys.append((label, kept, len(kept) < len(members), segment))
    return keys


def weights_shown(weights: F32, measured: F32 | None, no_sink: bool) -> F32:
    """What the charts show per token (L, H, K): the weights, or with ``measured`` (raw
    alpha ||f||) each key's share of it; with ``no_sink`` position 0 dropped and renormalised."""
    base = weights if measured is None else shares(measured)
    return drop_sink(base) if no_sink else base


def group(shown: F32, keys: Sequence[Key], by: By) -> F32:
    """shown (..., q+1) summed over each key's tokens: (..., len(keys))."""
    if by == "token":
        return shown
    return np.stack([total(shown[..., members], -1) for _, members, _, _ in keys], axis=-1)


def combine(flat: F32, agg: str) -> F32:
    """Rows (N, K) combined over N: their mean, or their max with ``agg`` max."""
    return mean(flat, 0) if agg == "mean" else np.asarray(flat.max(axis=0), dtype=np.float32)


def position0_share(shown: F32, agg: str) -> float:
    """Position 0's share over all selected rows (shown (L, H, K), token space)."""
    return float(combine(shown.reshape(-1, shown.shape[-1]), agg)[0])


def sink_share(shown: F32, agg: str) -> float | None:
    """Position 0's share when it is the largest of all tokens (an attention sink), else None."""
    if shown.shape[-1] < 2:
        return None
    combined = combine(shown.reshape(-1, shown.shape[-1]), agg)
    return float(combined[0]) if int(combined.argmax()) == 0 else None


def on_key(shown: F32, members: Sequence[int]) -> F32:
    """Each row's weight on one key's tokens (position 0 left out): shown (..., K) -> (...)."""
    return total(shown[..., [i for i in members if i != 0]], -1)


def hardest(
    shown: F32, keys: Sequence[Key], q: int, layers: Sequence[int], heads: Sequence[int], groups: int
) -> list[Hardest]:
    """For each key other than position 0 alone and the query's own key: the selected head that puts
    the most on it (the first in layer, head order on a tie). Weight descending, at most HARDEST_KEPT."""
    out = []
    for label, members, _, segment in keys:
        counted = [i for i in members if i != 0]
        if not counted or q in members:
            continue
        weight = on_key(shown, counted)  # (L, Hsel)
        li, hi = divmod(int(weight.argmax()), weight.shape[1])
        out.append(
            Hardest(
                label=label,
                tokens=counted,
                layer=layers[li],
                head=heads[hi],
                kv_head=heads[hi] // groups,
                weight=float(weight[li, hi]),
                segment=segment,
            )
        )
    out.sort(key=lambda h: (-h.weight, h.tokens[0]))
    return out[:HARDEST_KEPT]


def chart(values: F32, keys: Sequence[Key], q: int, no_sink: bool, **where: int | None) -> Chart:
    """The bars of one chart (values: one per key) and their sum."""
    bars = [
        Bar(
            label=label,
            tokens=members,
            weight=v,
            is_query=q in members,
            excluded=no_sink and 0 in members and len(members) == 1,
            partial=partial,
            segment=segment,
        )
        for (label, members, partial, segment), v in zip(keys, values.tolist(), strict=True)
    ]
    return Chart(bars=bars, total=float(total(values)), **where)


@dataclass(frozen=True)
class WeightsNumbers:
    """Everything a weights result derives from its rows."""

    chart: Chart
    strip: Strip
    per_head: list[Chart]
    sink_share: float | None
    hardest: list[Hardest]


def weights_numbers(
    weights: F32,
    measured: F32 | None,
    keys: Sequence[Key],
    q: int,
    layers: Sequence[int],
    heads: Sequence[int],
    groups: int,
    view: WeightsView,
) -> WeightsNumbers:
    """weights (L, Hsel, q+1) raw rows; ``measured`` raw alpha ||f|| of the same shape (measure norm) or None;
    ``groups`` query heads per KV head."""
    shown = weights_shown(weights, measured, view.no_sink)
    grouped = group(shown, keys, view.by)  # (L, Hsel, K)
    combined = combine(grouped.reshape(-1, grouped.shape[-1]), view.agg)
    per_head = []
    if view.per_head:
        for li, layer in enumerate(layers):
            for hi, head in enumerate(heads):
                per_head.append(
                    chart(grouped[li, hi], keys, q, view.no_sink, layer=layer, head=head, kv_head=head // groups)
                )
    return WeightsNumbers(
        chart=chart(combined, keys, q, view.no_sink),
        strip=Strip(layers=list(layers), keys=[k for k, _, _, _ in keys], values=mean(grouped, 1).T.tolist()),
        per_head=per_head,
        sink_share=None if view.no_sink else sink_share(shown, view.agg),
        hardest=hardest(shown, keys, q, layers, heads, groups),
    )


# --- heads ------------------------------------------------------------------------------


def key_scores(rows: F32, key: Sequence[int]) -> F32:
    """Each row's weight on the key span, summed over its tokens: rows (..., K) -> (...)."""
    return total(rows[..., [k for k in key if k < rows.shape[-1]]], -1)


def heads_numbers(rows: F32, key: Sequence[int], groups: int, top: int) -> tuple[list[HeadScore], list[TopHead]]:
    """rows (L, H, K): every head's aggregated query row. The ranking of every head by its weight on
    the key, and the first ``top`` of it with their rows."""
    ranking = [
        HeadScore(layer=layer, head=head, kv_head=head // groups, score=score)
        for layer, head, score in ranked(key_scores(rows, key))
    ]
    return ranking, [
        TopHead(layer=s.layer, head=s.head, kv_head=s.kv_head, score=s.score, row=rows[s.layer, s.head].tolist())
        for s in ranking[:top]
    ]


@dataclass(frozen=True)
class HeadRows:
    """What ``attnscope tui``'s heads table lists of each head's query row, all (L, H)."""

    on_key: F32  # the weight on the key span, summed over its tokens (as ``heads`` scores it)
    top: npt.NDArray[np.intp]  # the key position with the largest weight (the first of equals)
    entropy: F32  # -sum_j alpha_j log alpha_j in nats (``stats``' entropy of one row)
    first: F32  # the weight on position 0 (the sink share of the row)


def head_rows(rows: F32, key: Sequence[int]) -> HeadRows:
    """rows (L, H, K): every head's row of one query over keys 0..K-1; ``key``: the key span's positions."""
    logs = np.log(np.where(rows > 0, rows, np.float32(1.0)), dtype=np.float32)  # 0 log 0 = 0
    return HeadRows(
        on_key=key_scores(rows, key),
        top=np.asarray(rows.argmax(axis=-1), dtype=np.intp),
        entropy=np.asarray(-total(rows * logs, -1), dtype=np.float32),
        first=np.asarray(rows[..., 0], dtype=np.float32),
    )


STRONG = 0.5  # heads: a head "looks at the key" when more than half of its weight is on it


@dataclass(frozen=True)
class HeadsGrid:
    """What the ``heads`` view and figure read off the ranking."""

    scores: list[list[float]]  # [layer][head] scores, 0 where a head is not ranked
    kv_of: list[int]  # each head's KV head
    best: list[int]  # per layer, the head with the highest score (the first of equals)
    top: float  # the largest score (0 when there is none)
    strong: int  # heads scoring above STRONG


def heads_grid(ranking: Sequence[HeadScore], n_layers: int, n_heads: int) -> HeadsGrid:
    """The ranking laid out as a layers x heads grid, with each layer's best head and the count above STRONG."""
    scores = [[0.0] * n_heads for _ in range(n_layers)]
    kv_of = [0] * n_heads
    for s in ranking:
        if 0 <= s.layer < n_layers and 0 <= s.head < n_heads:
            scores[s.layer][s.head] = s.score
            kv_of[s.head] = s.kv_head
    return HeadsGrid(
        scores=scores,
        kv_of=kv_of,
        best=[row.index(max(row)) if row else 0 for row in scores],
        top=max((max(row) for row in scores), default=0.0),
        strong=sum(1 for s in ranking if s.score > STRONG),
    )


# --- roles ------------------------------------------------------------------------------


def rank(grid: F32, groups: int, top: int) -> list[RankedHead]:
    """The ``top`` heads of a [layer][head] grid, score descending; ties by layer, then head."""
    return [
        RankedHead(layer=layer, head=head, kv_head=head // groups, score=score)
        for layer, head, score in ranked(grid)[:top]
    ]


def roles_numbers(scores: RoleScores, groups: int, top: int, threshold: float) -> tuple[RoleTop, float]:
    """Each role's top heads, and the share of all heads whose sink score exceeds ``threshold``."""
    ranking = RoleTop(**{role: rank(f32(getattr(scores, role)), groups, top) for role in ROLES})
    over = np.asarray(f32(scores.sink) > np.float32(threshold), dtype=np.float32)
    return ranking, float(mean(over.reshape(-1), 0)) if over.size else 0.0


# --- matrix -----------------------------------------------------------------------------


def group_cells(weights: F32, before: F32, groups: Sequence[Sequence[int]], start: int) -> tuple[F32, F32]:
    """weights (P, P) over positions start..; groups of absolute token indices.

    Returns (cells (G, G), before (G,)): mean over each row group's queries of the sum
    over each column group's keys."""
    summed = np.stack([total(weights[:, [i - start for i in g]], -1) for g in groups], axis=-1)  # (P, G)
    cells = np.stack([mean(summed[[i - start for i in g]], 0) for g in groups])  # (G, G)
    return cells, np.stack([mean(before[[i - start for i in g]], 0) for g in groups])


# --- generate ---------------------------------------------------------------------------


@dataclass(frozen=True)
class GenerateKeys:
    """What a generate result's steps are summed over, from its tokens: each key's segment and word."""

    segment: npt.NDArray[np.intp]  # (T,): the segment of each token
    word: npt.NDArray[np.intp]  # (T,): the word of each token
    n_segments: int
    n_words: int
    content: npt.NDArray[np.bool_]  # (prompt_len,): the prompt's own text (not position 0, not the template)
    group_rows: list[list[int]]  # per layer group: the indices of its layers among the selected ones


def generate_keys(
    tokens: Sequence[SegmentedToken],
    segments: Sequence[Segment],
    n_words: int,
    prompt_len: int,
    layers: Sequence[int],
    layer_groups: Sequence[Sequence[int]],
) -> GenerateKeys:
    seg_of = [t.segment for t in tokens]
    template = {s.index for s in segments if s.kind == "template"}
    return GenerateKeys(
        segment=np.asarray(seg_of, dtype=np.intp),
        word=np.asarray([t.word for t in tokens], dtype=np.intp),
        n_segments=len(segments),
        n_words=n_words,
        content=np.asarray([i > 0 and seg_of[i] not in template for i in range(prompt_len)], dtype=np.bool_),
        group_rows=[[list(layers).index(layer) for layer in g] for g in layer_groups],
    )


@dataclass(frozen=True)
class StepNumbers:
    """Everything one generate step derives from its rows."""

    segments: list[list[list[float]]]  # [layer][head][segment]
    group_segments: list[list[float]]  # [group][segment]
    top_words: list[WordShare]
    prompt_heads: list[HeadShare]
    by_word: F32  # (W,): every word's weight, mean over layers and heads
    on_prompt: F32  # (L, H): every head's weight on the prompt's own text


def step_numbers(rows: F32, keys: GenerateKeys, layers: Sequence[int], heads: Sequence[int]) -> StepNumbers:
    """rows (L, H, K): one step's raw rows over keys 0..K-1."""
    n_keys = rows.shape[-1]
    member = np.zeros((n_keys, keys.n_segments))  # (K, S) one-hot, fp64
    member[np.arange(n_keys), keys.segment[:n_keys]] = 1.0
    by_segment = np.asarray(rows.astype(np.float64) @ member, dtype=np.float32)  # (L, H, S)
    by_word = np.asarray(
        np.bincount(keys.word[:n_keys], weights=mean(rows, (0, 1)), minlength=keys.n_words), dtype=np.float32
    )
    on_prompt = total(rows[:, :, : keys.content.shape[0]][:, :, keys.content], -1)  # (L, H)
    kept = min(TOP_WORDS, int((by_word > 0).sum()) or 1)
    flat = on_prompt.reshape(-1)
    return StepNumbers(
        segments=by_segment.tolist(),
        group_segments=[mean(by_segment[g], (0, 1)).tolist() for g in keys.group_rows],
        top_words=[WordShare(word=w, weight=float(by_word[w])) for w in order(by_word)[:kept]],
        prompt_heads=[
            HeadShare(layer=layers[i // len(heads)], head=heads[i % len(heads)], weight=float(flat[i]))
            for i in order(flat)[:TOP_HEADS]
        ],
        by_word=by_word,
        on_prompt=on_prompt,
    )


# --- ablate, knockout, patch -------------------------------------------------------------


def _ranks(v: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The rank of each value from 0; tied values get the mean of their ranks."""
    order_ = np.argsort(v, kind="stable")
    ranks = np.empty(v.size, dtype=np.float64)
    ranks[order_] = np.arange(v.size, dtype=np.float64)
    for value in np.unique(v):
        where = v == value
        if where.sum() > 1:
            ranks[where] = ranks[where].mean()
    return ranks


def spearman(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Spearman's rank correlation of two equal-length sequences (ties: average ranks); None with
    fewer than 2 values or when either side is constant."""
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.size < 2 or x.size != y.size:
        return None
    rx, ry = _ranks(x), _ranks(y)
    sx, sy = rx.std(), ry.std()
    if sx == 0 or sy == 0:
        return None
    return float(((rx - rx.mean()) * (ry - ry.mean())).mean() / (sx * sy))


@dataclass(frozen=True)
class AblateNumbers:
    """What ``ablate`` derives from its raw effects and weights."""

    ranking: list[RankedEffect]  # every head, effect ascending (the largest drop first); ties by layer, head
    rank_correlation: float | None  # Spearman of the drop (-effect) and the weight, over every head
    check_correlation: float | None  # --approx: Spearman of estimate and exact over the checked heads


def ablate_numbers(
    effects: Any,
    attention: Any,
    layers: Sequence[int],
    heads: Sequence[int],
    groups: int,
    top_key: Sequence[Sequence[int]] | None = None,
    checked: Sequence[CheckedHead] = (),
) -> AblateNumbers:
    """The ranking and the rank correlations of a [layer][head] grid of effects and weights."""
    eff = np.asarray(effects, dtype=np.float64).reshape(len(layers), len(heads))
    att = np.asarray(attention, dtype=np.float64).reshape(len(layers), len(heads))
    flat = [(float(eff[i, j]), layer, head, i, j) for i, layer in enumerate(layers) for j, head in enumerate(heads)]
    flat.sort(key=lambda s: (s[0], s[1], s[2]))
    ranking = [
        RankedEffect(
            layer=layer,
            head=head,
            kv_head=head // groups,
            effect=value,
            attention=float(att[i, j]),
            top_key=None if top_key is None else int(top_key[i][j]),
        )
        for value, layer, head, i, j in flat
    ]
    corr = spearman((-eff).ravel().tolist(), att.ravel().tolist())
    check = spearman([c.estimated for c in checked], [c.exact for c in checked]) if checked else None
    return AblateNumbers(ranking=ranking, rank_correlation=corr, check_correlation=check)


def hardest_looker(ranking: Sequence[RankedEffect]) -> tuple[int, RankedEffect]:
    """The head with the most weight on the key (ties: the lower layer, then head) and its 1-based rank by effect."""
    looker = max(ranking, key=lambda e: (e.attention, -e.layer, -e.head))
    return ranking.index(looker) + 1, looker


def knockout_effects(baseline: float, metrics: Sequence[float]) -> list[float]:
    """Each window's effect: its metric minus the baseline."""
    out: list[float] = (np.asarray(metrics, dtype=np.float64) - baseline).tolist()
    return out


def recovery(clean: float, corrupt: float, patched: Any) -> list[list[float]] | None:
    """(patched - corrupt) / (clean - corrupt) per cell (None stays None; NaN cells stay NaN);
    every cell NaN when clean equals corrupt."""
    if patched is None:
        return None
    arr = np.asarray(patched, dtype=np.float64)
    gap = clean - corrupt
    out: list[list[float]] = (np.full_like(arr, np.nan) if gap == 0 else (arr - corrupt) / gap).tolist()
    return out


def best_recovery(values: Sequence[Sequence[float]], layers: Sequence[int]) -> tuple[float, int, int]:
    """The highest recovery of a [layer][column] grid (NaN cells left out) as (recovery, layer,
    column); ties go to the lower layer, then the lower column. All NaN: (NaN, first layer, 0)."""
    cells = [(v, layers[i], j) for i, row in enumerate(values) for j, v in enumerate(row) if v == v]
    return max(cells, key=lambda s: (s[0], -s[1], -s[2])) if cells else (float("nan"), layers[0], 0)


@dataclass(frozen=True)
class FlowNumbers:
    """What ``flow --verify`` derives from the knocked-out log-probs."""

    verified: list[VerifiedEdge]  # each with its effect: logprob - baseline
    rank_correlation: float | None  # Spearman of the importance and the drop (-effect)


def flow_numbers(baseline: float | None, verified: Sequence[VerifiedEdge]) -> FlowNumbers:
    """Each knocked-out edge's effect and the rank correlation of importance and drop."""
    if baseline is None or not verified:
        return FlowNumbers(verified=list(verified), rank_correlation=None)
    done = [dataclasses.replace(v, effect=float(np.float64(v.logprob) - baseline)) for v in verified]
    return FlowNumbers(
        verified=done, rank_correlation=spearman([v.importance for v in done], [-v.effect for v in done])
    )


@dataclass(frozen=True)
class FlowRoutes:
    """What the ``flow`` view and figure read off the edges."""

    attention: dict[int, list[FlowEdge]]  # layer -> its attention edges, importance descending
    inputs: list[int]  # the positions the routes reach at the first layer's input
    reading: list[int]  # layers with an attention edge from another position
    error: float  # the largest completeness error over the layers
    scale: float  # the largest value of the sums checked
    ok: bool  # every error within the tolerance, relative to max(1, scale)
    direct: list[FlowEdge]  # the attention edges into the prediction's position, later layers first
    quiet: list[int]  # the layers with no attention edge (only the residual carries the route there)
    counts: dict[str, int]  # edges of each kind: attention, residual, mlp, bias


def edge_rank(e: FlowEdge) -> tuple[float, int, int, int, int]:
    """The one order of flow's edges: importance descending; ties by the later layer, then the
    earlier query position, key position and head (``flow --verify`` takes the first K of it;
    each layer's list in :class:`FlowRoutes` is in it too)."""
    return (-e.importance, -e.layer, e.to, e.from_ or 0, e.head or 0)


def ranked_edges(edges: Sequence[FlowEdge]) -> list[FlowEdge]:
    """The attention edges between two positions, most important first (:func:`edge_rank`)."""
    return sorted((e for e in edges if e.kind == "attention" and e.from_ is not None), key=edge_rank)


def flow_routes(edges: Sequence[FlowEdge], checks: Sequence[FlowCheck], tolerance: float, pos: int) -> FlowRoutes:
    """The attention edges per layer, the input positions the routes reach, the edges into ``pos``
    (the prediction's position), the edge counts and the completeness verdict; ``checks`` has one
    entry per layer."""
    attention = _attention_by_layer(edges)
    errors = [max(c.attention_error, c.mlp_error) for c in checks]
    return FlowRoutes(
        attention=attention,
        inputs=_inputs(edges),
        reading=sorted(layer for layer, found in attention.items() if any(e.from_ != e.to for e in found)),
        error=max(errors, default=0.0),
        scale=max((c.scale for c in checks), default=0.0),
        ok=all(err <= tolerance * max(1.0, c.scale) for err, c in zip(errors, checks, strict=True)),
        direct=[e for layer in sorted(attention, reverse=True) for e in attention[layer] if e.to == pos],
        quiet=[layer for layer in range(len(checks)) if not attention.get(layer)],
        counts={kind: sum(e.kind == kind for e in edges) for kind in ("attention", "residual", "mlp", "bias")},
    )


def _inputs(edges: Sequence[FlowEdge]) -> list[int]:
    """The positions the routes reach at the first layer's input (the bias comes from none)."""
    reached = {e.from_ for e in edges if e.layer == 0 and e.block == "attention" and e.kind != "bias"}
    return sorted(j for j in reached if j is not None)


def _attention_by_layer(edges: Sequence[FlowEdge]) -> dict[int, list[FlowEdge]]:
    """layer -> its attention edges, in :func:`edge_rank` order."""
    attention: dict[int, list[FlowEdge]] = {}
    for e in edges:
        if e.kind == "attention":
            attention.setdefault(e.layer, []).append(e)
    for layer in attention.values():
        layer.sort(key=edge_rank)
    return attention


# --- stats ------------------------------------------------------------------------------


@dataclass(frozen=True)
class StatHead:
    """One head of a stats ranking: its mean and 95% interval."""

    layer: int
    head: int
    mean: float
    ci_low: float
    ci_high: float


def stats_top(stat: Any, top: int, lowest: bool = False) -> list[StatHead]:
    """A statistic's ``top`` heads by mean (highest first, or lowest first), ties by layer then
    head; cells with no count (null) are left out. ``stat`` is a ``results.stats.Statistic``."""
    cells = [
        StatHead(layer, head, float(m), float(stat.ci_low[layer][head]), float(stat.ci_high[layer][head]))
        for layer, row in enumerate(stat.mean)
        for head, m in enumerate(row)
        if m is not None
    ]
    cells.sort(key=lambda c: ((c.mean if lowest else -c.mean), c.layer, c.head))
    return cells[:top]


SHARE_STATS_ABOVE_1 = ("entropy", "distance")  # the statistics that are not shares of a row (0 to 1)


def value_bounds(name: str, edges: Sequence[float], counts: Any) -> tuple[npt.NDArray[np.float64], ...]:
    """For every head, the least and the greatest value a statistic's histogram allows, as two
    ``[layer][head]`` arrays: ``counts`` (L, H, bins) over ``edges``. The first bin also holds
    anything below its edge and the last anything above, so an occupied end bin bounds one side
    only by what the statistic can be (0 to 1 for a share of a row, 0 and up for entropy and
    distance); a head with nothing counted has NaN bounds. The means and the bootstrap interval
    (a weighted mean of the same values) of a head lie within them."""
    occupied = np.asarray(counts) > 0  # (L, H, B)
    e = np.asarray(edges, dtype=np.float64)
    bins = occupied.shape[-1]
    first = occupied.argmax(-1)
    last = bins - 1 - occupied[..., ::-1].argmax(-1)
    floor, ceiling = 0.0, (np.inf if name in SHARE_STATS_ABOVE_1 else 1.0)
    low = np.where(first > 0, e[first], floor)
    high = np.where(last < bins - 1, e[np.minimum(last + 1, bins)], ceiling)
    low, high = np.maximum(low, floor), np.minimum(high, ceiling)
    empty = ~occupied.any(-1)
    low[empty], high[empty] = np.nan, np.nan
    return low, high


def massive_first_layers(layers: Sequence[Any]) -> list[int]:
    """The layers where position 0 holds the largest |h| in more than half of the prompts
    (``results.stats.MassiveLayer`` records)."""
    return [m.layer for m in layers if m.prompts and 2 * m.at_first > m.prompts]


# -- circuit ----------------------------------------------------------------------------------


def poisson_weights(seed: int, lines: Sequence[int], replicates: int) -> npt.NDArray[np.float64]:
    """(pairs, replicates): each pair's Poisson(1) weight in every bootstrap replicate, seeded by its
    line as ``stats`` seeds a prompt's, so a pair keeps its weights whatever else the file holds."""
    if not len(lines):
        return np.zeros((0, replicates))
    return np.stack([np.random.default_rng([seed, int(line)]).poisson(1.0, replicates) for line in lines]).astype(
        np.float64
    )


def faithfulness(clean: Sequence[float], corrupt: Sequence[float], circuit: Sequence[float]) -> float:
    """(mean circuit - mean corrupt) / (mean clean - mean corrupt), means over pairs (MIB's rule):
    1 where the circuit's metric is the clean one, 0 where it is the corrupt one."""
    a, b, c = (np.asarray(x, dtype=np.float64) for x in (clean, corrupt, circuit))
    top, bottom = float(c.mean() - b.mean()), float(a.mean() - b.mean())
    return top / bottom if bottom != 0 else float("nan")


def replicate_faithfulness(
    clean: Sequence[float], corrupt: Sequence[float], circuit: Sequence[float], weights: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """(replicates,): the faithfulness of every bootstrap replicate (weighted means; a replicate
    that weighs no pair, or whose clean and corrupt means meet, is NaN)."""
    a, b, c = (np.asarray(x, dtype=np.float64) for x in (clean, corrupt, circuit))
    n = weights.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        ma, mb, mc = ((weights * x[:, None]).sum(axis=0) / n for x in (a, b, c))
        return np.where(n > 0, (mc - mb) / (ma - mb), np.nan)  # type: ignore[no-any-return]


def interval(replicates: npt.NDArray[np.float64]) -> tuple[float, float]:
    """The 95% percentile interval of the finite replicates (NaN, NaN where none is)."""
    ok = replicates[np.isfinite(replicates)]
    if not ok.size:
        return float("nan"), float("nan")
    low, high = np.percentile(ok, [2.5, 97.5])
    return float(low), float(high)


def areas(fractions: Sequence[float], faith: Sequence[float]) -> tuple[float, float]:
    """CPR and CMD of a faithfulness curve, as MIB's leaderboard (``print_results.py``) computes
    them: the trapezoid over the given fractions on a linear axis (no point added at 0), of the
    faithfulness for CPR and of |1 - faithfulness| for CMD."""
    x = np.asarray(fractions, dtype=np.float64)
    y = np.asarray(faith, dtype=np.float64)
    width = np.diff(x)
    cpr = float((width * (y[1:] + y[:-1]) / 2).sum())
    gap = np.abs(1.0 - y)
    cmd = float((width * (gap[1:] + gap[:-1]) / 2).sum())
    return cpr, cmd


@dataclass(frozen=True)
class CurveNumbers:
    """What a method's curve derives from its raw metrics."""

    metric: list[float]  # [point]: the mean over pairs
    faithfulness: list[float]  # [point]
    ci: list[tuple[float, float]]  # [point]: 95% bootstrap interval
    cpr: float
    cmd: float
    cpr_ci: tuple[float, float]
    cmd_ci: tuple[float, float]


def curve_numbers(
    clean: Sequence[float],
    corrupt: Sequence[float],
    points: Sequence[Sequence[float]],
    fractions: Sequence[float],
    weights: npt.NDArray[np.float64],
) -> CurveNumbers:
    """The means, faithfulness and intervals of every curve point (``points`` [point][pair]), and
    CPR and CMD with the intervals of the same replicates' areas."""
    faith = [faithfulness(clean, corrupt, p) for p in points]
    reps = np.stack([replicate_faithfulness(clean, corrupt, p, weights) for p in points]) if points else None
    cpr, cmd = areas(fractions, faith)
    if reps is None:
        return CurveNumbers([], [], [], cpr, cmd, (float("nan"),) * 2, (float("nan"),) * 2)
    width = np.diff(np.asarray(fractions, dtype=np.float64))[:, None]
    rep_cpr = (width * (reps[1:] + reps[:-1]) / 2).sum(axis=0)
    gap = np.abs(1.0 - reps)
    rep_cmd = (width * (gap[1:] + gap[:-1]) / 2).sum(axis=0)
    return CurveNumbers(
        metric=[float(np.mean(np.asarray(p, dtype=np.float64))) for p in points],
        faithfulness=faith,
        ci=[interval(r) for r in reps],
        cpr=cpr,
        cmd=cmd,
        cpr_ci=interval(rep_cpr),
        cmd_ci=interval(rep_cmd),
    )


def top_edges(scores: Sequence[float] | npt.NDArray[np.float64], n: int) -> npt.NDArray[np.int64]:
    """The ``n`` edges of largest |score|, ties by the graph's order."""
    order = np.argsort(-np.abs(np.asarray(scores, dtype=np.float64)), kind="stable")
    return order[:n].astype(np.int64)


def chosen_count(fraction: float, n_edges: int) -> int:
    """The edges a fraction takes before pruning: round(fraction * edges), at least 1."""
    return max(1, min(n_edges, int(round(fraction * n_edges))))


def circuit_edges(graph: Any, scores: Sequence[float], chosen: int) -> list[int]:
    """The edges of the circuit of the top ``chosen`` edges by |score|, pruned to paths from input
    to logits (``results.graph.prune``), in the graph's order."""
    from attnscope.results.graph import prune

    selected = np.zeros(graph.n_edges, dtype=bool)
    selected[top_edges(scores, chosen)] = True
    return [int(e) for e in np.flatnonzero(prune(graph, selected))]


def circuit_nodes(graph: Any, scores: Sequence[float], chosen: int) -> tuple[int, list[str]]:
    """That circuit's edge count and its nodes (upstream nodes and downstream nodes, by name, in
    the graph's order)."""
    kept = np.zeros(graph.n_edges, dtype=bool)
    kept[circuit_edges(graph, scores, chosen)] = True
    up, down = graph.edges
    names = [graph.upstream[u] for u in sorted(set(up[kept].tolist()))]
    names += [
        n for n in dict.fromkeys(graph.downstream[x].node for x in sorted(set(down[kept].tolist()))) if n not in names
    ]
    return int(kept.sum()), names


def check_exact(clean: Sequence[float], patched: Sequence[float]) -> float:
    """``--check``: an edge's exact effect, mean clean metric - mean metric with the edge patched."""
    return float(np.mean(np.asarray(clean, dtype=np.float64)) - np.mean(np.asarray(patched, dtype=np.float64)))
