"""The faces of ``attnscope tui``: the token strip, the heads table's cells, the detail pane, the key map.

Every word comes from the catalogue's ``tui.*`` section; the charts are ``weights``' own
(``render.weights.chart_table``, the whole ``weights`` view for the mean) and the heat grid is
``matrix``'s view. Shading is drawn with characters (``render.shade``), so it reads without
colour; Rich measures wide characters, so Korean labels take their two cells. No Textual here:
the app (``attnscope.tui``) places these renderables in its widgets.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from attnscope.render import Ctx, shade
from attnscope.render.i18n import Lang, t
from attnscope.results.common import Token, Word
from attnscope.results.matrix import MatrixResult
from attnscope.results.weights import WeightsResult

COLUMNS = ("head", "kv", "on_key", "top", "entropy", "sink", "previous_token", "duplicate_token", "induction", "effect")
KEYS = (  # (keys as the key map shows them, the catalogue entry)
    ("←/→", "move"),
    ("k", "key"),
    ("↑/↓", "rows"),
    ("Enter", "open"),
    ("v", "mean"),
    ("m", "matrix"),
    ("n", "norm"),
    ("w", "words"),
    ("o/O", "sort"),
    ("/", "filter"),
    ("a", "ablate"),
    ("g", "generate"),
    ("Esc", "stop"),
    ("e", "export"),
    ("s", "save"),
    ("?", "help"),
    ("Ctrl+P", "palette"),
    ("q", "quit"),
)


def token_label(tok: Token) -> str:
    """A token as the strip and the table print it: its label, a special token in angle brackets."""
    return f"⟨{tok.label}⟩" if tok.special and not tok.label.startswith("<") else tok.label


def strip(tokens: Sequence[Token], query: int, key: Sequence[int], width: int, lines: int, prompt_len: int) -> Text:
    """The tokens around the query that fit ``lines`` lines of ``width`` cells: the query in »guillemets«
    and reverse, the key's tokens in {braces} and underlined, special tokens dim, generated ones italic."""
    cells = [cell_len(token_label(tok)) + 3 for tok in tokens]  # the label, its marks, a space
    room = max(1, width * lines - 4)
    lo = hi = query
    used = cells[query]
    while True:  # grow the window on both sides around the query while it fits
        grown = False
        if lo > 0 and used + cells[lo - 1] <= room:
            lo, used, grown = lo - 1, used + cells[lo - 1], True
        if hi < len(tokens) - 1 and used + cells[hi + 1] <= room:
            hi, used, grown = hi + 1, used + cells[hi + 1], True
        if not grown:
            break
    out = Text(no_wrap=False, overflow="fold")
    if lo > 0:
        out.append("… ", style="dim")
    keyset = set(key)
    for i in range(lo, hi + 1):
        tok = tokens[i]
        label = token_label(tok)
        if i == query:
            out.append(f"»{label}«", style="reverse bold")
        elif i in keyset:
            out.append(f"{{{label}}}", style="underline bold")
        else:
            style = "dim" if tok.special else ("italic" if i >= prompt_len else "")
            out.append(f" {label} ", style=style)
        out.append(" ")
    if hi < len(tokens) - 1:
        out.append("…", style="dim")
    return out


def key_label(tokens: Sequence[Token], key: Sequence[int], words: Sequence[Word]) -> str:
    """The key as the top line names it: its word when the key is a whole word, else its tokens' labels."""
    word = tokens[key[0]].word
    if word < len(words) and list(words[word].tokens) == list(key):
        return words[word].text
    return "".join(tokens[i].label for i in key)


def top_line(
    lang: Lang,
    tokens: Sequence[Token],
    words: Sequence[Word],
    query: int,
    key: Sequence[int],
    moving_key: bool,
    sort: str,
    descending: bool,
    filtered: str,
    shown: int,
    total: int,
    measure: str,
    target: str | None = None,
) -> Text:
    """One line: the query and key, what ←/→ moves, the sort, the filter and the measure."""
    out = Text()
    out.append(t(lang, "tui.query", label=token_label(tokens[query]), pos=query), style="bold")
    keyed = key_label(tokens, key, words)
    out.append("  ")
    out.append(t(lang, "tui.key_span", label=keyed, first=key[0], last=key[-1]), style="bold underline")
    out.append("  " + t(lang, "tui.moving_key" if moving_key else "tui.moving_query"), style="dim")
    arrow = "↓" if descending else "↑"
    out.append("  " + t(lang, "tui.sorted", column=t(lang, f"tui.col.{sort}"), arrow=arrow))
    if filtered:
        out.append("  " + t(lang, "tui.filtered", filter=filtered, shown=shown, total=total))
    if measure == "norm":
        out.append("  " + t(lang, "tui.norm"), style="bold")
    if target is not None:
        out.append("  " + t(lang, "tui.ablated", target=repr(target)))
    return out


def column_labels(lang: Lang) -> list[str]:
    """The table's column headers."""
    return [t(lang, f"tui.col.{c}") for c in COLUMNS]


