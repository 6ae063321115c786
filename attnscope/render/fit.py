"""Fitting a view to the width it is printed at: decoration goes first, numbers and labels never.

``FitColumns`` wraps a Rich table whose columns are either facts (indices, scores, labels)
or decoration (bars, shading strips, heat cells). When the table does not fit the width it is
given, it drops the decoration groups one by one, in the order the view lists them, instead
of letting Rich squeeze every column into ``0.…``. If the facts alone are still too wide, it
narrows the padding, then lets the headers wrap between their words, and last splits the
columns into blocks printed one under the other, each repeating the key columns (the row's
index or label), as R and pandas print a wide table. A cell is never cut: a column marked
``no_wrap`` keeps every cell whole, a wrapping column breaks its cells between words only.
``Fitted`` wraps a whole view: a long word (a path) in its text is shortened in the middle
rather than broken across lines, and a token label's glued spaces (``glue``) never break.
``Flow`` lays items (token labels) side by side and breaks lines only between them. ``print_width`` picks the width for a non-terminal stdout: the view's own
full width, so a pipe or a file never wraps a table row or breaks a path in the middle.
Nothing here knows any view; views opt in.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Sequence

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.padding import Padding
from rich.segment import Segment
from rich.table import Column, Table
from rich.text import Text

from attnscope.render.richcompat import border_width, padding_width, set_column_index

PIPED_MAX_WIDTH = 400  # a runaway line (a 10k-token prompt) still wraps somewhere


class FitColumns:
    """``table``, minus as few ``decoration`` column groups as it takes to fit the width.

    ``decoration`` lists groups of column indices, dropped together and in this order (e.g.
    ``[[bar], [strip]]``: the bar goes first, then the strip). Fact columns are never dropped;
    when they alone are too wide the table is laid out in blocks that each repeat the ``keys``
    columns. The rendered table is a copy, so the same view can be printed at several widths.
    """

    def __init__(
        self,
        table: Table,
        decoration: Sequence[Iterable[int]] = (),
        keys: Sequence[int] = (0,),
        legend: RenderableType | None = None,
        legend_for: int = 0,
        whole_rows: bool = False,
    ) -> None:
        self.table = table
        self.whole_rows = whole_rows  # a row stays on one line: blocks come before wrapping a cell
        self.decoration = [set(group) for group in decoration]
        dropped = set().union(*self.decoration)
        self.keys = [k for k in keys if k not in dropped]
        self.legend = legend  # printed under the table while decoration group ``legend_for`` is shown
        self.legend_for = legend_for

    def _keep(self, kept: Sequence[int], table: Table | None = None) -> Table:
        """A copy of ``table`` with only the columns ``kept`` (indices into it), in that order."""
        source = self.table if table is None else table
        fitted = copy.copy(source)
        fitted.columns = []
        for i in kept:
            column = copy.copy(source.columns[i])
            set_column_index(column, len(fitted.columns))
            fitted.columns.append(column)
        return fitted

    def _without(self, dropped: set[int]) -> Table:
        if not dropped:
            return self.table
        return self._keep([i for i in range(len(self.table.columns)) if i not in dropped])

    def fitted(self, console: Console, options: ConsoleOptions) -> RenderableType:
        width = options.max_width
        dropped: set[int] = set()
        candidate = self.table
        for n_dropped, group in enumerate([set(), *self.decoration]):
            dropped |= group
            candidate = self._without(dropped)
            if _bounds(console, candidate, wrap_headers=False)[1] <= width:  # fits as it is
                if self.legend is not None and n_dropped <= self.legend_for:
                    return Group(candidate, self.legend)
                return candidate
        bare = _narrow_padding(candidate)
        if _bounds(console, bare, wrap_headers=True)[1 if self.whole_rows else 0] <= width:
            return sized(console, bare, width, wrap_headers=True)
        return self._blocks(console, bare, width, dropped)

    def _blocks(self, console: Console, bare: Table, width: int, dropped: set[int]) -> RenderableType:
        """The fact columns in blocks one under the other, each starting with the key columns."""
        kept = [i for i in range(len(self.table.columns)) if i not in dropped]
        keys = [kept.index(k) for k in self.keys if k in kept]
        rest = [i for i in range(len(kept)) if i not in keys]
        blocks: list[list[int]] = []
        current: list[int] = []
        need = 1 if self.whole_rows else 0  # whole rows: every cell at its natural width
        for i in rest:
            trial = self._keep([*keys, *current, i], bare)
            if current and _bounds(console, trial, True)[need] > width:
                blocks.append(current)
                current = [i]
            else:
                current.append(i)
        if current:
            blocks.append(current)
        parts: list[RenderableType] = []
        for block in blocks:
            if parts:
                parts.append(Text(""))
            table = self._keep([*keys, *block], bare)
            if _bounds(console, table, True)[0] <= width or not keys:
                parts.append(sized(console, table, width, wrap_headers=True))
            else:  # even the keys and one column do not fit side by side: the key above its value
                parts.append(_stacked(self._keep(keys, bare), self._keep(block, bare)))
        return Group(*parts)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.fitted(console, options)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        full = Measurement.get(console, options, self.table)
        bare = _narrow_padding(self._without(set().union(*self.decoration)))
        return Measurement(min(_bounds(console, bare, True)[0], full.maximum), full.maximum)


def _stacked(keys: Table, values: Table) -> Table:
    """One column: each row's key cells on a line, its value cells under them, indented."""
    out = Table(box=None, pad_edge=False, padding=0, show_header=values.show_header, header_style=values.header_style)
    out.add_column(values.columns[0].header if values.show_header else "", overflow="fold")
    key_cells = [list(c.cells) for c in keys.columns]
    value_cells = [list(c.cells) for c in values.columns]
    for row in range(values.row_count):
        out.add_row(Text(" ").join(_plain_cell(cells[row]) for cells in key_cells))
        for cells in value_cells:
            out.add_row(Padding(cells[row], (0, 0, 0, 2)))
    return out


