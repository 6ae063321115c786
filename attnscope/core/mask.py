"""Real mode of ``attnscope mask``: the grid for a padded batch, checked against the model.

The prompts are tokenized as one padded batch by the tokenizer itself (its padding side,
or the one asked for). The grid each sequence gets comes from
:mod:`attnscope.core.maskgrid` (pure Python, from the 2D ``attention_mask`` alone). It is
then compared with two masks that transformers builds, read from inside a forward and
never recomputed here:

* the 4D mask every layer's attention receives in attnscope's capture (sdpa's mask
  builder; ``None`` means sdpa's ``is_causal`` fast path, i.e. pure causal);
* the float mask an eager forward hands layer 0 (0 = attend, dtype min = masked).

The same two forwards show how padded query rows come out (eager softmaxes a fully
masked row uniformly over all keys; sdpa and the capture return 0), and the captured
rows of one real token of a padded sequence show that its pad columns are exactly 0.
This module does not draw or print; it returns a :class:`MaskResult`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any

import torch

from attnscope.capture import anatomy, engine, hooks, masking
from attnscope.core import maskgrid
from attnscope.core.common import pad_batch, pad_id
from attnscope.core.prompt.spec import ChatSpec, one_of
from attnscope.core.prompt.tokens import Encoded, check_length, encode_prompt
from attnscope.errors import AttnscopeError
from attnscope.model import Loaded
from attnscope.results.common import ResultWarning
from attnscope.results.mask import PAD_LABEL, MaskKind, MaskResult, MaskSequence, PadColumnCheck, PadRowCheck

MAX_MISMATCHES = 50


def padded_batch(
    tokenizer: Any, encs: Sequence[Encoded], side: maskgrid.Side, warnings: list[ResultWarning]
) -> tuple[torch.Tensor, torch.Tensor]:
    """(input_ids, attention_mask), both (batch, T), padded by the tokenizer on ``side``.

    Falls back to :func:`pad_batch` (with a warning) when the tokenizer has no pad token
    or its padding does not reproduce each sequence's ids.
    """
    if getattr(tokenizer, "pad_token", None) is not None:
        chat = encs[0].chat
        out = tokenizer(
            [e.text for e in encs],
            add_special_tokens=not chat,
            padding=True,
            padding_side=side,
            return_tensors="pt",
        )
        ids, mask = out["input_ids"], out["attention_mask"]  # (B, T)
        same = all(ids[b][mask[b].bool()].tolist() == e.ids for b, e in enumerate(encs))
        if same:
            return ids, mask
    pid = pad_id(tokenizer)
    warnings.append(ResultWarning(code="padded_by_attnscope", value=pid))
    ids, mask, _ = pad_batch(encs, pid, side)
    return ids, mask


def _allowed(mask4d: torch.Tensor | None, batch: int, n: int) -> torch.Tensor:
    """A 4D mask as the attention received it -> (batch, T, T) bool, True = attend.

    None is sdpa's is_causal path (pure causal); a float mask is additive (0 = attend).
    Only head 0 is read when the mask has one per head.
    """
    if mask4d is None:
        return torch.ones(n, n, dtype=torch.bool).tril().expand(batch, n, n)
    return masking.allows(mask4d[:, 0, :, -n:])  # (B, T, T): the last T keys are this batch's tokens


def _mask_kind(mask4d: torch.Tensor | None) -> MaskKind:
    if mask4d is None:
        return MaskKind(kind="none")
    if mask4d.dtype == torch.bool:
        return MaskKind(kind="bool", shape=list(mask4d.shape))
    return MaskKind(kind="additive", dtype=str(mask4d.dtype).removeprefix("torch."), shape=list(mask4d.shape))


def eager_probe(model: torch.nn.Module, ids: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Run an eager forward up to layer 0; return (the mask its attention received, its weights).

    mask: the 4D float mask eager attention received (``attn_in.0``'s call), (B, 1, T, T).
    weights: what layer 0's attention returned (``attn_weights.0``), (B, H, T, T) fp32. The model is
    back on attnscope's capturing attention afterwards.
    """
    body = anatomy.of(model)
    if not body.layers or body.layers[0].attn is None:
        raise AttnscopeError("mask_no_self_attn")
    with hooks.Run(body, cpu=True) as run:
        run.read("attn_in.0", "attn_weights.0")
        run.forward(ids, mask, stop=True, eager=True)
    got, weights = run.calls["attn_in.0"].get("attention_mask"), run.values.get("attn_weights.0")
    if not isinstance(got, torch.Tensor) or not isinstance(weights, torch.Tensor):
        raise AttnscopeError("mask_no_eager")
    return got.detach().cpu(), weights.float()


def _grid(t: torch.Tensor) -> list[list[int]]:
    return [[int(v) for v in row] for row in t.int().tolist()]


def _label(enc: Encoded, i: int) -> str:
    return enc.tokens[i].label


# The two query positions captured per sequence, in this order (their index in ``Captured.rows``).
_LAST_REAL, _FIRST_PAD = 0, 1


