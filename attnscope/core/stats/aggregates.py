"""Mergeable aggregates of per-head statistics: what one prompt, one shard or one worker leaves.

A :class:`Partial` holds, for every statistic ``s`` and head ``(layer, head)``: the count of
(prompt, position) pairs, their mean and their sum of squared deviations ``m2`` (merged with
Chan et al.'s pairwise formula, which is exact and stable in any order), counts in fixed
bins, and the Poisson bootstrap's replicate sums and counts. Every prompt weighs
``Poisson(1)`` in each replicate, drawn from ``(seed, line number)``, so a replicate does not
depend on which worker saw the prompt, in which batch or in which order: merging is adding.
The per-layer massive-activation records merge by maximum and by sums. Everything here is
numpy; ``core.stats.reduce`` fills it from a forward, ``core.stats.driver`` merges and finishes it.
The arrays' sizes depend on the model and the options, never on the number of prompts.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field, fields

import numpy as np

from attnscope.results.stats import (
    Histogram,
    MassiveLayer,
    Statistic,
)

N_BINS = 20
TOP_DIMS = 5  # dimensions listed per layer in the massive-activation record


def edges_of(name: str) -> np.ndarray:
    """The fixed bin edges of a statistic: shares on 0~1, entropy on 0~8 nats, distance on powers of 2."""
    if name == "entropy":
        return np.linspace(0.0, 8.0, N_BINS + 1)
    if name == "distance":
        return np.concatenate([[0.0], 2.0 ** np.arange(N_BINS)])  # 0, 1, 2, 4, ..., 2^19
    return np.linspace(0.0, 1.0, N_BINS + 1)


def bin_index(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin of each value: ``[edges[k], edges[k+1])``; the last bin holds its edge and above, the first anything below."""
    return np.clip(np.searchsorted(edges, values, side="right") - 1, 0, len(edges) - 2)


def poisson_weights(seed: int, lines: np.ndarray, replicates: int) -> np.ndarray:
    """(prompts, replicates): each prompt's Poisson(1) weight in every bootstrap replicate."""
    return np.stack([np.random.default_rng([seed, int(line)]).poisson(1.0, replicates) for line in lines]).astype(
        np.float64
    )


