"""Human view of a MaskResult: the note's grids, and in real mode the model's own mask.

Grids are drawn in the note's notation: rows are the position being computed, columns
the position it may mix in, ``1`` = mixed in, ``.`` = weight 0, and a padded query row is
``-`` throughout (its result is dropped). Illustration mode lays the causal-only and
the combined grid side by side exactly as the note does (stacked when wide), with a legend
and closing lines in the catalogue's own words; real
mode draws one labelled grid per sequence with the tokenizer's attention_mask above
it, then the agreement checks. Long grids show only ``shown_positions``, with an
ellipsis where positions are skipped. Nothing here computes a mask.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.text import Text

from attnscope.render import Ctx
from attnscope.render.common import model_line, ranges, span
from attnscope.render.fit import Fitted
from attnscope.render.i18n import Lang, t
from attnscope.results.mask import PAD_LABEL, MaskKind, MaskResult, MaskSequence, PadColumnCheck, PadRowCheck

ELLIPSIS = "…"
OUTSIDE = "x"  # a key the causal and padding grid allows but a sliding window hides
SIDE_BY_SIDE_MAX = 10  # positions drawn; wider illustrations are stacked
GAP = 13  # the note's spaces between the two grids


def slots_of(shown: list[int]) -> list[int | None]:
    """Shown positions with None where the view skips some (drawn as an ellipsis)."""
    out: list[int | None] = []
    for k, p in enumerate(shown):
        if k and p != shown[k - 1] + 1:
            out.append(None)
        out.append(p)
    return out


def _pad_to(text: str, width: int) -> str:
    return text + " " * max(0, width - cell_len(text))


def _cell_width(n: int) -> int:
    return max(3, len(str(max(n - 1, 0))) + 1)


def _header(slots: list[int | None], label_width: int, cw: int) -> Text:
    line = Text(" " * label_width, no_wrap=True)
    for s in slots:
        line.append((ELLIPSIS if s is None else str(s)).rjust(cw), style="dim")
    return line


def _grid(
    grid: list[list[int]],
    slots: list[int | None],
    labels: list[str],
    label_width: int,
    cw: int,
    padded: set[int],
    remark: str,
    attention_mask: list[int] | None = None,
    window: int | None = None,
) -> list[Text]:
    """One Text per drawn row: label, then a cell per slot; the first padded row carries ``remark``.
    With ``window``, a cell the grid allows but the window does not (``window`` or more positions
    back) is drawn ``x``: a sliding layer's band."""
    rows: list[Text] = []
    first_pad = min(padded) if padded else None
    for s in slots:
        if s is None:
            line = Text(_pad_to(ELLIPSIS, label_width), no_wrap=True, style="dim")
            line.append("".join((ELLIPSIS if c is None else "").rjust(cw) for c in slots).rstrip(), style="dim")
            rows.append(line)
            continue
        line = Text(_pad_to(labels[s], label_width), no_wrap=True, style="dim" if s in padded else "")
        for c in slots:
            if c is None:
                line.append(ELLIPSIS.rjust(cw), style="dim")
            elif s in padded:
                line.append("-".rjust(cw), style="dim")
            elif grid[s][c] and window is not None and s - c >= window:
                line.append(OUTSIDE.rjust(cw), style="yellow")
            elif grid[s][c]:
                pad_col = attention_mask is not None and not attention_mask[c]
                line.append("1".rjust(cw), style="bold red" if pad_col else "bold")
            else:
                line.append(".".rjust(cw), style="dim")
        if s == first_pad and remark:
            line.append("   " + remark, style="dim italic")
        rows.append(line)
    return rows