def _plain_cell(cell: RenderableType) -> Text:
    return cell if isinstance(cell, Text) else Text(str(cell))


def _narrow_padding(table: Table) -> Table:
    """``table`` with at most one blank cell between columns (the padding is decoration too)."""
    top, right, bottom, left = table.padding
    if right + left <= 1:
        return table
    narrow = copy.copy(table)
    narrow.padding = (top, 1, bottom, 0)
    return narrow


def _column_bounds(console: Console, table: Table, index: int, wrap_headers: bool) -> tuple[int, int, int]:
    """(least, body, natural) content width of column ``index``: least has a no-wrap cell whole,
    a wrapping cell at its longest word, the header whole or (``wrap_headers``) at its longest
    word; body has every cell whole and only the header wrapped; natural has everything whole."""
    wide = console.options.update_width(PIPED_MAX_WIDTH * 4)
    column = table.columns[index]
    least = body = natural = 0
    for cell in column.cells:
        measured = Measurement.get(console, wide, cell)
        least = max(least, measured.maximum if column.no_wrap else measured.minimum)
        body = max(body, measured.maximum)
        natural = max(natural, measured.maximum)
    if table.show_header:
        measured = Measurement.get(console, wide, column.header)
        header = measured.minimum if wrap_headers or not column.no_wrap else measured.maximum
        least, body = max(least, header), max(body, header)
        natural = max(natural, measured.maximum)
    if column.min_width is not None:
        least, body, natural = (max(x, column.min_width) for x in (least, body, natural))
    return least, body, natural


def _bounds(console: Console, table: Table, wrap_headers: bool) -> tuple[int, int]:
    """(least, natural) width of the whole table, padding and borders included."""
    least = natural = border_width(table)
    for i in range(len(table.columns)):
        low, _, high = _column_bounds(console, table, i, wrap_headers)
        pad = padding_width(table, i)
        least, natural = least + low + pad, natural + high + pad
    return least, natural


