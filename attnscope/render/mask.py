"""Human view of a MaskResult: the note's grids, and in real mode the model's own mask.

Grids are drawn in the note's notation: rows are the position being computed, columns
the position referred to, ``1`` = refers, ``.`` = weight 0, and a padded query row is
``-`` throughout (its result is not used). Illustration mode lays the causal-only and
the combined grid side by side exactly as the note does (stacked when wide); real
mode draws one labelled grid per sequence with the tokenizer's attention_mask above
it, then the agreement checks. Long grids show only ``shown_positions``, with an
ellipsis where positions are skipped. Nothing here computes a mask.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.text import Text

from attnscope.render import Ctx, view
from attnscope.results.mask import MaskResult, MaskSequence, PadColumnCheck, PadRowCheck

ELLIPSIS = "…"
SIDE_BY_SIDE_MAX = 10  # positions drawn; wider illustrations are stacked
GAP = 13  # the note's spaces between the two grids


def _slots(shown: list[int]) -> list[int | None]:
    """Shown positions with None where the view skips some (drawn as an ellipsis)."""
    out: list[int | None] = []
    for k, p in enumerate(shown):
        if k and p != shown[k - 1] + 1:
            out.append(None)
        out.append(p)
    return out


def _pad_to(text: str, width: int) -> str:
    return text + " " * max(0, width - cell_len(text))


def _ranges(values: list[int]) -> str:
    """[0, 1, 2, 5] -> '0-2, 5'."""
    parts: list[str] = []
    for v in values:
        if parts and v == int(parts[-1].split("-")[-1]) + 1:
            parts[-1] = f"{parts[-1].split('-')[0]}-{v}"
        else:
            parts.append(str(v))
    return ", ".join(parts)


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
) -> list[Text]:
    """One Text per drawn row: label, then a cell per slot; the first padded row carries ``remark``."""
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

    def __init__(self, r: MaskResult) -> None:
        self.r = r

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        r = self.r
        seq = r.sequences[0]
        slots = _slots(r.shown_positions)
        cw = lw = _cell_width(len(seq.tokens))
        left = [_header(slots, lw, cw)] + _grid(seq.causal, slots, seq.tokens, lw, cw, set(), "")
        right = [_header(slots, lw, cw)] + _grid(
            seq.combined, slots, seq.tokens, lw, cw, set(seq.padded_rows), r.pad_remark
        )
        width = lw + cw * len(slots) + GAP
        lines = [Text(_pad_to(r.causal_title, width) + seq.title, no_wrap=True)]
        for a, b in zip(left, right, strict=True):
            line = a.copy()
            line.append(" " * (width - cell_len(a.plain)))
            line.append_text(b)
            lines.append(line)
        if len(slots) <= SIDE_BY_SIDE_MAX and max(cell_len(x.plain) for x in lines) <= options.max_width:
            yield from lines
            return
        yield from [Text(r.causal_title, no_wrap=True), *left, Text(""), Text(seq.title, no_wrap=True), *right]


def _illustration(r: MaskResult) -> list[RenderableType]:
    parts: list[RenderableType] = [Text(r.legend, no_wrap=True), Text(""), _Figure(r), Text("")]
    return parts + [Text(note) for note in r.notes]


def _agreement(flag: bool | None) -> Text:
    if flag is None:
        return Text("not checked", style="dim")
    return Text("agrees", style="bold green") if flag else Text("DISAGREES", style="bold red")


class _FitGrid:
    """A labelled grid that draws fewer positions when the console is too narrow for them."""

    def __init__(self, r: MaskResult, seq: MaskSequence, label_width: int, labels: list[str]) -> None:
        self.r, self.seq, self.lw, self.labels = r, seq, label_width, labels

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        n = len(self.seq.tokens)
        cw = _cell_width(n)
        shown = self.r.shown_positions
        fit = (options.max_width - self.lw) // cw - 1  # one cell for the ellipsis
        narrowed = len(shown) > max(fit, 4)
        if narrowed:
            k = max(fit, 4)
            shown = list(range(k // 2)) + list(range(n - (k - k // 2), n))
        slots = _slots(shown)
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
            self.r.pad_remark,
            self.seq.attention_mask,
        )
        pads = self.seq.padded_rows
        if pads:
            yield Text(f"padded rows {_ranges(pads)}: drawn as -, their result is not used", style="dim")
        if narrowed:
            yield Text(f"(narrowed to {len(shown)} of {n} positions to fit {options.max_width} columns)", style="dim")


def _sequence(r: MaskResult, b: int, seq: MaskSequence) -> list[RenderableType]:
    n = len(seq.tokens)
    iw = len(str(n - 1))
    labels = [f"{i:>{iw}} {t}" for i, t in enumerate(seq.tokens)]
    lw = max(cell_len(x) for x in labels + ["attention_mask"]) + 1
    pads = seq.padded_rows
    real = n - len(pads)
    where = f"{real} tokens + {len(pads)} pads on the {r.side}" if pads else f"{real} tokens, no padding"
    head = Text(f"sequence {b}", style="bold")
    head.append(f"  {seq.text!r}" if seq.text else "")
    head.append(f"  ({where})", style="dim")
    parts: list[RenderableType] = [head, _FitGrid(r, seq, lw, labels)]
    check = Text("  model's mask, read inside the forward: ", style="dim")
    check.append_text(_agreement(seq.agrees_with_model))
    if seq.mismatches:
        cells = ", ".join(f"({q},{k})" for q, k in seq.mismatches[:8])
        more = f" and {len(seq.mismatches) - 8} more" if len(seq.mismatches) > 8 else ""
        check.append(f" at [query_pos, key_pos] {cells}{more}", style="red")
    eager = Text("  eager mask, read inside an eager forward: ", style="dim")
    eager.append_text(_agreement(seq.agrees_with_eager))
    return [*parts, check, eager, Text("")]


def _pad_row(p: PadRowCheck) -> Text:
    line = Text(f"  sequence {p.sequence}, row {p.query_pos}: ", style="")
    if p.allowed_keys == 0:
        line.append(
            f"every key is masked. eager spreads it over all {p.n_keys} keys "
            f"(each {p.eager_min:.4f}..{p.eager_max:.4f}, sum {p.eager_sum_max:.4f}); "
            f"sdpa and attnscope's capture give 0 (max {p.capture_max:g}, sum {p.capture_sum_max:g})."
        )
    else:
        line.append(
            f"the mask leaves it {p.allowed_keys} real key(s); eager and sdpa both softmax over them "
            f"(sums {p.capture_sum_min:.4f}..{p.capture_sum_max:.4f}, eager vs sdpa max diff {p.eager_vs_capture:.1e})."
        )
    line.append(" Its result is not used.", style="dim")
    return line


def _pad_columns(p: PadColumnCheck) -> list[Text]:
    cols = ", ".join(str(c) for c in p.pad_columns[:12]) + (" ..." if len(p.pad_columns) > 12 else "")
    line = Text(f"  sequence {p.sequence}, position {p.query_pos} '{p.label}': weights on pad columns [{cols}] ")
    line.append(f"over {p.layers} layers x {p.heads} heads: max ")
    exact = p.max_weight == 0.0
    line.append("0 (exactly)" if exact else f"{p.max_weight:.3e}", style="bold green" if exact else "bold red")
    line.append(f"; rows sum to {p.row_sum_min:.6f}..{p.row_sum_max:.6f}")
    out = [line]
    if p.causal_hides:
        out.append(
            Text("  (the pads come after this position, so the causal mask alone already hides them)", style="dim")
        )
    return out


def _model(r: MaskResult) -> list[RenderableType]:
    parts: list[RenderableType] = []
    n_seq = len(r.sequences)
    width = len(r.sequences[0].tokens) if r.sequences else 0
    intro = Text(f"{n_seq} sequence(s) in one batch, padded on the {r.side} to {width} positions", style="bold")
    parts.append(intro)
    if r.model is not None:
        m = r.model
        parts.append(
            Text(
                f"model {m.id}  {m.num_hidden_layers} layers, {m.num_attention_heads} heads / "
                f"{m.num_key_value_heads} KV heads, {m.dtype} on {m.device}" + ("  (chat template)" if r.chat else ""),
                style="dim",
            )
        )
    parts += [Text(r.legend, style="dim"), Text("")]
    for b, seq in enumerate(r.sequences):
        parts += _sequence(r, b, seq)
    summary = Text("grid vs the model's own mask: ")
    summary.append_text(_agreement(r.agrees_with_model))
    summary.append(f"  ({r.layers_checked} layer(s) checked; the attention received {r.model_mask_kind})", style="dim")
    parts.append(summary)
    eager = Text("grid vs transformers' eager mask: ")
    eager.append_text(_agreement(r.agrees_with_eager))
    parts.append(eager)
    if r.pad_rows:
        parts += [Text(""), Text("padded query rows", style="bold")]
        parts += [_pad_row(p) for p in r.pad_rows]
    if r.pad_columns is not None:
        parts += [Text(""), Text("pad columns at a real token (captured rows)", style="bold")]
        parts += _pad_columns(r.pad_columns)
    if r.notes:
        parts.append(Text(""))
        parts += [Text(note, style="dim") for note in r.notes]
    return parts


@view.register
def render(r: MaskResult, ctx: Ctx) -> RenderableType:
    parts = _illustration(r) if r.mode == "illustration" else _model(r)
    return Group(*parts)
