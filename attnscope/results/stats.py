"""Result of ``attnscope stats``: per-head attention statistics over a corpus of prompts.

Definitions (so that anyone can recompute them; docs/measures.md says the same in prose).
``alpha_ij`` is the weight query position ``i`` gives key position ``j`` in one head;
positions count from 0 within each prompt. Query positions start at 1, because position 0
can only attend to itself; with ``pos="last"`` only each prompt's last position counts, and
with positions (``pos="1,3"``, ``"-2"``, negative from each prompt's end) those of every prompt
(a prompt that lacks one is skipped).

- ``sink``: ``alpha_i0``; ``self``: ``alpha_ii``; ``previous_token``: ``alpha_i,i-1``.
- ``entropy``: ``-sum_j alpha_ij log alpha_ij`` in nats; ``entropy_norm``: that divided by
  ``log(i + 1)``, the entropy of a uniform row over the ``i + 1`` keys.
- ``distance``: ``sum_j alpha_ij (i - j)``, in positions.
- ``duplicate_token``: ``sum_j alpha_ij`` over the earlier keys ``j < i`` holding the query's
  own token; ``induction``: ``sum_j alpha_ij`` over the keys ``j <= i`` whose previous token
  ``j - 1`` is an earlier copy of the query's token. These are TransformerLens' detection
  patterns, row by row; a position counts only where its pattern row is not empty.
- ``segment.<kind>``: the weight on the keys of each chat segment kind (with ``chat``).
- ``norm_sink``: ``alpha_i0 ||f(x_0)|| / sum_j alpha_ij ||f(x_j)||``, the sink's share of the
  norm measure (Kobayashi et al. 2020), with ``measure="norm"``.

A statistic's ``mean`` is over every counted (prompt, position) pair and ``n`` is that count;
``std`` is the standard deviation over the same pairs. ``ci_low``/``ci_high`` bound a 95%
percentile interval of the mean from a seeded Poisson bootstrap over prompts: every prompt
weighs ``Poisson(1)`` in each replicate, drawn from ``(seed, line number)``. A cell with
``n = 0`` holds null. Nothing here computes or prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from attnscope.results import Result
from attnscope.results.common import ModelInfo, ResultWarning

BASE_STATS: tuple[str, ...] = (
    "sink",
    "self",
    "previous_token",
    "entropy",
    "entropy_norm",
    "distance",
    "duplicate_token",
    "induction",
)
SEGMENT_KINDS: tuple[str, ...] = ("template", "system", "user", "assistant")
SEGMENT_STATS: tuple[str, ...] = tuple(f"segment.{kind}" for kind in SEGMENT_KINDS)
NORM_STATS: tuple[str, ...] = ("norm_sink",)
# The roles the view ranks heads by, each with the statistic that scores it.
ROLE_STATS: tuple[str, ...] = ("sink", "previous_token", "duplicate_token", "induction")

Pos = str  # the query positions, as --pos writes them: "all", "last" (-1), "5", "-2", "1,3,5-8"
Engine = Literal["local", "ray"]

Grid = list[list[float | None]]


def stat_names(chat: bool, norm: bool) -> tuple[str, ...]:
    """The statistics a run computes, in the order they are stored."""
    return BASE_STATS + (SEGMENT_STATS if chat else ()) + (NORM_STATS if norm else ())


@dataclass(frozen=True)
class Statistic:
    """One statistic for every head: each field is a ``[layer][head]`` grid."""

    mean: Grid
    std: Grid
    n: list[list[int]]  # counted (prompt, position) pairs
    ci_low: Grid  # 95% bootstrap interval of the mean, over prompts
    ci_high: Grid


@dataclass(frozen=True)
class Histogram:
    """Counts of a statistic's per-position values in fixed bins, for every head.

    ``edges`` has one more entry than each ``counts[layer][head]``; bin ``k`` holds values in
    ``[edges[k], edges[k+1])`` (the last bin also holds its upper edge and anything above it).
    """

    edges: list[float]
    counts: list[list[list[int]]]  # [layer][head][bin]


@dataclass(frozen=True)
class SkippedLine:
    line: int  # 1-based, as an editor shows it
    reason: str


@dataclass(frozen=True)
class Corpus:
    """The input file and what became of its lines."""

    path: str
    sha256: str
    lines: int  # lines in the file, blank ones included
    used: int  # prompts that counted
    skipped: list[SkippedLine]  # every bad line and why
    truncated: int  # prompts cut to max_tokens
    tokens: int  # tokens of the used prompts (after truncation)
    positions: int  # query positions counted (the n of sink, the same for every head)


@dataclass(frozen=True)
class StatsOptions:
    """What the statistics depend on, and how the run was carried out."""

    field: str  # the JSON field holding the prompt
    max_tokens: int | None  # prompts longer than this were cut to it
    pos: Pos  # "all": every query position from 1; "last": each prompt's last position; else the positions (such as "1,3,5-8", negative from each prompt's end) counted in every prompt, a prompt without them skipped
    chat: bool  # prompts went through the chat template
    system: str | None  # the system message given for every prompt (with chat)
    measure: Literal["weight", "norm"]  # "norm" adds norm_sink
    bootstrap: int  # bootstrap replicates
    seed: int  # the bootstrap's seed
    shard_size: int  # input lines per shard (a checkpoint holds whole shards)
    engine: Engine
    workers: int  # Ray workers (1 for the local engine)
    batch_size: int  # prompts padded and run together per forward


@dataclass(frozen=True)
class MassiveLayer:
    """The largest activation in one layer's output hidden states (Sun et al. 2024).

    ``value`` is the largest ``|h|`` entry over all prompts and positions, at ``dim`` and
    ``position`` of input line ``line``; ``ratio`` is it divided by the median ``|h|`` of
    that prompt's layer output. Over the ``prompts``, ``at_first`` prompts had their largest
    entry at position 0; ``mean_ratio`` is the mean of each prompt's largest ``|h|`` over its
    median, and ``first_ratio`` and ``rest_ratio`` the same for the largest entry at position
    0 and at positions 1 and later. ``top_dims`` are the dimensions holding a prompt's
    largest entry most often, with how often.
    """

    layer: int
    value: float
    dim: int
    position: int
    line: int
    ratio: float
    prompts: int
    at_first: int
    mean_ratio: float
    first_ratio: float
    rest_ratio: float
    top_dims: list[list[int]]  # [dim, prompts], most frequent first


@dataclass(frozen=True)
class StatsResult(Result):
    SCHEMA = "attnscope.stats/1"
    # with --arrays FILE these grids go to the file and the JSON keeps references to them
    ARRAYS = (
        "stats{}.mean",
        "stats{}.std",
        "stats{}.n",
        "stats{}.ci_low",
        "stats{}.ci_high",
        "histograms{}.counts",
    )

    model: ModelInfo
    corpus: Corpus
    options: StatsOptions
    stats: dict[str, Statistic]  # by name: sink, self, ..., segment.<kind>, norm_sink
    histograms: dict[str, Histogram]
    massive: list[MassiveLayer]  # one per layer
    elapsed: float  # seconds this run's prompts took (loading excluded; with Ray, its start-up included)
    ran: int = 0  # prompts this run computed; the others came from the checkpoint
    # mixed_windows_length: the longest prompt is longer than a sliding layer's window, and the
    # sliding layers' statistics are listed and ranked with the full layers'
    warnings: list[ResultWarning] = field(default_factory=list)

    def table_rows(self) -> list[dict[str, object]]:
        """The long table: one row per (layer, head, statistic), in that order."""
        groups = self.model.num_attention_heads // max(1, self.model.num_key_value_heads)
        rows: list[dict[str, object]] = []
        for name, stat in self.stats.items():
            for layer, means in enumerate(stat.mean):
                for head, mean in enumerate(means):
                    rows.append(
                        {
                            "layer": layer,
                            "head": head,
                            "kv_head": head // groups,
                            "statistic": name,
                            "mean": mean,
                            "std": stat.std[layer][head],
                            "n": stat.n[layer][head],
                            "ci_low": stat.ci_low[layer][head],
                            "ci_high": stat.ci_high[layer][head],
                        }
                    )
        return rows