class _Figure:
    """The two grids side by side as the note draws them, or stacked when that is too wide."""

    def __init__(self, r: MaskResult, lang: Lang) -> None:
        self.r, self.lang = r, lang

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        r, lang = self.r, self.lang
        seq = r.sequences[0]
        causal_title, title = t(lang, "mask.causal_title"), pad_title(lang, seq.padded_rows)
        slots = slots_of(r.shown_positions)
        cw = lw = _cell_width(len(seq.tokens))
        left = [_header(slots, lw, cw)] + _grid(seq.causal, slots, seq.tokens, lw, cw, set(), "")
        right = [_header(slots, lw, cw)] + _grid(
            seq.combined, slots, seq.tokens, lw, cw, set(seq.padded_rows), t(lang, "mask.pad_remark")
        )
        width = lw + cw * len(slots) + GAP
        lines = [Text(_pad_to(causal_title, width) + title, no_wrap=True)]
        for a, b in zip(left, right, strict=True):
            line = a.copy()
            line.append(" " * (width - cell_len(a.plain)))
            line.append_text(b)
            lines.append(line)
        if len(slots) <= SIDE_BY_SIDE_MAX and max(cell_len(x.plain) for x in lines) <= options.max_width:
            yield from lines
            return
        remark: list[Text] = []
        if max(cell_len(x.plain) for x in right) > options.max_width:  # the remark goes under the grid
            right = [_header(slots, lw, cw)] + _grid(seq.combined, slots, seq.tokens, lw, cw, set(seq.padded_rows), "")
            remark = [Text(t(lang, "mask.pad_remark"), style="dim italic")] if seq.padded_rows else []
        yield from [Text(causal_title), *left, Text(""), Text(title), *right, *remark]


def pad_title(lang: Lang, pads: list[int]) -> str:
    """The heading of the combined grid, as the note writes it: 위치 0이 빈칸일 때 (padding mask 추가)."""
    if not pads:
        return t(lang, "mask.pad_title_none")
    if len(pads) == 1:
        where = str(pads[0])
    elif len(pads) == 2:
        where = f"{pads[0]}, {pads[1]}"
    else:
        where = span(lang, pads[0], pads[-1])
    key = "mask.pad_title_one" if len(pads) == 1 else "mask.pad_title_many"
    return t(lang, key, where=where)


def closing_lines(lang: Lang, side: str, pads: int) -> list[str]:
    """The lines under the figure: what each mask depends on, and why left padding needs both."""
    keys = ["mask.line_causal", "mask.line_padding"]
    if pads == 0:
        keys.append("mask.line_none")
    elif side == "left":
        keys.append("mask.line_left")
    else:
        keys += ["mask.line_right", "mask.line_right_2"]
    return [t(lang, key) for key in keys]


def condensed(lang: Lang, n: int, max_size: int) -> list[str]:
    head = max_size // 2
    return [t(lang, "mask.condensed", n=n, head=head, tail=max_size - head)] if n > max_size else []


def _illustration(r: MaskResult, lang: Lang) -> list[RenderableType]:
    parts: list[RenderableType] = [Text(t(lang, "mask.legend")), Text(""), _Figure(r, lang), Text("")]
    seq = r.sequences[0]
    notes = closing_lines(lang, r.side, len(seq.padded_rows)) + condensed(lang, len(seq.tokens), r.max_size)
    return parts + [Text(note) for note in notes]


def _agreement(flag: bool | None, lang: Lang) -> Text:
    if flag is None:
        return Text(t(lang, "mask.not_checked"), style="dim")
    if flag:
        return Text(t(lang, "mask.agrees"), style="bold green")
    return Text(t(lang, "mask.disagrees"), style="bold red")


