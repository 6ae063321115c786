"""One layer's attention rows for a batch of prompts, reduced at once to per-prompt, per-head numbers.

:func:`layer_values` turns rows ``(B, H, T, T)`` (right-padded prompts, every query position)
into each statistic's value at every query position, ``(S, B, H, T)``, with the mask of the
(prompt, position) pairs that count, ``(S, B, T)``; :func:`per_prompt` sums them per prompt
and head (count, sum, sum of squared deviations, fixed-bin counts), in float64 on the CPU.
The definitions are the ones in ``attnscope.results.stats``. :func:`hidden_peaks` reduces one
layer's output hidden states to each prompt's largest ``|h|`` and its median ``|h|``. Nothing
here loads a model or prints.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from attnscope.core.stats_agg import N_BINS, edges_of
from attnscope.results.stats import NORM_STATS, SEGMENT_KINDS


@dataclass(frozen=True)
class BatchFacts:
    """What the reduction needs to know about a padded batch, on the rows' device.

    ``ids`` (B, T) token ids (padding anywhere after a prompt's end); ``lengths`` (B,);
    ``query`` (B, T) bool: the query positions that count; ``kinds`` (B, T, K) float one-hot
    segment kind of each key (None without chat).
    """

    ids: torch.Tensor
    lengths: torch.Tensor
    query: torch.Tensor
    kinds: torch.Tensor | None

    @classmethod
    def build(cls, ids: torch.Tensor, lengths: list[int], last_only: bool, kinds: torch.Tensor | None) -> BatchFacts:
        batch, width = ids.shape
        pos = torch.arange(width)[None, :]
        n = torch.tensor(lengths)[:, None]
        query = (pos == n - 1) if last_only else ((pos >= 1) & (pos < n))
        return cls(ids=ids, lengths=torch.tensor(lengths), query=query & (n >= 2), kinds=kinds)

    def to(self, device: torch.device) -> BatchFacts:
        return BatchFacts(
            ids=self.ids.to(device),
            lengths=self.lengths.to(device),
            query=self.query.to(device),
            kinds=None if self.kinds is None else self.kinds.to(device),
        )


def detection_patterns(ids: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """TransformerLens' duplicate-token and induction patterns, (B, T, T) [query, key] bool.

    duplicate: ``j < i`` and ``ids[j] == ids[i]``; induction: ``1 <= j <= i`` and the key before
    ``j`` is a duplicate of the query (``ids[j-1] == ids[i]``, ``j - 1 < i``). Padding never matches.
    """
    width = ids.shape[1]
    real = torch.arange(width, device=ids.device)[None, :] < lengths[:, None]  # (B, T)
    same = (ids[:, :, None] == ids[:, None, :]) & real[:, :, None] & real[:, None, :]
    earlier = torch.ones(width, width, dtype=torch.bool, device=ids.device).tril(-1)
    duplicate = same & earlier
    induction = torch.zeros_like(duplicate)
    induction[:, :, 1:] = duplicate[:, :, :-1]
    return duplicate, induction


def layer_values(
    rows: torch.Tensor, facts: BatchFacts, norms: torch.Tensor | None, names: tuple[str, ...]
) -> tuple[torch.Tensor, torch.Tensor]:
    """Each statistic at every query position: values (S, B, H, T) fp32 and counted (S, B, T) bool.

    rows: (B, H, T, T) fp32, query x key, zero on masked keys; norms: (B, H, T) ``||f_h(x_j)||``.
    """
    batch, heads, width, _ = rows.shape
    device = rows.device
    pos = torch.arange(width, device=device, dtype=rows.dtype)
    total = rows.sum(-1)  # (B, H, T): 1, or less with a learned sink
    values: dict[str, torch.Tensor] = {
        "sink": rows[..., 0],
        "self": torch.diagonal(rows, dim1=-2, dim2=-1),
        "previous_token": torch.nn.functional.pad(torch.diagonal(rows, offset=-1, dim1=-2, dim2=-1), (1, 0)),
    }
    entropy = -torch.special.xlogy(rows, rows).sum(-1)
    values["entropy"] = entropy
    values["entropy_norm"] = entropy / torch.log(pos + 1.0).clamp_min(1e-12)
    values["distance"] = pos * total - rows @ pos
    duplicate, induction = detection_patterns(facts.ids, facts.lengths)
    values["duplicate_token"] = torch.einsum("bhij,bij->bhi", rows, duplicate.to(rows.dtype))
    values["induction"] = torch.einsum("bhij,bij->bhi", rows, induction.to(rows.dtype))
    counted: dict[str, torch.Tensor] = {
        "duplicate_token": facts.query & duplicate.any(-1),
        "induction": facts.query & induction.any(-1),
    }
    if facts.kinds is not None:
        shares = torch.einsum("bhij,bjk->kbhi", rows, facts.kinds)  # (K, B, H, T)
        for k, kind in enumerate(SEGMENT_KINDS):
            values[f"segment.{kind}"] = shares[k]
    if norms is not None:
        weighted = rows * norms.to(device)[:, :, None, :]  # (B, H, T, T): alpha_ij ||f(x_j)||
        values[NORM_STATS[0]] = weighted[..., 0] / weighted.sum(-1).clamp_min(1e-30)
    stacked = torch.stack([values[name] for name in names])  # (S, B, H, T)
    mask = torch.stack([counted.get(name, facts.query) for name in names])  # (S, B, T)
    return stacked, mask


@dataclass(frozen=True)
class PerPrompt:
    """One layer's per-prompt aggregates: count (B, S), sums and m2 (B, S, H), hist (B, S, H, N_BINS)."""

    count: np.ndarray
    sums: np.ndarray
    m2: np.ndarray
    hist: np.ndarray


def per_prompt(values: torch.Tensor, counted: torch.Tensor, names: tuple[str, ...]) -> PerPrompt:
    """Sum each statistic per prompt and head, in float64 on the CPU."""
    x = values.detach().to("cpu", torch.float64).numpy()  # (S, B, H, T)
    m = counted.detach().cpu().numpy()[:, :, None, :]  # (S, B, 1, T)
    count = m[:, :, 0, :].sum(-1)  # (S, B)
    sums = np.where(m, x, 0.0).sum(-1)  # (S, B, H)
    mean = sums / np.where(count > 0, count, 1)[:, :, None]
    m2 = np.where(m, (x - mean[..., None]) ** 2, 0.0).sum(-1)
    hist = np.zeros((*sums.shape, N_BINS), np.int64)
    for s, name in enumerate(names):
        edges = edges_of(name)
        idx = np.clip(np.searchsorted(edges, x[s], side="right") - 1, 0, N_BINS - 1)  # (B, H, T)
        onehot = (idx[..., None] == np.arange(N_BINS)) & m[s][..., None]
        hist[s] = onehot.sum(-2)
    return PerPrompt(
        count=count.T.copy(),
        sums=sums.transpose(1, 0, 2).copy(),
        m2=m2.transpose(1, 0, 2).copy(),
        hist=hist.transpose(1, 0, 2, 3).copy(),
    )


@dataclass(frozen=True)
class Peaks:
    """One layer's output per prompt (each (B,)): largest |h|, its dim and position, median |h|,
    the largest |h| at position 0 and at positions >= 1."""

    top: np.ndarray
    dim: np.ndarray
    position: np.ndarray
    median: np.ndarray
    first: np.ndarray
    rest: np.ndarray


def hidden_peaks(hidden: torch.Tensor, lengths: list[int]) -> Peaks:
    """hidden: (B, T, D), right-padded; only each prompt's own positions count."""
    batch, width, dim = hidden.shape
    a = hidden.detach().abs().float()
    real = (torch.arange(width, device=a.device)[None, :] < torch.tensor(lengths, device=a.device)[:, None])[..., None]
    flat = a.masked_fill(~real, -1.0).reshape(batch, -1)
    top, where = flat.max(dim=1)
    median = torch.nanmedian(a.masked_fill(~real, float("nan")).reshape(batch, -1), dim=1).values
    first = a[:, 0].max(dim=1).values
    rest = a[:, 1:].masked_fill(~real[:, 1:], -1.0).reshape(batch, -1).max(dim=1).values.clamp_min(0.0)
    return Peaks(
        top=top.double().cpu().numpy(),
        dim=(where % dim).cpu().numpy(),
        position=(where // dim).cpu().numpy(),
        median=median.double().cpu().numpy(),
        first=first.double().cpu().numpy(),
        rest=rest.double().cpu().numpy(),
    )
