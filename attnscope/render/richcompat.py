"""Every use of Rich's private table internals, in one place.

``render.fit`` lays tables out itself (it drops, reorders and sizes columns), so it needs a few
things Rich keeps private: the index a column looks its cells up by, and the width a table adds
for its padding and for its borders. Each is one small function here, and
``tests/unit/test_richcompat.py`` checks each against the installed Rich, so that a Rich release
that changes them fails that test rather than a view. ``pyproject.toml`` bounds rich to the
major version the test has passed on.
"""

from __future__ import annotations

from rich.table import Column, Table


def set_column_index(column: Column, index: int) -> None:
    """Tell ``column`` (a copy placed in another table) where it now sits: Rich reads a
    column's cells and its padding by this index, not by the column's place in ``table.columns``."""
    column._index = index


def padding_width(table: Table, index: int) -> int:
    """The blank cells ``table`` puts around the content of column ``index`` (left plus right)."""
    return table._get_padding_width(index)


def border_width(table: Table) -> int:
    """The cells ``table`` spends on its box: the outer edges and the lines between columns."""
    return table._extra_width