def mask(
    loaded: Loaded,
    prompts: Sequence[str],
    *,
    padding_side: maskgrid.Side | None = None,
    chat: ChatSpec | None = None,
    max_size: int = maskgrid.DEFAULT_MAX_SIZE,
) -> MaskResult:
    """The prompts padded into one batch (``padding_side``, default the tokenizer's): each sequence's
    causal and padding grid, checked against the mask the model really applied. Grids longer than
    ``max_size`` are condensed. ``maskgrid.illustration`` draws the note's grids without a model."""
    if not prompts:
        raise AttnscopeError("mask_give_prompt")
    maskgrid.check_max_size(max_size)
    tokenizer, model = loaded.tokenizer, loaded.model
    side = one_of(padding_side or getattr(tokenizer, "padding_side", None) or "right", maskgrid.SIDES, "padding_side")
    encs = _encode(loaded, prompts, chat)
    warnings: list[ResultWarning] = []
    ids, am = padded_batch(tokenizer, encs, side, warnings)  # (B, T)
    batch, n = ids.shape
    layout = _Layout.of(encs, am)

    got, masks = _capture(loaded, ids, am, layout)
    model_allowed = {layer: _allowed(m, batch, n) for layer, m in sorted(masks.items())}  # layer -> (B, T, T)
    # The eager reference: a second forward, eager attention, stopped after layer 0.
    eager_raw, eager_rows = eager_probe(model, ids, am)  # (B, 1, T, T), (B, H, T, T)
    eager_allowed = _allowed(eager_raw, batch, n)

    info = loaded.info
    sliding = set(info.sliding_layers())
    sequences = [
        _sequence(
            encs[b],
            layout,
            b,
            {layer: a[b] for layer, a in model_allowed.items()},
            eager_allowed[b],
            (sliding, info.sliding_window or 0),
        )
        for b in range(batch)
    ]
    pad_rows = [_pad_row(layout, b, eager_rows[b], _captured_at(got.rows, b, _FIRST_PAD)) for b in layout.padded()]
    return MaskResult(
        mode="model",
        side=side,
        sequences=sequences,
        shown_positions=maskgrid.shown_positions(n, max_size),
        max_size=max_size,
        model=loaded.info,
        chat=chat is not None,
        mask_kinds=_mask_kinds(masks.values()),
        layers_checked=len(model_allowed),
        agrees_with_model=all(bool(s.agrees_with_model) for s in sequences),
        agrees_with_eager=all(bool(s.agrees_with_eager) for s in sequences),
        pad_rows=pad_rows,
        pad_columns=_pad_columns(layout, got.rows, sequences),
        warnings=warnings,
    )


def _encode(loaded: Loaded, prompts: Sequence[str], chat: ChatSpec | None) -> list[Encoded]:
    """Each prompt tokenized on its own (chat template applied with ``chat``), its length checked."""
    encs = [encode_prompt(loaded.tokenizer, p, chat) for p in prompts]
    for e in encs:
        check_length(len(e.ids), anatomy.of(loaded.model).max_positions)
    return encs


@dataclasses.dataclass(frozen=True)
class _Layout:
    """Where each sequence of the padded batch sits, and its grids (pure Python, from the 2D
    attention_mask alone)."""

    attention_mask: list[list[int]]  # [sequence][position], 1 = a real token
    grids: list[list[list[int]]]  # [sequence] the causal and padding grid (maskgrid.combined)
    pads: list[list[int]]  # [sequence] its padded positions
    offsets: list[int]  # [sequence] its first real position
    last_real: list[int]  # [sequence] its last real position
    first_pad: list[int]  # [sequence] its first padded position (its last real one when it has none)

    @classmethod
    def of(cls, encs: Sequence[Encoded], am: torch.Tensor) -> _Layout:
        rows: list[list[int]] = [[int(v) for v in row] for row in am.tolist()]
        pads = [maskgrid.padded_rows(row) for row in rows]
        offsets = [next(i for i, m in enumerate(row) if m) for row in rows]
        last_real = [off + len(e.ids) - 1 for off, e in zip(offsets, encs, strict=True)]
        return cls(
            attention_mask=rows,
            grids=[maskgrid.combined(row) for row in rows],
            pads=pads,
            offsets=offsets,
            last_real=last_real,
            first_pad=[p[0] if p else last for p, last in zip(pads, last_real, strict=True)],
        )

    def padded(self) -> list[int]:
        """The sequences that have pads."""
        return [b for b, p in enumerate(self.pads) if p]


def _capture(
    loaded: Loaded, ids: torch.Tensor, am: torch.Tensor, layout: _Layout
) -> tuple[engine.Captured, dict[int, torch.Tensor | None]]:
    """One capturing forward: rows at two positions per sequence (``_LAST_REAL`` and ``_FIRST_PAD``)
    and every layer's mask."""
    positions = torch.tensor([[q, r] for q, r in zip(layout.last_real, layout.first_pad, strict=True)])  # (B, 2)
    every = range(loaded.info.num_hidden_layers)
    names = [f"{point}.{layer}" for layer in every for point in ("rows", "mask")]
    run = hooks.capture(anatomy.of(loaded.model), ids, am, names, positions=positions, cpu=True, stop=True)
    got = run.captured
    assert got is not None
    engine.check_finite(got.rows)
    if set(run.masks) != set(every):
        raise AttnscopeError("mask_layers", layers=sorted(run.masks))
    return got, run.masks


