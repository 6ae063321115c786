"""SVG figure of a MaskResult: the note's mask grids as cells, ``1`` where a position refers to a key.

Illustration mode draws the causal-only grid and the combined grid side by side, as
the note does; real mode draws one grid per sequence of the batch, the tokenizer's
attention_mask above it, token labels at the left and whether the model's own mask
agreed. A padded query row is drawn with ``-``; skipped positions as ``…``. Nothing
here computes a mask.
"""

from __future__ import annotations

from collections.abc import Callable

from attnscope.render import Ctx
from attnscope.render.figures.common import MARGIN, ROW, header, model_line
from attnscope.render.figures.svg import DIM, INK, PAPER, Svg, text_width
from attnscope.render.i18n import Lang, t
from attnscope.render.mask import pad_word, slots_of
from attnscope.results.mask import MaskResult, MaskSequence

CELL = 22.0
ON = "#08519c"
OFF = "#f6f8fa"
PAD = "#fde8e8"
SIZE = 11.0


def _grid(
    svg: Svg,
    x: float,
    y: float,
    grid: list[list[int]],
    slots: list[int | None],
    labels: list[str],
    padded: set[int],
    attention_mask: list[int] | None,
    remark: str,
) -> float:
    """One grid with its header row (and attention_mask row); returns the y below it."""
    names = labels + (["attention_mask"] if attention_mask is not None else [])
    label_w = max((text_width(lab, SIZE) for lab in names), default=0) + 8
    gx = x + label_w
    y += ROW
    _text_row(svg, gx, y, slots, str, DIM)
    y += 4
    if attention_mask is not None:
        svg.text(gx - 6, y + CELL - 7, "attention_mask", anchor="end", size=SIZE, fill=DIM)
        _text_row(svg, gx, y + CELL - 7, slots, lambda s: str(attention_mask[s]), "#8250df")
        y += CELL
    first_pad = min(padded) if padded else None
    for row in slots:
        if row is None:
            svg.text(gx - 6, y + CELL - 7, "…", anchor="end", size=SIZE, fill=DIM)
            y += CELL
            continue
        svg.text(gx - 6, y + CELL - 7, labels[row], anchor="end", size=SIZE, fill=DIM if row in padded else INK)
        _row_cells(svg, gx, y, slots, None if row in padded else grid[row])
        if row == first_pad and remark:
            svg.text(gx + len(slots) * CELL + 10, y + CELL - 7, remark, size=SIZE, fill=DIM)
        y += CELL
    return y


def _text_row(svg: Svg, gx: float, y: float, slots: list[int | None], text_of: Callable[[int], str], fill: str) -> None:
    """``text_of(position)`` centred over each column from ``gx`` on the baseline ``y``; ``…`` over a skip."""
    for i, s in enumerate(slots):
        svg.text(gx + i * CELL + CELL / 2, y, "…" if s is None else text_of(s), anchor="middle", size=SIZE, fill=fill)


# How a cell is drawn: its fill, the mark written in it, the mark's colour, and whether it is bold.
_PADDED = (PAD, "-", DIM, False)  # a padded query row: its result is not used
_ATTENDS = (ON, "1", PAPER, True)
_MASKED = (OFF, ".", DIM, False)


def _row_cells(svg: Svg, gx: float, y: float, slots: list[int | None], grid_row: list[int] | None) -> None:
    """One query row's cells from ``gx`` at height ``y`` (``grid_row`` None: a padded row);
    a skipped column is ``…``."""
    for i, c in enumerate(slots):
        cx = gx + i * CELL
        if c is None:
            svg.text(cx + CELL / 2, y + CELL - 7, "…", anchor="middle", size=SIZE, fill=DIM)
            continue
        fill, mark, ink, bold = _PADDED if grid_row is None else _ATTENDS if grid_row[c] else _MASKED
        svg.rect(cx, y, CELL, CELL, fill, stroke=PAPER)
        svg.text(cx + CELL / 2, y + CELL - 7, mark, anchor="middle", size=SIZE, fill=ink, bold=bold)


def _labels(seq: MaskSequence, with_tokens: bool, lang: Lang) -> list[str]:
    n = len(seq.tokens)
    if not with_tokens:
        return [str(i) for i in range(n)]
    return [f"{i} {pad_word(lang, tok)}" for i, tok in enumerate(seq.tokens)]


def figure(r: MaskResult, ctx: Ctx) -> str:
    svg = Svg(title="attnscope mask")
    lines = [t(ctx.lang, "figures.mask.legend")]
    if r.model is not None:
        lines.append(model_line(ctx, r.model))
    y = header(svg, ctx, t(ctx.lang, "figures.mask.title"), lines)
    slots = slots_of(r.shown_positions)
    remark = t(ctx.lang, "figures.mask.pad_row")
    if r.mode == "illustration":
        seq = r.sequences[0]
        labels = _labels(seq, False, ctx.lang)
        y += ROW
        svg.text(MARGIN, y, t(ctx.lang, "figures.mask.causal"), bold=True)
        width = max(text_width(lab, SIZE) for lab in labels) + 8 + CELL * len(slots) + 60
        width = max(width, text_width(t(ctx.lang, "figures.mask.causal")) + 30)
        svg.text(MARGIN + width, y, t(ctx.lang, "figures.mask.combined"), bold=True)
        _grid(svg, MARGIN, y, seq.causal, slots, labels, set(), None, "")
        _grid(svg, MARGIN + width, y, seq.combined, slots, labels, set(seq.padded_rows), None, remark)
        return svg.to_string()
    for b, seq in enumerate(r.sequences):
        y += ROW * 1.2
        svg.text(MARGIN, y, t(ctx.lang, "figures.mask.sequence", b=b), bold=True)
        if seq.text:
            svg.text(MARGIN + text_width(t(ctx.lang, "figures.mask.sequence", b=b)) + 14, y, seq.text, fill=DIM)
        n = len(seq.tokens)
        seq_slots = slots if all(p < n for p in r.shown_positions) else slots_of(list(range(n)))
        y = _grid(
            svg,
            MARGIN,
            y,
            seq.combined,
            seq_slots,
            _labels(seq, True, ctx.lang),
            set(seq.padded_rows),
            seq.attention_mask,
            remark,
        )
        if seq.agrees_with_model is not None:
            y += ROW
            key = "figures.mask.agrees" if seq.agrees_with_model else "figures.mask.disagrees"
            svg.text(MARGIN, y, t(ctx.lang, key), fill=DIM if seq.agrees_with_model else "#cf222e", size=12)
    return svg.to_string()
