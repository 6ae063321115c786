"""Human view of a MatrixResult: a shaded query x key heatmap with the causal triangle.

Rows are query positions (or groups), columns are key positions in the same order;
column headers give the index (tens digit above units digit) and the row labels double
as the legend. ``·`` marks cells the causal mask removes (the key is after the query).
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from attnscope.render import Ctx, heat_style, shade
from attnscope.render.common import model_line, span
from attnscope.render.fit import FitColumns, Fitted
from attnscope.render.i18n import Lang, t
from attnscope.results.matrix import MatrixResult


def _pad(label: str, width: int) -> str:
    return label + " " * max(0, width - cell_len(label))


def header(r: MatrixResult, lang: Lang) -> Text:
    text = Text()
    text.append(t(lang, "common.layer_head", layer=r.layer, head=r.head), style="bold")
    text.append(f" ({t(lang, 'common.kv_head', kv_head=r.kv_head)})", style="dim")
    start, end = r.window
    n = len(r.tokens)
    if (start, end) != (0, n):
        shown = t(lang, "matrix.positions", positions=span(lang, start, end - 1), n=n)
    else:
        shown = t(lang, "matrix.tokens", n=n)
    text.append(f"  {shown}, {t(lang, 'matrix.by.' + r.view.by)}\n", style="dim")
    if r.measure == "norm":
        text.append(t(lang, "matrix.measure_norm") + "\n", style="dim")
    text.append_text(model_line(lang, r.model))
    return text


def _top(r: MatrixResult) -> list[tuple[int, float]]:
    """Each drawn row's top column and its value (-1 when the row has no unmasked cell)."""
    v = r.view
    out = []
    for row in range(len(v.groups)):
        last_query = v.groups[row][-1]
        best, best_c = -1.0, 0
        for c in range(len(v.groups)):
            if v.groups[c][0] <= last_query and v.cells[row][c] > best:
                best, best_c = v.cells[row][c], c
        out.append((best_c, best))
    return out


def grid(r: MatrixResult, lang: Lang, labels_shown: bool = True, top_shown: bool = True) -> Text:
    """The heat grid as one no-wrap Text: index, label, [before], a cell per key, top key."""
    v = r.view
    labels = list(v.labels) if labels_shown else ["" for _ in v.labels]
    idx_w = _index_width(r)
    lab_w = max((cell_len(x) for x in labels), default=1)
    left = idx_w + 1 + (lab_w + 1 if labels_shown else 0)
    nums = _nums(r)
    out = Text()
    _column_headers(out, r, lang, left, top_shown)
    for row, (best_c, best) in enumerate(_top(r)):
        out.append(f"{nums[row]:>{idx_w}} ", style="dim")
        if labels_shown:
            out.append(_pad(labels[row], lab_w) + " ")
        _row_cells(out, r, row)
        if top_shown and best >= 0:
            out.append(f"  {v.labels[best_c]} {best:.2f}", style="dim")
        out.append("\n")
    out.rstrip()
    out.no_wrap = True  # a wrapped grid is unreadable
    out.overflow = "crop"
    return out


def _index_width(r: MatrixResult) -> int:
    """Width of the row index column: the widest number drawn."""
    groups = r.view.groups
    return len(str(max(groups[-1][0], len(groups)))) if groups else 1


# Width of the column of weight put on the keys before the window ("<start" and a bar).
_BEFORE_WIDTH = 6


def _column_headers(out: Text, r: MatrixResult, lang: Lang, left: int, top_shown: bool) -> None:
    """The column numbers over the cells: tens digit on a first line (only when a number
    reaches 10), units digit on the second, which also heads the before and top-key columns."""
    nums = _nums(r)
    start = r.window[0]
    if any(x >= 10 for x in nums):
        out.append(" " * (left + (_BEFORE_WIDTH if start > 0 else 0)))
        for x in nums:
            out.append(f" {x // 10 % 10}" if x >= 10 else "  ", style="dim")
        out.append("\n")
    out.append(" " * left + (f"<{start}".rjust(5) + " " if start > 0 else ""), style="dim")
    for x in nums:
        out.append(f" {x % 10}", style="dim")
    if top_shown:
        out.append(f"   {t(lang, 'matrix.top.' + r.view.by)}", style="dim")
    out.append("\n")