class _FitGrid:
    """A labelled grid that draws fewer positions when the console is too narrow for them."""

    def __init__(
        self,
        r: MaskResult,
        seq: MaskSequence,
        label_width: int,
        labels: list[str],
        lang: Lang,
        window: int | None = None,
    ) -> None:
        self.r, self.seq, self.lw, self.labels, self.lang = r, seq, label_width, labels, lang
        self.window = window  # draw the band of a sliding window of this many keys

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        n = len(self.seq.tokens)
        cw = _cell_width(n)
        shown = self.r.shown_positions
        fit = (options.max_width - self.lw) // cw - 1  # one cell for the ellipsis
        narrowed = len(shown) > max(fit, 4)
        if narrowed:
            k = max(fit, 4)
            shown = list(range(k // 2)) + list(range(n - (k - k // 2), n))
        slots = slots_of(shown)
        yield _header(slots, self.lw, cw)
        am = Text(_pad_to("attention_mask", self.lw), no_wrap=True, style="dim")
        for c in slots:
            am.append((ELLIPSIS if c is None else str(self.seq.attention_mask[c])).rjust(cw), style="magenta")
        yield am
        yield from _grid(
            self.seq.combined,
            slots,
            self.labels,
            self.lw,
            cw,
            set(self.seq.padded_rows),
            t(self.lang, "mask.pad_remark"),
            self.seq.attention_mask,
            self.window,
        )
        pads = self.seq.padded_rows
        if pads:
            yield Text(t(self.lang, "mask.padded_rows", rows=ranges(self.lang, pads)), style="dim")
        if narrowed:
            yield Text(t(self.lang, "mask.narrowed", shown=len(shown), n=n, width=options.max_width), style="dim")


def pad_word(lang: Lang, label: str) -> str:
    """A token label as the view prints it: a padding slot's label in the view's language."""
    return t(lang, "mask.pad_token") if label == PAD_LABEL else label


def _sequence(r: MaskResult, b: int, seq: MaskSequence, lang: Lang) -> list[RenderableType]:
    n = len(seq.tokens)
    iw = len(str(n - 1))
    labels = [f"{i:>{iw}} {pad_word(lang, tok)}" for i, tok in enumerate(seq.tokens)]
    lw = max(cell_len(x) for x in labels + ["attention_mask"]) + 1
    pads = seq.padded_rows
    real = n - len(pads)
    side = t(lang, f"mask.side.{r.side}")
    where = (
        t(lang, "mask.with_pads", real=real, pads=len(pads), side=side) if pads else t(lang, "mask.no_pads", real=real)
    )
    head = Text(t(lang, "mask.sequence", b=b), style="bold")
    head.append(f"  {seq.text!r}" if seq.text else "")
    head.append(f"  ({where})", style="dim")
    parts: list[RenderableType] = [head, _FitGrid(r, seq, lw, labels, lang)]
    model = r.model
    if model is not None and model.sliding_window and model.sliding_layers() and n > model.sliding_window:
        title = t(lang, "mask.window_title", layers=ranges(lang, model.sliding_layers()), window=model.sliding_window)
        parts += [Text(title, style="yellow"), _FitGrid(r, seq, lw, labels, lang, model.sliding_window)]
    check = Text(t(lang, "mask.model_check"), style="dim")
    check.append_text(_agreement(seq.agrees_with_model, lang))
    if seq.mismatches:
        cells = ", ".join(f"({q},{k})" for q, k in seq.mismatches[:8])
        more = t(lang, "mask.mismatch_more", n=len(seq.mismatches) - 8) if len(seq.mismatches) > 8 else ""
        check.append(t(lang, "mask.mismatch", cells=cells) + more, style="red")
    eager = Text(t(lang, "mask.eager_check"), style="dim")
    eager.append_text(_agreement(seq.agrees_with_eager, lang))
    return [*parts, check, eager, Text("")]


def _pad_row(p: PadRowCheck, lang: Lang) -> Text:
    line = Text(t(lang, "mask.pad_row", b=p.sequence, row=p.query_pos))
    if p.allowed_keys == 0:
        line.append(
            t(
                lang,
                "mask.pad_row_all_masked",
                n=p.n_keys,
                lo=f"{p.eager_min:.4f}",
                hi=f"{p.eager_max:.4f}",
                total=f"{p.eager_sum_max:.4f}",
                cmax=f"{p.capture_max:g}",
                csum=f"{p.capture_sum_max:g}",
            )
        )
    else:
        line.append(
            t(
                lang,
                "mask.pad_row_some_keys",
                k=p.allowed_keys,
                lo=f"{p.capture_sum_min:.4f}",
                hi=f"{p.capture_sum_max:.4f}",
                diff=f"{p.eager_vs_capture:.1e}",
            )
        )
    line.append(t(lang, "mask.pad_row_unused"), style="dim")
    return line


def _pad_columns(p: PadColumnCheck, lang: Lang) -> list[Text]:
    cols = ", ".join(str(c) for c in p.pad_columns[:12]) + (" ..." if len(p.pad_columns) > 12 else "")
    line = Text(
        t(
            lang,
            "mask.pad_columns",
            b=p.sequence,
            q=p.query_pos,
            label=p.label,
            cols=cols,
            layers=p.layers,
            heads=p.heads,
        )
    )
    exact = p.max_weight == 0.0
    shown = t(lang, "mask.exactly_zero") if exact else f"{p.max_weight:.3e}"
    line.append(shown, style="bold green" if exact else "bold red")
    line.append(t(lang, "mask.rows_sum", lo=f"{p.row_sum_min:.6f}", hi=f"{p.row_sum_max:.6f}"))
    out = [line]
    if p.causal_hides:
        out.append(Text(t(lang, "mask.causal_hides"), style="dim"))
    return out


def kind_text(lang: Lang, k: MaskKind) -> str:
    shape = "(" + ", ".join(str(d) for d in k.shape) + ")"
    if k.kind == "none":
        return t(lang, "mask.kind.none")
    if k.kind == "bool":
        return t(lang, "mask.kind.bool", shape=shape)
    return t(lang, "mask.kind.additive", dtype=k.dtype, shape=shape)


def _model(r: MaskResult, lang: Lang) -> list[RenderableType]:
    parts: list[RenderableType] = []
    n_seq = len(r.sequences)
    width = len(r.sequences[0].tokens) if r.sequences else 0
    side = t(lang, f"mask.side.{r.side}")
    parts.append(Text(t(lang, "mask.batch", n=n_seq, side=side, width=width), style="bold"))
    if r.model is not None:
        line = model_line(lang, r.model)
        if r.chat:
            line.append(t(lang, "mask.chat"))
        parts.append(line)
    parts += [Text(t(lang, "mask.legend_model"), style="dim"), Text("")]
    for b, seq in enumerate(r.sequences):
        parts += _sequence(r, b, seq, lang)
    summary = Text(t(lang, "mask.grid_vs_model"))
    summary.append_text(_agreement(r.agrees_with_model, lang))
    kinds = t(lang, "mask.kind_sep").join(kind_text(lang, k) for k in r.mask_kinds)
    summary.append(t(lang, "mask.checked", layers=r.layers_checked, kind=kinds), style="dim")
    parts.append(summary)
    eager = Text(t(lang, "mask.grid_vs_eager"))
    eager.append_text(_agreement(r.agrees_with_eager, lang))
    parts.append(eager)
    if r.pad_rows:
        parts += [Text(""), Text(t(lang, "mask.pad_rows_title"), style="bold")]
        parts += [_pad_row(p, lang) for p in r.pad_rows]
    if r.pad_columns is not None:
        parts += [Text(""), Text(t(lang, "mask.pad_columns_title"), style="bold")]
        parts += _pad_columns(r.pad_columns, lang)
    notes = [] if r.pad_columns is not None else [t(lang, "mask.note_no_pads")]
    notes += condensed(lang, width, r.max_size)
    if any(k.kind == "none" for k in r.mask_kinds):
        notes.append(t(lang, "mask.note_is_causal"))
    if notes:
        parts.append(Text(""))
        parts += [Text(note, style="dim") for note in notes]
    return parts


def view(r: MaskResult, ctx: Ctx) -> RenderableType:
    parts = _illustration(r, ctx.lang) if r.mode == "illustration" else _model(r, ctx.lang)
    return Fitted(Group(*parts))
