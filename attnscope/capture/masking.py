"""The one rule for reading an attention mask: does this entry forbid the query to see the key?

transformers hands attention a 4D mask in one of two forms: a bool mask (True = attend)
or an additive float mask added to the scores (0 = attend; the dtype's most negative
value, or -inf, = masked). Capture, ``mask`` and ``explain`` all read masks through
:func:`forbids`, so they agree on every dtype:

* bool: an entry forbids when it is False;
* floating point: an entry forbids when it is -inf or at most half the dtype's most
  negative value (``torch.finfo(dtype).min / 2``): after softmax such a key gets exactly
  0 in every dtype, whether the mask builder wrote ``finfo.min``, ``-inf``, or the sum of
  two such entries clamped back to ``finfo.min``; a smaller negative entry is a bias,
  not a mask, and is added to the score like any other;
* integer (a 0/1 ``attention_mask``-style grid): an entry forbids when it is 0.

This module does not print and holds no state.
"""

from __future__ import annotations

import torch


def forbids(mask: torch.Tensor) -> torch.Tensor:
    """Bool tensor of ``mask``'s shape: True where the entry masks the key out."""
    if mask.dtype == torch.bool:
        return ~mask
    if mask.is_floating_point():
        return mask <= torch.finfo(mask.dtype).min / 2
    return mask == 0


def allows(mask: torch.Tensor) -> torch.Tensor:
    """Bool tensor of ``mask``'s shape: True where the query may see the key."""
    return ~forbids(mask)
