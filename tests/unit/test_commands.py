"""The command table is the only list of commands: everything that lists them reads it."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

from attnscope.commands import COMMANDS, resolve

ROOT = Path(__file__).resolve().parents[2]


def test_every_row_resolves_to_its_parts() -> None:
    from attnscope.results import Result

    for row in COMMANDS:
        assert callable(resolve(row.cli)), row.name
        assert (row.result is None) == (row.view is None) == (row.schema is None), row.name
        assert row.result is not None or row.figure is None, row.name
        if row.result is None:
            continue
        result_type = resolve(row.result)
        assert issubclass(result_type, Result) and result_type.SCHEMA == row.schema, row.name
        assert callable(resolve(row.view)), row.name  # type: ignore[arg-type]
        if row.figure is not None:
            assert callable(resolve(row.figure)), row.name


def test_every_result_type_has_exactly_one_row() -> None:
    from attnscope.results import Result
    from attnscope.results.registry import RESULT_TYPES

    rows = [resolve(row.result) for row in COMMANDS if row.result is not None]
    assert len(rows) == len(set(rows))
    assert set(RESULT_TYPES) == set(rows)
    import attnscope.results as results_package

    for name in sorted(p.stem for p in Path(results_package.__file__).parent.glob("*.py")):
        module = __import__(f"attnscope.results.{name}", fromlist=["*"])
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Result) and value is not Result:
                assert value in rows, f"{value.__name__} has no row in attnscope.commands"


def test_views_and_figures_are_the_tables() -> None:
    from attnscope import render

    render.load_views()
    for row in COMMANDS:
        if row.result is None:
            continue
        result_type = resolve(row.result)
        assert render.view.dispatch(result_type) is resolve(row.view)  # type: ignore[arg-type]
        drawn = render.figure.dispatch(result_type)
        assert drawn is (resolve(row.figure) if row.figure else render.figure.dispatch(object)), row.name


def test_help_lists_exactly_the_table_in_its_order() -> None:
    res = subprocess.run(
        [sys.executable, "-m", "attnscope", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100"},
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    listed = res.stdout.split("Commands:", 1)[1].splitlines()
    names = [line.split()[0] for line in listed if line.startswith("  ") and not line.startswith("   ")]
    assert names == [row.name for row in COMMANDS]
    from attnscope.cli import app

    assert [c.name for c in app.registered_commands] == [row.name for row in COMMANDS]


def test_the_table_imports_no_attnscope_module_and_nothing_heavy() -> None:
    tree = ast.parse((ROOT / "attnscope" / "commands.py").read_text(encoding="utf-8"))
    imported = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names] + [
        node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
    ]
    assert set(imported) <= {"__future__", "importlib", "dataclasses", "typing"}, imported
