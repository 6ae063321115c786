"""Result of ``attnscope patch``: activation patching between a clean and a corrupt prompt.

The raw numbers are the metric on the clean and the corrupt run, and the metric of every
patched run (per query head, per KV head for keys or values, per layer and position of the
residual stream). The normalised recovery (patched - corrupt) / (clean - corrupt) is derived
from them by ``attnscope.results.derive`` (``recovery``). Nothing here computes or prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from attnscope.results import Result
from attnscope.results.common import Metric, ModelInfo, ResultWarning, Token

Direction = Literal["denoise", "noise"]
Site = Literal["head", "resid", "k", "v"]
SITES: tuple[Site, ...] = ("head", "resid", "k", "v")


@dataclass(frozen=True)
class PatchResult(Result):
    """Each piece of one run patched into the other: the metric and its normalised recovery."""

    SCHEMA = "attnscope.patch/1"
    ARRAYS = ("heads_metric", "residual_metric", "k_metric", "v_metric", "heads", "residual", "k", "v")

    model: ModelInfo
    clean_text: str
    corrupt_text: str
    clean_tokens: list[Token]
    corrupt_tokens: list[Token]
    metric: Metric
    direction: Direction  # denoise: clean patched into corrupt (sufficiency); noise: corrupt into clean (necessity)
    sites: list[Site]  # what was patched: head outputs, residual positions, K or V heads
    clean: float  # the metric on the clean run
    corrupt: float  # the metric on the corrupt run
    layers: list[int]
    # the positions of the run patched into that have a partner (all of them unless align); the columns of residual
    positions: list[int] = field(default_factory=list)
    # align: positions paired from the end; the donor's position is the patched run's position + offset
    offset: int = 0
    heads_metric: list[list[float]] | None = None  # [layer][head]: the metric with that head's output patched
    residual_metric: list[list[float]] | None = (
        None  # [layer][i]: the metric with that layer's input patched at positions[i]
    )
    k_metric: list[list[float]] | None = None  # [layer][kv_head]: the metric with that KV head's keys patched
    v_metric: list[list[float]] | None = None  # [layer][kv_head]: the same for its values
    heads: list[list[float]] | None = None  # derived: the normalised recovery of heads_metric
    residual: list[list[float]] | None = None  # derived: the normalised recovery of residual_metric
    k: list[list[float]] | None = None  # derived: the normalised recovery of k_metric
    v: list[list[float]] | None = None  # derived: the normalised recovery of v_metric
    shared_by: list[list[int]] = field(default_factory=list)  # [kv_head]: the query heads that read it
    warnings: list[ResultWarning] = field(default_factory=list)
