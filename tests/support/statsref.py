"""An independent reference for ``attnscope stats``: eager ``output_attentions``, one prompt at a
time, every statistic written out position by position in numpy, as docs/measures.md defines it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

BASE = ("sink", "self", "previous_token", "entropy", "entropy_norm", "distance", "duplicate_token", "induction")


def eager(model: Any, ids: list[int]) -> tuple[np.ndarray, list[np.ndarray]]:
    """(L, H, T, T) float64 attention patterns and each layer's hidden states (T, D) from eager attention.

    ``hidden[l]`` is what decoder layer l returns (``output_hidden_states`` minus the embedding;
    the last entry is taken before the final norm, by a hook)."""
    from attnscope.capture import engine

    model.set_attn_implementation("eager")
    seen: dict[int, np.ndarray] = {}
    hooks = [
        layer.register_forward_hook(
            lambda m, a, out, i=i: seen.__setitem__(i, (out[0] if isinstance(out, tuple) else out)[0].double().numpy())
        )
        for i, layer in enumerate(model.model.layers)
    ]
    try:
        with torch.no_grad():
            out = model(input_ids=torch.tensor([ids]), output_attentions=True)
    finally:
        for h in hooks:
            h.remove()
        engine.prepare(model)
    patterns = np.stack([a[0].double().numpy() for a in out.attentions])
    return patterns, [seen[i] for i in range(len(seen))]


def position_values(a: np.ndarray, ids: list[int], i: int) -> dict[str, np.ndarray | None]:
    """Every statistic at query position i from patterns a (L, H, T, T): (L, H) arrays, None where undefined."""
    row = a[:, :, i, : i + 1]  # (L, H, i+1)
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.where(row > 0, np.log(np.where(row > 0, row, 1.0)), 0.0)
    entropy = -(row * logs).sum(-1)
    dup = [j for j in range(i) if ids[j] == ids[i]]
    ind = [j for j in range(1, i + 1) if ids[j - 1] == ids[i] and j - 1 < i]
    return {
        "sink": row[..., 0],
        "self": row[..., i],
        "previous_token": row[..., i - 1],
        "entropy": entropy,
        "entropy_norm": entropy / np.log(i + 1),
        "distance": (row * (i - np.arange(i + 1))).sum(-1),
        "duplicate_token": row[..., dup].sum(-1) if dup else None,
        "induction": row[..., ind].sum(-1) if ind else None,
    }


def reference(
    model: Any, prompts: list[list[int]], pos: str | list[int] = "all"
) -> dict[str, tuple[np.ndarray, np.ndarray, int]]:
    """Each statistic's (mean, std, n) over every counted (prompt, position) pair. ``pos``: "all"
    (every position from 1), "last", or positions (negative from each prompt's end) that every
    prompt given has."""
    values: dict[str, list[np.ndarray]] = {name: [] for name in BASE}
    for ids in prompts:
        a, _ = eager(model, ids)
        n = len(ids)
        if isinstance(pos, list):
            positions: Any = sorted({p if p >= 0 else n + p for p in pos})
        else:
            positions = range(1, n) if pos == "all" else [n - 1]
        for i in positions:
            for name, v in position_values(a, ids, i).items():
                if v is not None:
                    values[name].append(v)
    out = {}
    for name, vs in values.items():
        stacked = np.stack(vs)
        out[name] = (stacked.mean(0), stacked.std(0), len(vs))
    return out


def assert_same_stats(a: Any, b: Any, rel: float = 1e-6) -> None:
    """Two StatsResults agree: every statistic's mean, std and interval within ``rel`` relative,
    the same counts, and the massive-activation values within ``rel``."""
    for name, stat in a.stats.items():
        for part in ("mean", "std", "ci_low", "ci_high"):
            x = np.array(getattr(stat, part), float)
            y = np.array(getattr(b.stats[name], part), float)
            assert np.nanmax(np.abs(x - y) / np.maximum(np.abs(x), 1e-12)) < rel, (name, part)
        assert stat.n == b.stats[name].n, name
    assert [m.value for m in a.massive] == pytest.approx([m.value for m in b.massive], rel=rel)
