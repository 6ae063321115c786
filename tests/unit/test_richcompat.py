"""render.richcompat against the installed Rich: each private table internal means what fit.py
takes it to mean. A Rich release that renames or changes one fails here, not in a view."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
from rich import box
from rich.table import Table

import attnscope
from attnscope.render import to_text
from attnscope.render.richcompat import border_width, padding_width, set_column_index


def table(**options: object) -> Table:
    out = Table(show_header=False, **options)  # type: ignore[arg-type]
    for _ in range(3):
        out.add_column(no_wrap=True)
    out.add_row("a", "bb", "ccc")
    return out


def printed_width(t: Table) -> int:
    lines = to_text(t, width=80).splitlines()
    return max(len(line) for line in lines)


LAYOUTS = [
    {"box": None, "pad_edge": False, "padding": (0, 2)},
    {"box": None, "pad_edge": True, "padding": (0, 1)},
    {"box": None, "pad_edge": False, "padding": (0, 3, 0, 1)},
    {"box": box.ASCII, "padding": (0, 1)},
    {"box": box.ASCII, "show_edge": False, "padding": (0, 1)},
    {"box": box.ASCII, "pad_edge": False, "padding": 0},
]


@pytest.mark.parametrize("options", LAYOUTS, ids=[str(o) for o in LAYOUTS])
def test_padding_and_borders_add_up_to_the_printed_width(options: dict[str, object]) -> None:
    t = table(**options)
    content = 1 + 2 + 3
    pads = sum(padding_width(t, i) for i in range(3))
    assert content + pads + border_width(t) == printed_width(t)


def test_padding_width_per_column() -> None:
    t = table(box=None, pad_edge=False, padding=(0, 2))
    assert [padding_width(t, i) for i in range(3)] == [2, 4, 2]
    assert border_width(t) == 0
    assert border_width(table(box=box.ASCII)) == 4  # two edges and two lines between three columns


def test_a_moved_column_pads_as_its_new_place() -> None:
    """A column copied to another place of a table copy takes that place's padding (no edge padding
    on the first and last), as render.fit relies on when it drops or reorders columns."""
    t = table(box=None, pad_edge=False, padding=(0, 2))

    def moved(tell: bool) -> list[str]:
        out = copy.copy(t)
        out.columns = []
        for place, i in enumerate([2, 0]):
            column = copy.copy(t.columns[i])
            if tell:
                set_column_index(column, place)
            out.columns.append(column)
        return [line.rstrip() for line in to_text(out, width=80).splitlines()]

    assert moved(tell=True) == ["ccc    a"]
    assert moved(tell=False) != moved(tell=True)  # the index is what Rich reads


def test_no_other_module_touches_rich_internals() -> None:
    private = re.compile(r"\._index\b|\._cells\b|_extra_width|_get_padding_width|\._get_cells|\._measure_column")
    package = Path(attnscope.__file__).parent
    users = sorted(
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if path.name != "richcompat.py" and private.search(path.read_text(encoding="utf-8"))
    )
    assert users == []
