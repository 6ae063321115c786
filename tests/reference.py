"""The independent references the capture tests compare against: eager ``output_attentions``,
and transformers' own ``generate`` for the ids of ``attnscope generate``.

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


def hf_generate(loaded: Any, ids: list[int], n: int, **kwargs: Any) -> list[int]:
    """The new ids of transformers' ``model.generate`` after ``ids``, stopping where attnscope does."""
    from attnscope.core.generate import stop_ids

    seq = torch.tensor([ids])  # (1, T)
    out = loaded.model.generate(
        seq,
        attention_mask=torch.ones_like(seq),
        max_new_tokens=n,
        eos_token_id=stop_ids(loaded.model, loaded.tokenizer),
        pad_token_id=0,
        **kwargs,
    )
    return [int(i) for i in out[0, len(ids) :]]