def _mask_kinds(masks: Iterable[torch.Tensor | None]) -> list[MaskKind]:
    """The distinct kinds of mask the layers received, first seen first."""
    kinds: list[MaskKind] = []
    for m in masks:
        if _mask_kind(m) not in kinds:
            kinds.append(_mask_kind(m))
    return kinds


def _captured_at(rows: dict[int, torch.Tensor], b: int, slot: int) -> torch.Tensor:
    """Sequence ``b``'s captured rows at one of its two positions, every layer: (L, H, T)."""
    return torch.stack([rows[layer][b, :, slot, :] for layer in sorted(rows)])


def _sequence(
    enc: Encoded,
    layout: _Layout,
    b: int,
    model_allowed: dict[int, torch.Tensor],
    eager_allowed: torch.Tensor,
    windows: tuple[set[int], int],
) -> MaskSequence:
    """Sequence ``b``'s grids, checked against what each layer's attention received
    (``model_allowed``: layer -> (T, T), layers in order) and against the eager mask of layer 0
    (T, T). ``windows``: the sliding layers and their window; such a layer is checked against the
    grid with the window's band cut out (``maskgrid.windowed``)."""
    n = len(layout.attention_mask[b])
    grid_t = torch.tensor(layout.grids[b], dtype=torch.bool)  # (T, T)
    sliding, window = windows
    band_t = torch.tensor(maskgrid.windowed(layout.grids[b], window), dtype=torch.bool) if sliding else grid_t

    def expected(layer: int) -> torch.Tensor:
        return band_t if layer in sliding else grid_t

    agrees = {layer: bool(torch.equal(allowed, expected(layer))) for layer, allowed in model_allowed.items()}
    first_bad = next((layer for layer, ok in agrees.items() if not ok), 0)
    diff = (model_allowed[first_bad] != expected(first_bad)).nonzero().tolist()  # [[query_pos, key_pos], ...]
    labels = [PAD_LABEL] * n
    for i in range(len(enc.ids)):
        labels[layout.offsets[b] + i] = _label(enc, i)
    return MaskSequence(
        tokens=labels,
        attention_mask=layout.attention_mask[b],
        causal=maskgrid.causal(n),
        combined=layout.grids[b],
        padded_rows=layout.pads[b],
        text=enc.text,
        model_mask=_grid(model_allowed[first_bad]),
        eager_mask=_grid(eager_allowed),
        agrees_with_model=all(agrees.values()),
        agrees_with_eager=bool(torch.equal(eager_allowed, expected(0))),
        mismatches=[[int(q), int(k)] for q, k in diff[:MAX_MISMATCHES]],
    )


def _pad_row(layout: _Layout, b: int, eager_rows: torch.Tensor, captured: torch.Tensor) -> PadRowCheck:
    """Sequence ``b``'s first padded query row: eager (layer 0, ``eager_rows`` (H, T, T)) against
    the capture (every layer, ``captured`` (L, H, T))."""
    r = layout.first_pad[b]
    eager_row = eager_rows[:, r, :]  # (H, T)
    return PadRowCheck(
        sequence=b,
        query_pos=r,
        allowed_keys=sum(layout.grids[b][r]),
        n_keys=len(layout.attention_mask[b]),
        eager_min=float(eager_row.min()),
        eager_max=float(eager_row.max()),
        eager_sum_min=float(eager_row.sum(-1).min()),
        eager_sum_max=float(eager_row.sum(-1).max()),
        capture_max=float(captured.abs().max()),
        capture_sum_min=float(captured.sum(-1).min()),
        capture_sum_max=float(captured.sum(-1).max()),
        eager_vs_capture=float((eager_row - captured[0]).abs().max()),
    )


def _pad_columns(
    layout: _Layout, rows: dict[int, torch.Tensor], sequences: Sequence[MaskSequence]
) -> PadColumnCheck | None:
    """Pad columns at one real token: the last token of the most padded sequence (None when no
    sequence has pads)."""
    chosen = max(range(len(layout.pads)), key=lambda b: (len(layout.pads[b]), -b))
    cols = layout.pads[chosen]
    if not cols:
        return None
    q = layout.last_real[chosen]
    captured = _captured_at(rows, chosen, _LAST_REAL)  # (L, H, T)
    return PadColumnCheck(
        sequence=chosen,
        query_pos=q,
        label=sequences[chosen].tokens[q],
        pad_columns=cols,
        layers=captured.shape[0],
        heads=captured.shape[1],
        max_weight=float(captured[:, :, cols].abs().max()),
        row_sum_min=float(captured.sum(-1).min()),
        row_sum_max=float(captured.sum(-1).max()),
        causal_hides=min(cols) > q,
    )
