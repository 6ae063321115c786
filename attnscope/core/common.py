"""Helpers several core modules share: the tolerance two computations are held to, padding a batch,
and handing rows to ``attnscope.results.derive``.

The rule for reading a mask lives in ``capture.masking``, the typed arguments and their index checks in ``core.spec``.
This module does not load models and does not print.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from attnscope.core.tokens import Encoded
from attnscope.results.derive import F32, f32


def tolerance(dtype: torch.dtype) -> float:
    """How far two computations of the same number may differ and still count as equal."""
    return 1e-4 if dtype == torch.float32 else 5e-2


def as_array(tensor: torch.Tensor) -> F32:
    """A tensor as the fp32 numpy array the derivations in ``attnscope.results.derive`` take."""
    return f32(tensor.detach().cpu().float().numpy())


def pad_batch(encs: Sequence[Encoded], pad_id: int, side: str = "left") -> tuple[torch.Tensor, torch.Tensor, list[int]]:
    """(input_ids, attention_mask, offsets): both (batch, T); offsets[b] is where sequence b starts."""
    width = max(len(e.ids) for e in encs)
    ids = torch.full((len(encs), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(encs), width), dtype=torch.long)
    offsets = []
    for b, e in enumerate(encs):
        n = len(e.ids)
        start = width - n if side == "left" else 0
        ids[b, start : start + n] = torch.tensor(e.ids)
        mask[b, start : start + n] = 1
        offsets.append(start)
    return ids, mask, offsets


def pad_id(tokenizer: Any) -> int:
    for name in ("pad_token_id", "eos_token_id"):
        value = getattr(tokenizer, name, None)
        if isinstance(value, int):
            return value
    return 0