def _row_cells(out: Text, r: MatrixResult, row: int) -> None:
    """One row's weight before the window (when it starts after 0) and a shaded cell per key,
    ``·`` where the causal mask removes the key (it comes after the row's last query)."""
    v = r.view
    if r.window[0] > 0:
        b = v.before[row]
        out.append(f"{b:4.2f} ", style=heat_style(b))
        out.append("│", style="dim")
    last_query = v.groups[row][-1]
    for c, group in enumerate(v.groups):
        if group[0] > last_query:
            out.append(" ·", style="grey35")
        else:
            out.append(shade(v.cells[row][c]) * 2, style=heat_style(v.cells[row][c]))


def _nums(r: MatrixResult) -> list[int]:
    """Rows and columns are numbered by token position (a block: its first), or by word."""
    v = r.view
    return list(range(len(v.groups))) if v.by == "word" else [g[0] for g in v.groups]


def top_table(r: MatrixResult, lang: Lang) -> Table:
    """Each row's top column as a table: what the grid's right edge shows, for a narrow terminal."""
    v = r.view
    table = Table(box=None, pad_edge=False, padding=(0, 1), header_style="dim")
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column(t(lang, "matrix.col_row"), no_wrap=True)
    table.add_column(t(lang, "matrix.top." + v.by), no_wrap=True)
    table.add_column(t(lang, "matrix.col_weight"), justify="right", no_wrap=True)
    nums = _nums(r)
    for row, (best_c, best) in enumerate(_top(r)):
        if best >= 0:
            table.add_row(str(nums[row]), v.labels[row], v.labels[best_c], f"{best:.2f}")
    return table


class FittedGrid:
    """The grid as drawn on a wide terminal; on a narrow one, the heat cells without the row
    labels, cut at the right edge with a line saying which columns are drawn, and each row's
    top key (label and weight, which are facts) in a table under it."""

    def __init__(self, r: MatrixResult, lang: Lang) -> None:
        self.r, self.lang = r, lang

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        r, lang, width = self.r, self.lang, options.max_width
        full = grid(r, lang)
        if max(cell_len(line) for line in full.plain.split("\n")) <= width:
            yield full
            return
        bare = grid(r, lang, labels_shown=False, top_shown=False)
        drawn = max(cell_len(line) for line in bare.plain.split("\n"))
        yield bare
        nums = _nums(r)
        if drawn > width:
            fixed = _index_width(r) + 1 + (_BEFORE_WIDTH if r.window[0] > 0 else 0)
            shown = max(0, min(len(nums), (width - fixed) // 2))
            if shown:
                columns = span(lang, nums[0], nums[shown - 1])
                yield Text(t(lang, "matrix.cropped", columns=columns, n=len(nums)), style="dim")
        yield Text("")
        yield FitColumns(top_table(r, lang))

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        widest = max(cell_len(line) for line in grid(self.r, self.lang).plain.split("\n"))
        return Measurement(min(40, widest), widest)


def legend(r: MatrixResult, lang: Lang) -> Text:
    text = Text(t(lang, "matrix.scale"), style="dim")
    for ch, lo in (("░", "<0.38"), ("▒", "<0.63"), ("▓", "<0.88"), ("█", "≥0.88")):
        text.append(ch * 2, style=heat_style({"░": 0.25, "▒": 0.5, "▓": 0.75, "█": 1.0}[ch]))
        text.append(f" {lo}  ", style="dim")
    text.append(t(lang, "matrix.blank"), style="dim")
    if r.view.by in ("block", "word"):
        text.append("\n" + t(lang, "matrix.legend_" + r.view.by), style="dim")
    return text


def notes(r: MatrixResult, lang: Lang) -> list[str]:
    """How the drawn grid was made from the weights, from the result's facts."""
    out = []
    if r.by == "word":
        out.append(t(lang, "matrix.note_by_word"))
        if r.view.by == "block":
            out.append(t(lang, "matrix.note_too_many_words", n=len(r.words)))
    if r.view.by == "block":
        start, end = r.window
        out.append(t(lang, "matrix.note_condensed", n=end - start, size=len(r.view.groups[0])))
    start, end = r.window
    if start > 0:
        out.append(t(lang, "matrix.note_window", start=start, end=end, before=span(lang, 0, start - 1)))
    return out


def view(r: MatrixResult, ctx: Ctx) -> RenderableType:
    lang = ctx.lang
    parts: list[RenderableType] = [header(r, lang), Text(""), FittedGrid(r, lang), Text(""), legend(r, lang)]
    for note in notes(r, lang):
        parts.append(Text(note, style="dim"))
    return Fitted(Group(*parts))
