"""One layer's attention rows for a batch of prompts, reduced at once to per-prompt, per-head numbers.

:func:`layer_values` turns log-rows ``(B, H, T, T)`` (right-padded prompts, every query position)
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

from attnscope.core.stats.aggregates import N_BINS, edges_of
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
    duplicate: torch.Tensor  # (B, T, T) float 0/1: detection_patterns, once per batch
    induction: torch.Tensor

    @classmethod
    def build(
        cls, ids: torch.Tensor, lengths: list[int], positions: list[list[int]] | None, kinds: torch.Tensor | None
    ) -> BatchFacts:
        """``positions``: each prompt's query positions that count (None: every one from 1)."""
        batch, width = ids.shape
        pos = torch.arange(width)[None, :]
        n = torch.tensor(lengths)[:, None]
        if positions is None:
            query = (pos >= 1) & (pos < n)
        else:
            query = torch.zeros((batch, width), dtype=torch.bool)
            for b, at in enumerate(positions):
                query[b, at] = True
        duplicate, induction = detection_patterns(ids, torch.tensor(lengths))
        return cls(
            ids=ids,
            lengths=torch.tensor(lengths),
            query=query & (n >= 2),
            kinds=kinds,
            duplicate=duplicate.float(),
            induction=induction.float(),
        )

    def to(self, device: torch.device) -> BatchFacts:
        return BatchFacts(
            ids=self.ids.to(device),
            lengths=self.lengths.to(device),
            query=self.query.to(device),
            kinds=None if self.kinds is None else self.kinds.to(device),
            duplicate=self.duplicate.to(device),
            induction=self.induction.to(device),
        )


def detection_patterns(ids: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """TransformerLens' duplicate-token and induction patterns, (B, T, T) [query, key] bool.

    duplicate: ``j < i`` and ``ids[j] == ids[i]``; induction: ``1 <= j <= i`` and the key before
    ``j`` is a duplicate of the query (``ids[j-1] == ids[i]``, ``j - 1 < i``). Padding never matches.
    """
    a = ids.cpu().numpy()
    width = a.shape[1]
    real = np.arange(width)[None, :] < lengths.cpu().numpy()[:, None]  # (B, T)
    same = (a[:, :, None] == a[:, None, :]) & real[:, :, None] & real[:, None, :]
    duplicate = same & np.tri(width, width, -1, dtype=bool)[None]
    induction = np.zeros_like(duplicate)
    induction[:, :, 1:] = duplicate[:, :, :-1]
    return torch.from_numpy(duplicate), torch.from_numpy(induction)


def layer_values(
    log_rows: torch.Tensor, facts: BatchFacts, norms: torch.Tensor | None, names: tuple[str, ...]
) -> tuple[torch.Tensor, torch.Tensor]:
    """Each statistic at every query position: values (S, B, H, T) fp32 and counted (S, B, T) bool.

    log_rows: (B, H, T, T) fp32 log-probabilities, query x key, -inf on masked keys (the engine's
    ``log_rows``: the entropy then needs no logarithm of its own); norms: (B, H, T) ``||f_h(x_j)||``.
    A NaN or inf anywhere in a row reaches that row's entropy, so checking the values is enough.
    """
    rows = torch.softmax(log_rows, dim=-1)  # = exp(log_rows) to a rounding, and faster where keys are -inf
    batch, heads, width, _ = rows.shape
    device = rows.device
    pos = torch.arange(width, device=device, dtype=rows.dtype)
    total = rows.sum(-1)  # (B, H, T): 1, or less with a learned sink
    values: dict[str, torch.Tensor] = {
        "sink": rows[..., 0],
        "self": torch.diagonal(rows, dim1=-2, dim2=-1),
        "previous_token": torch.nn.functional.pad(torch.diagonal(rows, offset=-1, dim1=-2, dim2=-1), (1, 0)),
    }
    # -sum p log p; a masked key has p = 0 and log p = -inf, set to 0 so that 0 * log p is 0 (a NaN in a
    # row stays in the row's p, so the entropy is still NaN)
    entropy = -(rows * log_rows.nan_to_num(neginf=0.0)).sum(-1)
    values["entropy"] = entropy
    values["entropy_norm"] = entropy / torch.log(pos + 1.0).clamp_min(1e-12)
    values["distance"] = pos * total - rows @ pos
    values["duplicate_token"] = (rows * facts.duplicate[:, None]).sum(-1)
    values["induction"] = (rows * facts.induction[:, None]).sum(-1)
    counted: dict[str, torch.Tensor] = {
        "duplicate_token": facts.query & (facts.duplicate.sum(-1) > 0),
        "induction": facts.query & (facts.induction.sum(-1) > 0),
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
    stats, batch, heads, width = x.shape
    idx = np.empty(x.shape, np.int64)
    for s, name in enumerate(names):
        idx[s] = np.clip(np.searchsorted(edges_of(name), x[s], side="right") - 1, 0, N_BINS - 1)  # (B, H, T)
    cell = np.arange(stats * batch * heads).reshape(stats, batch, heads, 1) * N_BINS  # one block of bins per (s, b, h)
    keep = np.broadcast_to(m, x.shape)
    hist = np.bincount((cell + idx)[keep], minlength=stats * batch * heads * N_BINS)
    hist = hist.reshape(stats, batch, heads, N_BINS).astype(np.int64)
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
    """hidden: (B, T, D), right-padded; only each prompt's own positions count. The median is
    the lower median of the prompt's ``n * D`` entries."""
    dim = hidden.shape[-1]
    got = []
    for b, n in enumerate(lengths):
        a = hidden[b, :n].detach().float().abs().cpu().numpy()  # (n, D)
        flat = a.reshape(-1)
        where = int(flat.argmax())
        low = (flat.size - 1) // 2  # torch's median: the lower of the two middle values
        got.append(
            (
                float(flat[where]),
                where % dim,
                where // dim,
                float(np.partition(flat, low)[low]),
                float(a[0].max()),
                float(a[1:].max()) if n > 1 else 0.0,
            )
        )
    cols = list(zip(*got, strict=True))
    return Peaks(
        top=np.array(cols[0], np.float64),
        dim=np.array(cols[1], np.int64),
        position=np.array(cols[2], np.int64),
        median=np.array(cols[3], np.float64),
        first=np.array(cols[4], np.float64),
        rest=np.array(cols[5], np.float64),
    )