def sized(console: Console, table: Table, width: int, wrap_headers: bool) -> Table:
    """A copy of ``table`` with each column's width set: natural widths when they fit, else the
    widest columns narrowed, first only as far as their headers wrap (every cell whole), then
    toward (never under) their least width. Rich's own squeeze ignores least widths and would
    cut a cell."""
    bounds = [_column_bounds(console, table, i, wrap_headers) for i in range(len(table.columns))]
    natural = [high for _, _, high in bounds]
    spare = sum(padding_width(table, i) for i in range(len(table.columns))) + border_width(table)
    widths = _narrowed(natural, [[body for _, body, _ in bounds], [low for low, _, _ in bounds]], width - spare)
    if widths == natural and not wrap_headers and all(c.no_wrap for c in table.columns):
        return table
    out = copy.copy(table)
    out.columns = [
        _sized_column(column, i, w, wrap_headers)
        for i, (column, w) in enumerate(zip(table.columns, widths, strict=True))
    ]
    return out


def _narrowed(widths: list[int], floors: list[list[int]], total: int) -> list[int]:
    """``widths`` narrowed one cell at a time, the widest column that can still give first, until
    they sum to ``total``: down to the first floor, then to the next (never under the last)."""
    widths = list(widths)
    excess = sum(widths) - total
    for floor in floors:
        while excess > 0:
            room = [w - f for w, f in zip(widths, floor, strict=True)]
            if max(room) <= 0:
                break
            i = max(range(len(widths)), key=lambda k: (room[k] > 0, widths[k]))
            widths[i] -= 1
            excess -= 1
    return widths


def _sized_column(column: Column, index: int, width: int, wrap_headers: bool) -> Column:
    """A copy of ``column`` at ``index`` with its width set."""
    kept = copy.copy(column)
    set_column_index(kept, index)
    kept.width = width
    if wrap_headers:
        kept.no_wrap = False  # every cell fits its width whole; only the header wraps
    if not kept.no_wrap:
        # Rich strips a wrapped line's trailing space by characters, not cells: a line of wide
        # (Korean) characters keeps it, is one cell too long and would lose its last word to
        # "…". Folding only drops that space (every word is narrower than the column).
        kept.overflow = "fold"
    return kept


def needed_width(console: Console, options: ConsoleOptions, table: Table) -> int:
    """The narrowest ``table`` prints without cutting a cell: no-wrap columns (numbers, labels,
    bars) at their full width, wrapping columns (sentences) at their longest word."""
    return _bounds(console, table, wrap_headers=False)[0]


WORD = re.compile(r"\S+")


def shorten_words(console: Console, text: Text, width: int) -> Text:
    """``text`` with every word wider than ``width`` cells shortened in the middle."""
    plain = text.plain
    long = [m for m in WORD.finditer(plain) if cell_len(m.group()) > width]
    if not long:
        return text
    out = Text(style=text.style, justify=text.justify, no_wrap=text.no_wrap, end=text.end)
    done = 0
    for match in long:
        out.append_text(text[done : match.start()])
        word = text[match.start() : match.end()]
        before = cell_len(plain[plain.rfind("\n", 0, match.start()) + 1 : match.start()])
        room = width - before if before <= width // 3 else width  # "model /…/x.gguf" stays on one line
        out.append(middle(word.plain, room), style=word.get_style_at_offset(console, 0))
        done = match.end()
    out.append_text(text[done:])
    return out


def middle(word: str, width: int) -> str:
    """``word`` in at most ``width`` cells: its start and end around one ``…``."""
    if cell_len(word) <= width:
        return word
    keep = max(width - 1, 2)
    head_cells, tail_cells = (keep + 1) // 2, keep // 2
    head = tail = ""
    for ch in word:
        if cell_len(head + ch) > head_cells:
            break
        head += ch
    for ch in reversed(word):
        if cell_len(ch + tail) > tail_cells:
            break
        tail = ch + tail
    return f"{head}…{tail}"


GLUE = "\ue000"  # a space that must not break a line (inside a token label such as "민 1/3"); see Fitted


def glue(label: str) -> str:
    """``label`` with its spaces glued: a wrapped line never breaks inside it."""
    return label.replace(" ", GLUE)


# What a wrapped sentence never breaks inside: a short parenthesised group ("(K·V 헤드 2개)"),
# and a formula's operator with its operands ("i + d/2번째", "f(x) = (x W_V + b_V) W_O").
_GROUP = re.compile(r"\([^()\n]{1,40}\)")
_OPERATOR = re.compile(r"(?<=\S) (?=[-+=×÷·≤≥<>~→/] \S)|(?<= [-+=×÷·≤≥<>~→/]) (?=\S)")


