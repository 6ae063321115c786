"""Memory guard: estimate what a step will allocate and refuse before allocating it.

Anything that grows as T² or faster (full attention matrices, padded 4D masks, big
batches) calls :func:`guard` with its estimate first. The guard compares it with the
memory that is free now (``MemAvailable`` and the cgroup limit on Linux, the free
CUDA memory on a GPU), keeps 20% headroom, and raises an :class:`AttnscopeError`
(exit code RESOURCE) that states the estimate, what is free, and a suggestion.
``ATTNSCOPE_MEMORY_LIMIT`` (bytes, or ``512M``, ``4G``) caps the budget further, for
shared machines and for tests. This module does not allocate, does not measure what
was really used, and knows nothing about models: callers size their own steps with
the small estimators below.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from attnscope.errors import AttnscopeError

FP32 = 4  # bytes per float32
HEADROOM = 0.8  # use at most this share of what is free
ENV_LIMIT = "ATTNSCOPE_MEMORY_LIMIT"
PADDED_MASK_BYTES = 7  # per (batch, key, key) entry of a padded forward; see capture_bytes

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def fmt_bytes(n: float) -> str:
    """``1536`` -> ``'1.5 KiB'`` (three significant digits)."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(value) < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.3g} {unit}"
        value /= 1024
    return f"{value:.3g} TiB"


def parse_size(text: str) -> int:
    """``'512M'``, ``'4G'``, ``'1.5GiB'``, ``'1000'`` -> bytes."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*", text.upper())
    if not m:
        raise AttnscopeError("memory_limit", value=repr(text))
    return int(float(m.group(1)) * _UNITS[m.group(2)])


def _read_int(path: str) -> int | None:
    try:
        text = Path(path).read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _cpu_free() -> int | None:
    free: int | None = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                free = int(line.split()[1]) * 1024
                break
    except (OSError, ValueError, IndexError):
        free = None
    if free is None:
        try:
            free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            free = None
    # A container's cgroup limit can be far below what the host reports.
    limit = _read_int("/sys/fs/cgroup/memory.max")
    used = _read_int("/sys/fs/cgroup/memory.current")
    if limit is not None and used is not None:
        room = max(0, limit - used)
        free = room if free is None else min(free, room)
    return free


def available_bytes(device: str = "cpu") -> int | None:
    """Bytes free on ``device`` now ('cpu', 'cuda', 'cuda:1', 'mps'); None when unknown."""
    if device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            return None
        index = torch.device(device).index
        free, _total = torch.cuda.mem_get_info(index if index is not None else torch.cuda.current_device())
        return int(free)
    if device.startswith("cpu"):
        return _cpu_free()
    return None  # mps and others: no reliable number


def budget(device: str = "cpu") -> int | None:
    """What a step may allocate on ``device``: 80% of what is free, capped by $ATTNSCOPE_MEMORY_LIMIT."""
    free = available_bytes(device)
    room = None if free is None else int(free * HEADROOM)
    env = os.environ.get(ENV_LIMIT)
    if env:
        cap = parse_size(env)
        room = cap if room is None else min(room, cap)
    return room


def guard(bytes_needed: int, kind: str, device: str = "cpu", **values: Any) -> None:
    """Raise the error ``kind`` (RESOURCE) if ``bytes_needed`` does not fit in :func:`budget`.

    ``kind`` names the allocation and what to change (``memory_rows``: attention rows, fewer
    layers); ``values`` are its sizes, and the error adds ``need``, ``have`` and ``where`` (the
    device, when it is not the CPU). Does nothing when the free memory cannot be known.
    """
    room = budget(device)
    if room is None or bytes_needed <= room:
        return
    where = "" if device.startswith("cpu") else f" on {device}"
    raise AttnscopeError(kind, **values, need=fmt_bytes(bytes_needed), have=fmt_bytes(room), where=where)


def rows_bytes(layers: int, batch: int, heads: int, queries: int, keys: int) -> int:
    """fp32 attention rows kept: (layers, batch, head, query_pos, key_pos)."""
    return layers * batch * heads * queries * keys * FP32


def mask_bytes(batch: int, q_len: int, kv_len: int, itemsize: int = 1) -> int:
    """A materialised 4D mask (batch, 1, q_len, kv_len); bool by default."""
    return batch * q_len * kv_len * itemsize


def capture_bytes(
    *,
    layers: int,
    batch: int,
    heads: int,
    queries: int,
    keys: int,
    padded: bool,
    kept_layers: int = 0,
    hidden: int = 0,
) -> tuple[int, int]:
    """(kept, transient) bytes of one capture run.

    kept: the fp32 rows of every requested layer plus kept q/k/v/output (about
    ``3 * batch * keys * hidden`` fp32 each). transient: one layer's scores, softmax and
    mask fill (three (batch, head, queries, keys) fp32 buffers) plus, for a padded batch,
    :data:`PADDED_MASK_BYTES` per (batch, key, key) entry: the 4D bool mask, its
    intermediates and the float copy CPU sdpa makes of it (measured: 5.5-6.2 bytes per
    entry at T = 2048 and 4096, whatever the number of heads). An unpadded batch takes
    sdpa's is_causal path and builds no mask.
    """
    kept = rows_bytes(layers, batch, heads, queries, keys) + kept_layers * 3 * batch * keys * hidden * FP32
    mask = PADDED_MASK_BYTES * mask_bytes(batch, keys, keys) if padded else 0
    transient = 3 * rows_bytes(1, batch, heads, queries, keys) + mask
    return kept, transient
