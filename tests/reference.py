"""The independent reference every capture test compares against: eager ``output_attentions``.

One place for the switch to eager attention and back (``capture.prepare`` restores
attnscope's attention function), so a test cannot forget to switch back.
"""

from __future__ import annotations

from typing import Any

import torch

from attnscope.core import capture


def eager_attentions(model: Any, ids: torch.Tensor, mask: torch.Tensor | None = None) -> tuple[torch.Tensor, ...]:
    """Per layer (B, H, T, T) from eager attention; ids (B, T), mask (B, T) or None (no padding).

    With a mask, position ids come from it (``capture.position_ids``), as attnscope's capture does.
    """
    model.set_attn_implementation("eager")
    try:
        with torch.no_grad():
            if mask is None:
                out = model(input_ids=ids, output_attentions=True)
            else:
                pos = capture.position_ids(mask)
                out = model(input_ids=ids, attention_mask=mask, position_ids=pos, output_attentions=True)
    finally:
        capture.prepare(model)
    return tuple(out.attentions)