def glue_formulas(text: str, longest: int = 40) -> str:
    """``text`` with the spaces inside short parenthesised groups and around a formula's
    operators glued (same length: a space becomes ``GLUE``); a glued run that would be wider
    than ``longest`` cells stays breakable, so a narrow line never has to cut it."""
    chars = list(_OPERATOR.sub(GLUE, _GROUP.sub(lambda m: m.group(0).replace(" ", GLUE), text)))
    for m in re.finditer(r"[^ ]+", "".join(chars)):
        if cell_len(m.group(0)) > longest:  # too long to keep whole: its own glue only (a label's stays)
            for i in range(m.start(), m.end()):
                if text[i] == " ":
                    chars[i] = " "
    return "".join(chars)


class Fitted:
    """A whole view, laid out for the width: in its lines of text (a Group's Text, at any depth)
    a word wider than the line, such as a path, is shortened in the middle with ``…`` instead of
    broken across lines; and every ``GLUE`` is printed as a space. Rich breaks lines at any
    whitespace, even a no-break space, so a label's spaces are glued while lines are laid out
    and turned back into spaces on the way out."""

    def __init__(self, renderable: RenderableType) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        shortened = _shorten_tree(console, self.renderable, options.max_width)
        for segment in console.render(shortened, options):
            if GLUE in segment.text:
                yield Segment(segment.text.replace(GLUE, " "), segment.style, segment.control)
            else:
                yield segment

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.renderable)


def _shorten_tree(console: Console, renderable: RenderableType, width: int) -> RenderableType:
    if isinstance(renderable, Text):
        glued = glue_formulas(renderable.plain, max(10, width // 2))
        if glued != renderable.plain:
            renderable = renderable.copy()
            renderable.plain = glued
        return shorten_words(console, renderable, width)
    if isinstance(renderable, Group):
        return Group(*(_shorten_tree(console, child, width) for child in renderable.renderables), fit=renderable.fit)
    return renderable


class TableOr:
    """``table`` when it fits the width with every cell whole, else ``otherwise`` (the same facts
    laid out for a narrow screen, e.g. one ``name value`` line with its description below)."""

    def __init__(self, table: Table, otherwise: RenderableType) -> None:
        self.table = table
        self.otherwise = otherwise

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if needed_width(console, options, self.table) <= options.max_width:
            yield sized(console, self.table, options.max_width, wrap_headers=False)
        else:
            yield self.otherwise

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        full = Measurement.get(console, options, self.table)
        other = Measurement.get(console, options, self.otherwise)
        return Measurement(min(full.minimum, other.minimum), full.maximum)


class Flow:
    """``items`` (token labels, which may hold spaces) side by side, ``sep`` between them, a new
    line only between two items: a label is never split across lines."""

    def __init__(self, items: Sequence[Text], sep: str = " ") -> None:
        self.items = list(items)
        self.sep = sep

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        line = Text()
        for item in self.items:
            item = shorten_words(console, item, width) if item.cell_len > width else item
            if line.plain and line.cell_len + cell_len(self.sep) + item.cell_len > width:
                yield line
                line = Text()
            elif line.plain:
                line.append(self.sep)
            line.append_text(item)
        if line.plain:
            yield line

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        widest = max((item.cell_len for item in self.items), default=0)
        total = sum(item.cell_len for item in self.items) + cell_len(self.sep) * max(len(self.items) - 1, 0)
        return Measurement(min(widest, options.max_width), min(total, options.max_width))


def print_width(renderable: RenderableType, is_terminal: bool, columns: str | None = None) -> int | None:
    """The width to print at: None on a terminal (Rich reads it); else ``columns`` ($COLUMNS)
    when it is set to a width of 40 or more, else the view's full width."""
    if is_terminal:
        return None
    if columns and columns.strip().isdigit() and int(columns) >= 40:
        return min(PIPED_MAX_WIDTH, int(columns))
    probe = Console(width=PIPED_MAX_WIDTH, color_system=None, force_terminal=False)
    natural = Measurement.get(probe, probe.options, renderable).maximum
    return max(40, min(PIPED_MAX_WIDTH, natural))
