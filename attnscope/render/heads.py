"""Human view of a HeadsResult: the top heads with their score and row, and a layers x heads heatmap."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from attnscope.render import Ctx, bar, heat_style, shade, view
from attnscope.results.heads import HeadsResult, TopHead


def _span(r: HeadsResult, span: list[int]) -> str:
    where = f"token {span[0]}" if len(span) == 1 else f"tokens {span[0]}-{span[-1]}"
    return f"{where}: " + " + ".join(r.tokens[i].label for i in span)


def header(r: HeadsResult) -> Text:
    text = Text()
    text.append("query ", style="dim")
    text.append(r.query_text, style="bold")
    text.append(f"  ({_span(r, r.query)})", style="dim")
    text.append("\nkey   ", style="dim")
    text.append(r.key_text, style="bold")
    text.append(f"  ({_span(r, r.key)})", style="dim")
    m = r.model
    text.append(
        f"\nmodel {m.id}  {m.num_hidden_layers} layers x {m.num_attention_heads} heads "
        f"({m.num_key_value_heads} KV heads), {m.dtype} on {m.device}",
        style="dim",
    )
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
    first, last = r.key[0] // size, r.key[-1] // size
    out = Text()
    for b, value in enumerate(values):
        if b == first:
            out.append("[", style="bold")
        out.append(shade(value, top) if value > 0.005 * top else "·", style=heat_style(value, top))
        if b == last:
            out.append("]", style="bold")
    return out


def _elsewhere(r: HeadsResult, t: TopHead) -> str:
    keys = set(r.key)
    rest = [(v, pos) for pos, v in enumerate(t.row) if pos not in keys]
    if not rest:
        return ""
    value, pos = max(rest)
    return f"{r.tokens[pos].label} {value:.2f}"


def top_table(r: HeadsResult) -> Table:
    table = Table(box=None, pad_edge=False, padding=(0, 1), header_style="dim", title_justify="left")
    table.title = f"top {len(r.top)} of {len(r.ranking)} heads by weight on the key"
    for name, justify in (("#", "right"), ("layer", "right"), ("head", "right"), ("kv", "right")):
        table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    table.add_column("score", justify="right", no_wrap=True)
    table.add_column("", no_wrap=True)
    size = max(1, -(-(r.query[-1] + 1) // ROW_CELLS))
    table.add_column(f"row 0..{r.query[-1]}" + (f" ({size}/cell, max)" if size > 1 else ""), no_wrap=True)
    table.add_column("elsewhere", no_wrap=True)
    for rank, t in enumerate(r.top, start=1):
        table.add_row(
            str(rank),
            str(t.layer),
            str(t.head),
            str(t.kv_head),
            f"{t.score:.2f}",
            Text(bar(t.score, 16).ljust(16), style="cyan"),
            _row_strip(r, t),
            _elsewhere(r, t),
        )
    return table


def heatmap(r: HeadsResult) -> Table:
    n_layers = r.model.num_hidden_layers
    n_heads = r.model.num_attention_heads
    grid = [[0.0] * n_heads for _ in range(n_layers)]
    kv_of = [0] * n_heads
    for s in r.ranking:
        if 0 <= s.layer < n_layers and 0 <= s.head < n_heads:
            grid[s.layer][s.head] = s.score
            kv_of[s.head] = s.kv_head
    top = max((max(row) for row in grid), default=0.0)
    scale = 1.0 if top <= 0 else top
    table = Table(box=None, pad_edge=False, padding=(0, 0), header_style="dim", show_header=True)
    table.add_column("layer", justify="right", no_wrap=True)
    table.add_column(" ", no_wrap=True)
    for h in range(n_heads):
        sep = h > 0 and kv_of[h] != kv_of[h - 1]
        table.add_column(("│" if sep else " ") + f"{h:>2}", no_wrap=True)
    table.add_column("  best", no_wrap=True)
    for layer, row in enumerate(grid):
        cells = []
        for h, v in enumerate(row):
            sep = h > 0 and kv_of[h] != kv_of[h - 1]
            cell = Text("│" if sep else " ", style="dim")
            cell.append(shade(v, scale) * 2, style=heat_style(v, scale))
            cells.append(cell)
        best = row.index(max(row)) if row else 0
        table.add_row(str(layer), " ", *cells, Text(f"  h{best} {row[best]:.2f}", style="dim"))
    return table


def heatmap_caption(r: HeadsResult) -> Text:
    top = max((s.score for s in r.ranking), default=0.0)
    return Text(
        f"score per layer and head (darker = more), scale 0..{top if top > 0 else 1.0:.2f}; "
        f"│ separates KV groups ({r.model.num_key_value_heads} KV heads)",
        style="dim",
    )


@view.register
def render(r: HeadsResult, ctx: Ctx) -> RenderableType:
    above = sum(1 for s in r.ranking if s.score > 0.5)
    summary = Text(f"{above} of {len(r.ranking)} heads put more than 0.5 on the key", style="bold")
    parts: list[RenderableType] = [header(r), Text(""), summary, Text(""), top_table(r), Text("")]
    parts.append(
        Text(
            "row: positions 0..query, darker = more (on the row's own scale), [key]; · = under 0.5% of the row's max",
            style="dim",
        )
    )
    parts += [Text(""), heatmap(r), heatmap_caption(r)]
    for note in r.notes:
        parts.append(Text(note, style="dim"))
    return Group(*parts)