def number(value: float | None, digits: int = 2, shaded: bool = False, signed: bool = False) -> str:
    """A cell: the value (a dash when there is none), with a shade character before a share."""
    if value is None:
        return "-"
    body = f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"
    return (shade(value) if shaded else "") + body


def label_cell(tok: Token, limit: int) -> str:
    label = token_label(tok)
    while cell_len(label) > limit:
        label = label[:-1]
    return label


MIN_WIDTHS = (7, 3, 6, 8, 7, 6, 5, 5, 6, 6)  # cells per column, before the header's own width
LEFT = ("head", "top")  # the columns read from the left; the numbers are right-aligned


def row_cells(values: dict[str, float | None], tokens: Sequence[Token], groups: int) -> list[str]:
    """One head's cells, in COLUMNS order."""
    layer, head = int(values["layer"] or 0), int(values["head"] or 0)
    best = values.get("top")
    return [
        f"L{layer} H{head}",
        str(head // groups),
        number(values.get("on_key"), shaded=True),
        label_cell(tokens[int(best)], MIN_WIDTHS[3]) if best is not None else "-",
        number(values.get("entropy")),
        number(values.get("sink"), shaded=True),
        number(values.get("previous_token")),
        number(values.get("duplicate_token")),
        number(values.get("induction")),
        number(values.get("effect"), signed=True),
    ]


def column_widths(labels: Sequence[str]) -> list[int]:
    return [max(w, cell_len(label)) for w, label in zip(MIN_WIDTHS, labels, strict=True)]


def _pad(text: str, width: int, left: bool) -> str:
    room = width - cell_len(text)
    return text + " " * room if left else " " * room + text


def table_text(labels: Sequence[str], rows: Sequence[Sequence[str]], cursor: int | None, width: int) -> Text:
    """The heads table as lines: the header, then ``rows`` (the visible ones), the cursor's row in reverse.
    Columns are padded by cell width, so Korean labels keep every column in place."""
    widths = column_widths(labels)
    left = [c in LEFT for c in COLUMNS]
    out = Text(no_wrap=True, overflow="crop")
    header = " ".join(_pad(label, w, lf) for label, w, lf in zip(labels, widths, left, strict=True))
    out.append(" " + _pad(header, width - 1, True), style="bold reverse")
    for i, cells in enumerate(rows):
        line = " ".join(_pad(c, w, lf) for c, w, lf in zip(cells, widths, left, strict=True))
        out.append("\n")
        out.append(" " + _pad(line, width - 1, True), style="reverse bold" if i == cursor else "")
    return out


def column_at(labels: Sequence[str], x: int) -> int | None:
    """The column under screen column ``x`` of the table (None between or after the columns)."""
    at = 1
    for i, w in enumerate(column_widths(labels)):
        if at <= x < at + w:
            return i
        at += w + 1
    return None


def head_detail(r: WeightsResult, ctx: Ctx, layer: int, head: int, kv_head: int) -> RenderableType:
    """One head's chart for the query: the note's bars (they sum to 1, the query's own row marked)."""
    from attnscope.render.weights import chart_table

    lang = ctx.lang
    title = Text(t(lang, "tui.head_title", layer=layer, head=head, kv=kv_head, label=r.tokens[r.query.index].label))
    note = Text(t(lang, "tui.norm_note" if r.measure == "norm" else "tui.weight_note"), style="dim")
    width = 10 if (ctx.width or 80) < 50 else 24
    return Group(title, note, chart_table(r.chart, lang, r, width=width))


def mean_detail(r: WeightsResult, ctx: Ctx) -> RenderableType:
    """The mean over every layer and head: ``attnscope weights``' default chart, then its sink line and
    the heads that look hardest at each key."""
    from attnscope.render.weights import chart_table, hardest_block, sink_line

    lang = ctx.lang
    title = Text(t(lang, "tui.mean_title", label=r.tokens[r.query.index].label), style="bold")
    note = Text(t(lang, "tui.norm_note" if r.measure == "norm" else "tui.weight_note"), style="dim")
    width = 10 if (ctx.width or 80) < 50 else 24
    parts: list[RenderableType] = [title, note, chart_table(r.chart, lang, r, width=width)]
    sink = sink_line(r, lang)
    if sink is not None:
        parts.append(sink)
    parts += hardest_block(r, lang, 5)
    return Group(*parts)


def matrix_detail(r: MatrixResult, ctx: Ctx) -> RenderableType:
    """The head's whole matrix as ``attnscope matrix`` draws it (a heat grid of shade characters)."""
    from attnscope.render.matrix import view

    return view(r, ctx)


def help_table(lang: Lang) -> Table:
    """The key map."""
    table = Table(box=None, show_header=False, padding=(0, 2), title=t(lang, "tui.help_title"))
    table.add_column("keys", no_wrap=True, style="bold")
    table.add_column("what")
    for keys, name in KEYS:
        table.add_row(keys, t(lang, f"tui.help.{name}"))
    table.add_row("", "")
    table.add_row("", t(lang, "tui.help.filters"))
    return table