@dataclass
class Partial:
    """Aggregates over some prompts. Shapes: S statistics, L layers, H heads, B replicates, D hidden."""

    count: np.ndarray  # (S,) pairs counted, the same for every head
    mean: np.ndarray  # (S, L, H)
    m2: np.ndarray  # (S, L, H) sum of squared deviations from the mean
    hist: np.ndarray  # (S, L, H, N_BINS) int64
    boot_n: np.ndarray  # (B, S) Poisson-weighted counts
    boot_sum: np.ndarray  # (B, S, L, H) Poisson-weighted sums
    lines: np.ndarray  # (prompts,) input lines that counted
    tokens: np.ndarray  # (1,) tokens of those prompts
    truncated: np.ndarray  # (1,) prompts cut to max_tokens
    longest: np.ndarray  # (1,) tokens of the longest of those prompts (after the cut)
    # massive activations, per layer: the largest |h| and where it was (value, ratio, dim, position, line)
    top_value: np.ndarray  # (L,)
    top_ratio: np.ndarray  # (L,)
    top_where: np.ndarray  # (L, 3) int64: dim, position, line
    at_first: np.ndarray  # (L,) prompts whose largest entry is at position 0
    ratio_sum: np.ndarray  # (L,) sum over prompts of largest |h| / median |h|
    first_ratio_sum: np.ndarray  # (L,) the same for position 0's largest entry
    rest_ratio_sum: np.ndarray  # (L,) the same for the largest entry at positions >= 1
    dim_counts: np.ndarray  # (L, D) int64: prompts whose largest entry sits in each dimension
    skipped: list[tuple[int, str]] = field(default_factory=list)  # lines the worker could not use

    @classmethod
    def empty(cls, stats: int, layers: int, heads: int, replicates: int, hidden: int) -> Partial:
        return cls(
            count=np.zeros(stats, np.int64),
            mean=np.zeros((stats, layers, heads)),
            m2=np.zeros((stats, layers, heads)),
            hist=np.zeros((stats, layers, heads, N_BINS), np.int64),
            boot_n=np.zeros((replicates, stats)),
            boot_sum=np.zeros((replicates, stats, layers, heads)),
            lines=np.zeros(0, np.int64),
            tokens=np.zeros(1, np.int64),
            truncated=np.zeros(1, np.int64),
            longest=np.zeros(1, np.int64),
            top_value=np.full(layers, -1.0),
            top_ratio=np.zeros(layers),
            top_where=np.zeros((layers, 3), np.int64),
            at_first=np.zeros(layers, np.int64),
            ratio_sum=np.zeros(layers),
            first_ratio_sum=np.zeros(layers),
            rest_ratio_sum=np.zeros(layers),
            dim_counts=np.zeros((layers, hidden), np.int64),
        )

    @property
    def prompts(self) -> int:
        return int(self.lines.shape[0])

    def merge(self, other: Partial) -> None:
        """Add ``other`` into this one (Chan et al.'s formula for the mean and m2)."""
        na = self.count.astype(np.float64)[:, None, None]
        nb = other.count.astype(np.float64)[:, None, None]
        n = na + nb
        safe = np.where(n > 0, n, 1.0)
        delta = other.mean - self.mean
        self.mean = np.where(n > 0, self.mean + delta * nb / safe, 0.0)
        self.m2 = self.m2 + other.m2 + delta**2 * na * nb / safe
        self.count = self.count + other.count
        self.hist = self.hist + other.hist
        self.boot_n = self.boot_n + other.boot_n
        self.boot_sum = self.boot_sum + other.boot_sum
        self.lines = np.concatenate([self.lines, other.lines])
        self.tokens = self.tokens + other.tokens
        self.truncated = self.truncated + other.truncated
        self.longest = np.maximum(self.longest, other.longest)
        better = _better(other.top_value, other.top_where[:, 2], self.top_value, self.top_where[:, 2])
        self.top_value = np.where(better, other.top_value, self.top_value)
        self.top_ratio = np.where(better, other.top_ratio, self.top_ratio)
        self.top_where = np.where(better[:, None], other.top_where, self.top_where)
        self.at_first = self.at_first + other.at_first
        self.ratio_sum = self.ratio_sum + other.ratio_sum
        self.first_ratio_sum = self.first_ratio_sum + other.first_ratio_sum
        self.rest_ratio_sum = self.rest_ratio_sum + other.rest_ratio_sum
        self.dim_counts = self.dim_counts + other.dim_counts
        self.skipped = self.skipped + other.skipped

    def to_bytes(self) -> bytes:
        """The partial as one ``.npz`` (the skipped lines as two arrays): for checkpoints and Ray."""
        arrays = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "skipped"}
        arrays["skipped_lines"] = np.array([line for line, _ in self.skipped], np.int64)
        arrays["skipped_reasons"] = np.array([reason for _, reason in self.skipped], dtype=np.str_)
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> Partial:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            # a shard saved before ``longest`` was kept: its longest prompt is not known (0)
            values = {
                f.name: z[f.name] if f.name in z.files else np.zeros(1, np.int64)
                for f in fields(cls)
                if f.name != "skipped"
            }
            skipped = [(int(a), str(b)) for a, b in zip(z["skipped_lines"], z["skipped_reasons"], strict=True)]
        return cls(**values, skipped=skipped)


def _better(value: np.ndarray, line: np.ndarray, than: np.ndarray, than_line: np.ndarray) -> np.ndarray:
    """Where (value, line) beats (than, than_line): a larger value, or the same value on an earlier line."""
    better: np.ndarray = (value > than) | ((value == than) & (line < than_line) & (value >= 0))
    return better


def add_prompt(
    part: Partial,
    line: int,
    weights: np.ndarray,
    count: np.ndarray,
    sums: np.ndarray,
    m2: np.ndarray,
    hist: np.ndarray,
) -> None:
    """Merge one prompt's per-head aggregates: count (S,), sums and m2 (S, L, H), hist (S, L, H, N_BINS);
    ``weights`` (B,) are its bootstrap weights."""
    nb = count.astype(np.float64)[:, None, None]
    na = part.count.astype(np.float64)[:, None, None]
    n = na + nb
    safe = np.where(n > 0, n, 1.0)
    mean_b = sums / np.where(nb > 0, nb, 1.0)
    delta = mean_b - part.mean
    part.mean = np.where(n > 0, part.mean + delta * nb / safe, 0.0)
    part.m2 = part.m2 + m2 + delta**2 * na * nb / safe
    part.count = part.count + count.astype(np.int64)
    part.hist += hist.astype(np.int64)
    part.boot_n += weights[:, None] * count[None, :]
    part.boot_sum += weights[:, None, None, None] * sums[None]
    part.lines = np.append(part.lines, np.int64(line))


