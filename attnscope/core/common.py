"""Helpers several core modules share: the tolerance two computations are held to, padding a batch,
and handing rows to ``attnscope.results.derive``.

The rule for reading a mask lives in ``capture.masking``, the typed arguments and their index checks in ``core.prompt.spec``.
This module does not load models and does not print.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from attnscope.core.prompt.tokens import Encoded
from attnscope.errors import AttnscopeError
from attnscope.results.common import ModelInfo
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


def _listed(layers: Sequence[int]) -> str:
    return ", ".join(str(layer) for layer in layers)


def attention_layers(info: ModelInfo, layers: Sequence[int]) -> list[int]:
    """The selected layers that have attention weights. Linear-attention layers (a hybrid model's)
    are left out, and the model header names them; a selection of linear layers alone is refused."""
    linear = set(info.linear_layers())
    kept = [layer for layer in layers if layer not in linear]
    if not kept:
        full = [i for i in range(info.num_hidden_layers) if i not in linear]
        raise (
            AttnscopeError(
                "linear_layer", arg="layer", layers=_listed(layers), model_type=info.model_type, full=_listed(full)
            )
            if len(layers) == 1
            else AttnscopeError("linear_layers", layers=_listed(layers), model_type=info.model_type, full=_listed(full))
        )
    return kept


def every_layer(info: ModelInfo, what: str) -> list[int]:
    """All layers, for an analysis that needs every layer's rows; refused on a hybrid model."""
    linear = info.linear_layers()
    if linear:
        raise AttnscopeError("linear_needs_all", what=what, layers=_listed(linear), model_type=info.model_type)
    return list(range(info.num_hidden_layers))
