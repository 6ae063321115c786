"""Fitting a view to the width it is printed at: decoration goes first, numbers and labels never.

``FitColumns`` wraps a Rich table whose columns are either facts (indices, scores, labels)
or decoration (bars, shading strips, heat cells). When the table does not fit the width it is
given, it drops the decoration groups one by one, in the order the view lists them, instead
of letting Rich squeeze every column into ``0.…``. ``print_width`` picks the width for a
non-terminal stdout: the view's own full width, so a pipe or a file never wraps a table row
or breaks a path in the middle. Nothing here knows any view; views opt in.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Table

PIPED_MAX_WIDTH = 400  # a runaway line (a 10k-token prompt) still wraps somewhere


class FitColumns:
    """``table``, minus as few ``decoration`` column groups as it takes to fit the width.

    ``decoration`` lists groups of column indices, dropped together and in this order (e.g.
    ``[[bar], [strip]]``: the bar goes first, then the strip). Fact columns are never dropped;
    the rendered table is a copy, so the same view can be printed at several widths.
    """

    def __init__(self, table: Table, decoration: Sequence[Iterable[int]]) -> None:
        self.table = table
        self.decoration = [set(group) for group in decoration]

    def _without(self, dropped: set[int]) -> Table:
        if not dropped:
            return self.table
        fitted = copy.copy(self.table)
        fitted.columns = []
        for col in (c for i, c in enumerate(self.table.columns) if i not in dropped):
            kept = copy.copy(col)
            kept._index = len(fitted.columns)  # Rich looks a column's cells up by its index
            fitted.columns.append(kept)
        return fitted

    def fitted(self, console: Console, options: ConsoleOptions) -> Table:
        dropped: set[int] = set()
        candidate = self.table
        for group in self.decoration:
            if needed_width(console, options, candidate) <= options.max_width:
                break
            dropped |= group
            candidate = self._without(dropped)
        return candidate

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.fitted(console, options)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        full = Measurement.get(console, options, self.table)
        bare = Measurement.get(console, options, self._without(set().union(*self.decoration)))
        return Measurement(min(bare.maximum, full.maximum), full.maximum)


def needed_width(console: Console, options: ConsoleOptions, table: Table) -> int:
    """The narrowest ``table`` prints without cutting a cell: no-wrap columns (numbers, labels,
    bars) at their full width, wrapping columns (sentences) at their longest word."""
    wide = options.update_width(PIPED_MAX_WIDTH * 4)  # measurements are clamped to the width given
    total = table._extra_width  # borders and separators
    for column in table.columns:
        measured = table._measure_column(console, wide, column)  # cells plus the column's padding
        total += measured.maximum if column.no_wrap else measured.minimum
    return total


def print_width(renderable: RenderableType, is_terminal: bool) -> int | None:
    """The width to print at: None on a terminal (Rich reads it), else the view's full width."""
    if is_terminal:
        return None
    probe = Console(width=PIPED_MAX_WIDTH, color_system=None, force_terminal=False)
    natural = Measurement.get(probe, probe.options, renderable).maximum
    return max(40, min(PIPED_MAX_WIDTH, natural))