def add_massive(
    part: Partial,
    line: int,
    top: np.ndarray,
    dim: np.ndarray,
    position: np.ndarray,
    median: np.ndarray,
    first: np.ndarray,
    rest: np.ndarray,
) -> None:
    """One prompt's massive-activation numbers, each (L,): its largest |h| with its dimension and
    position, the median |h|, and the largest |h| at position 0 and at positions >= 1."""
    safe = np.where(median > 0, median, np.finfo(np.float64).tiny)
    line_col = np.full(top.shape, line, np.int64)
    better = _better(top, line_col, part.top_value, part.top_where[:, 2])
    part.top_value = np.where(better, top, part.top_value)
    part.top_ratio = np.where(better, top / safe, part.top_ratio)
    where = np.stack([dim, position, line_col], axis=1).astype(np.int64)
    part.top_where = np.where(better[:, None], where, part.top_where)
    part.at_first = part.at_first + (position == 0)
    part.ratio_sum = part.ratio_sum + top / safe
    part.first_ratio_sum = part.first_ratio_sum + first / safe
    part.rest_ratio_sum = part.rest_ratio_sum + rest / safe
    part.dim_counts[np.arange(top.shape[0]), dim.astype(np.int64)] += 1


def _grid(values: np.ndarray, ok: np.ndarray) -> list[list[float | None]]:
    return [
        [float(v) if k else None for v, k in zip(row, oks, strict=True)] for row, oks in zip(values, ok, strict=True)
    ]


def statistics(part: Partial, names: tuple[str, ...]) -> dict[str, Statistic]:
    """Mean, std, n and the 95% bootstrap interval of every statistic, ``[layer][head]``."""
    out: dict[str, Statistic] = {}
    _, layers, heads = part.mean.shape
    for s, name in enumerate(names):
        n = int(part.count[s])
        ok = np.full((layers, heads), n > 0)
        std = np.sqrt(np.maximum(part.m2[s], 0.0) / max(n, 1))
        boot_n = part.boot_n[:, s]
        usable = boot_n > 0
        if usable.any() and n > 0:
            reps = part.boot_sum[usable, s] / boot_n[usable][:, None, None]  # (B', L, H)
            low, high = np.percentile(reps, [2.5, 97.5], axis=0)
        else:
            low = high = np.zeros((layers, heads))
        out[name] = Statistic(
            mean=_grid(part.mean[s], ok),
            std=_grid(std, ok),
            n=[[n] * heads for _ in range(layers)],
            ci_low=_grid(low, ok),
            ci_high=_grid(high, ok),
        )
    return out


def histograms(part: Partial, names: tuple[str, ...]) -> dict[str, Histogram]:
    return {
        name: Histogram(edges=[float(e) for e in edges_of(name)], counts=part.hist[s].tolist())
        for s, name in enumerate(names)
    }


def massive(part: Partial) -> list[MassiveLayer]:
    """The per-layer massive-activation records (empty when no prompt counted)."""
    prompts = part.prompts
    if prompts == 0:
        return []
    out = []
    for layer in range(part.top_value.shape[0]):
        counts = part.dim_counts[layer]
        order = np.argsort(-counts, kind="stable")[:TOP_DIMS]
        dim, position, line = (int(x) for x in part.top_where[layer])
        out.append(
            MassiveLayer(
                layer=layer,
                value=float(part.top_value[layer]),
                dim=dim,
                position=position,
                line=line,
                ratio=float(part.top_ratio[layer]),
                prompts=prompts,
                at_first=int(part.at_first[layer]),
                mean_ratio=float(part.ratio_sum[layer] / prompts),
                first_ratio=float(part.first_ratio_sum[layer] / prompts),
                rest_ratio=float(part.rest_ratio_sum[layer] / prompts),
                top_dims=[[int(d), int(counts[d])] for d in order if counts[d] > 0],
            )
        )
    return out
