"""Human view of a HeadsResult: the top heads with their score and row, and a layers x heads heatmap."""

from __future__ import annotations

from dataclasses import replace

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from attnscope.render import Ctx, bar, heat_style, shade
from attnscope.render.common import model_line, no_sink_note, span, token_span
from attnscope.render.fit import FitColumns, Fitted, glue
from attnscope.render.i18n import Lang, t
from attnscope.results.derive import heads_grid
from attnscope.results.heads import HeadsResult, TopHead


def header(r: HeadsResult, lang: Lang) -> Text:
    labels = [t(lang, "common.query"), t(lang, "common.key")]
    width = max(cell_len(x) for x in labels) + 1
    text = Text()
    glued = [replace(tok, label=glue(tok.label)) for tok in r.tokens]  # a wrapped line keeps each label whole
    for label, what, indices in zip(labels, (r.query.text, r.key.text), (r.query.span, r.key.span), strict=True):
        text.append(label + " " * (width - cell_len(label)), style="dim")
        text.append(what, style="bold")
        text.append(f"  ({token_span(lang, glued, indices)})\n", style="dim")
    text.append_text(model_line(lang, r.model))
    return text


ROW_CELLS = 40  # longer rows are binned (max per bin) so the table keeps its shape


def _row_strip(r: HeadsResult, t: TopHead) -> Text:
    """One cell per key position 0..query (or per bin of positions, max per bin), shaded on
    the row's own scale; the key in brackets."""
    n = len(t.row)
    size = max(1, -(-n // ROW_CELLS))  # ceil(n / ROW_CELLS)
    bins = [list(range(s, min(s + size, n))) for s in range(0, n, size)]
    values = [max(t.row[i] for i in b) for b in bins]
    top = max(values, default=0.0) or 1.0
    first, last = r.key.span[0] // size, r.key.span[-1] // size
    out = Text()
    for b, value in enumerate(values):
        if b == first:
            out.append("[", style="bold")
        out.append(shade(value, top) if value > 0.005 * top else "·", style=heat_style(value, top))
        if b == last:
            out.append("]", style="bold")
    return out


def _elsewhere(r: HeadsResult, t: TopHead) -> str:
    keys = set(r.key.span)
    rest = [(v, pos) for pos, v in enumerate(t.row) if pos not in keys]
    if not rest:
        return ""
    value, pos = max(rest)
    return f"{r.tokens[pos].label} {value:.2f}"


def top_table(r: HeadsResult, lang: Lang) -> Table:
    table = Table(box=None, pad_edge=False, padding=(0, 1), header_style="dim", title_justify="left")
    table.title = t(lang, "heads.top_title", n=len(r.top), total=len(r.ranking))
    columns = ("#", t(lang, "heads.col.layer"), t(lang, "heads.col.head"), t(lang, "heads.col.kv"))
    for name in columns:
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column(t(lang, "heads.col.score"), justify="right", no_wrap=True)
    table.add_column("", no_wrap=True)
    last = r.query.span[-1]
    size = max(1, -(-(last + 1) // ROW_CELLS))
    positions = span(lang, 0, last)
    row_title = t(lang, "heads.col.row_binned", positions=positions, size=size) if size > 1 else None
    table.add_column(row_title or t(lang, "heads.col.row", positions=positions), no_wrap=True)
    table.add_column(t(lang, "heads.col.elsewhere"), no_wrap=True)
    for rank, top in enumerate(r.top, start=1):
        table.add_row(
            str(rank),
            str(top.layer),
            str(top.head),
            str(top.kv_head),
            f"{top.score:.2f}",
            Text(bar(top.score, 16).ljust(16), style="cyan"),
            _row_strip(r, top),
            _elsewhere(r, top),
        )
    return table


def heatmap(r: HeadsResult, lang: Lang) -> Table:
    n_heads = r.model.num_attention_heads
    laid = heads_grid(r.ranking, r.model.num_hidden_layers, n_heads)
    kv_of = laid.kv_of
    scale = 1.0 if laid.top <= 0 else laid.top
    table = Table(box=None, pad_edge=False, padding=(0, 0), header_style="dim", show_header=True)
    table.add_column(t(lang, "heads.col.layer_head"), justify="right", no_wrap=True)
    table.add_column(" ", no_wrap=True)
    for h in range(n_heads):
        sep = h > 0 and kv_of[h] != kv_of[h - 1]
        table.add_column(("│" if sep else " ") + f"{h:>2}", no_wrap=True)
    table.add_column("  " + t(lang, "heads.col.best"), no_wrap=True)
    for layer, row in enumerate(laid.scores):
        cells = []
        for h, v in enumerate(row):
            sep = h > 0 and kv_of[h] != kv_of[h - 1]
            cell = Text("│" if sep else " ", style="dim")
            cell.append(shade(v, scale) * 2, style=heat_style(v, scale))
            cells.append(cell)
        best = laid.best[layer]
        table.add_row(str(layer), " ", *cells, Text(f"  H{best} {row[best]:.2f}", style="dim"))
    return table


def heatmap_caption(r: HeadsResult, lang: Lang) -> Text:
    top = max((s.score for s in r.ranking), default=0.0)
    caption = t(
        lang, "heads.heatmap_caption", top=f"{top if top > 0 else 1.0:.2f}", kv_heads=r.model.num_key_value_heads
    )
    return Text(caption, style="dim")


def notes(r: HeadsResult, lang: Lang) -> list[str]:
    """How the score was made, from the result's facts."""
    out = [t(lang, "heads.note_score", n=len(r.key.span))]
    if len(r.query.span) > 1:
        out.append(t(lang, f"heads.note_{r.query_agg}", n=len(r.query.span)))
    if r.no_sink:
        out.append(no_sink_note(r.tokens, r.query.index, lang))
    if r.measure == "norm":
        out.append(t(lang, "weights.note_norm"))
        if r.completeness_max_diff is not None:
            diff = f"{r.completeness_max_diff:.1e}"
            out.append(t(lang, "weights.completeness", diff=diff, layers=r.model.num_hidden_layers))
    return out


def view(r: HeadsResult, ctx: Ctx) -> RenderableType:
    lang = ctx.lang
    above = heads_grid(r.ranking, r.model.num_hidden_layers, r.model.num_attention_heads).strong
    summary = Text(t(lang, "heads.summary", above=above, total=len(r.ranking)), style="bold")
    # Narrow: the bar goes first, then the row strip (and the strip's legend with it).
    row_legend = Group(Text(""), Text(t(lang, "heads.row_legend"), style="dim"))
    top = FitColumns(top_table(r, lang), [[5], [6]], legend=row_legend, legend_for=1)
    parts: list[RenderableType] = [header(r, lang), Text(""), summary, Text(""), top, Text("")]
    heads = range(1, r.model.num_attention_heads + 2)  # the spacer and the heat cells go together
    grid = FitColumns(heatmap(r, lang), [heads], legend=heatmap_caption(r, lang))  # no cells, no caption
    parts += [grid]
    for note in notes(r, lang):
        parts.append(Text(note, style="dim"))
    return Fitted(Group(*parts))
