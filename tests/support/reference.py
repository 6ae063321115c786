"""The independent references the capture tests compare against: eager ``output_attentions``,
and transformers' own ``generate`` for the ids of ``attnscope generate``.

One place for the switch to eager attention and back (``engine.prepare`` restores
attnscope's attention function), so a test cannot forget to switch back.
"""

from __future__ import annotations

from typing import Any

import torch

from attnscope.capture import engine


def eager_attentions(model: Any, ids: torch.Tensor, mask: torch.Tensor | None = None) -> tuple[torch.Tensor, ...]:
    """Per layer (B, H, T, T) from eager attention; ids (B, T), mask (B, T) or None (no padding).

    With a mask, position ids come from it (``engine.position_ids``), as attnscope's capture does.
    """
    model.set_attn_implementation("eager")
    try:
        with torch.no_grad():
            if mask is None:
                out = model(input_ids=ids, output_attentions=True)
            else:
                pos = engine.position_ids(mask)
                out = model(input_ids=ids, attention_mask=mask, position_ids=pos, output_attentions=True)
    finally:
        engine.prepare(model)
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


def heads_scores(
    attentions: tuple[torch.Tensor, ...], q_span: list[int], k_span: list[int], agg: str, no_sink: bool = False
) -> torch.Tensor:
    """(L, H) heads scores by hand from eager rows (``eager_attentions``): the query's weight on
    the key's tokens, the query span taken by its last token or the mean; ``no_sink`` drops
    position 0 and renormalizes."""
    rows = torch.stack([a[0][:, q_span, :] for a in attentions])  # (L, H, P, T)
    if no_sink:
        rows = rows.clone()
        rows[..., 0] = 0
        rows = rows / rows.sum(-1, keepdim=True)
    row = rows[:, :, -1, :] if agg == "last" else rows.mean(dim=2)  # (L, H, T)
    return row[:, :, k_span].sum(-1)
