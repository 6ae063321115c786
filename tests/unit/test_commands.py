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


def _module_file(module: str) -> Path:
    """The source of a dotted module: a .py file, or a package's __init__.py (not imported: no torch here)."""
    base = ROOT / Path(*module.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def _defines(path: Path, name: str) -> bool:
    """``path`` defines ``name`` at its top level (a def, or a name it imports and re-exports)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return True
        if isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == name for a in node.names):
            return True
    return False


def _type_checking_imports() -> set[tuple[str, str, str]]:
    """attnscope/__init__.py's second list: (module, attribute, name) under ``if TYPE_CHECKING:``."""
    tree = ast.parse((ROOT / "attnscope" / "__init__.py").read_text(encoding="utf-8"))
    block = next(n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", None) == "TYPE_CHECKING")
    return {
        (node.module or "", alias.name, alias.asname or alias.name)
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


def _independent_analyses() -> set[str]:
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    return {m for c in contracts if c.get("type") == "independence" for m in c["modules"]}


def _sections(lang: str) -> list[str]:
    text = (ROOT / "attnscope" / "render" / "messages" / f"{lang}.py").read_text(encoding="utf-8")
    return [line.strip()[len("# == ") : -len(" ==")] for line in text.splitlines() if line.strip().startswith("# == ")]


def test_every_row_has_its_analysis_catalogue_docs_page_and_library_export() -> None:
    """What "Adding a command" in docs/development.md asks of a row beyond its cli, result, view and figure."""
    import attnscope

    api = (ROOT / "docs" / "python-api.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    checking = _type_checking_imports()
    sections = {lang: _sections(lang) for lang in ("en", "ko")}
    independent = _independent_analyses()
    for row in COMMANDS:
        assert (ROOT / "docs" / "commands" / f"{row.name}.md").is_file(), f"{row.name}: no docs/commands/{row.name}.md"
        assert f"docs/commands/{row.name}.md" in readme, f"{row.name}: no row in README.md's table of commands"
        if row.core is None:
            assert row.result is None, f"{row.name}: a command with a result has an analysis in core"
            continue
        module, _, function = row.core.partition(":")
        assert function == row.name, f"{row.name}: the analysis is the function named after the command"
        assert module == f"attnscope.core.{row.name}" or module.startswith("attnscope.core."), row.name
        path = _module_file(module)
        assert path.is_file() and _defines(path, function), f"{row.name}: {row.core} is not in {path}"
        # the library export, in both lists of attnscope/__init__.py, and its example on the API page
        assert attnscope._LAZY.get(row.name) == (module, function), f"{row.name}: attnscope._LAZY has no {row.core}"
        assert row.name in attnscope.__all__
        assert (module, function, row.name) in checking, f"{row.name}: not imported under TYPE_CHECKING"
        assert f"`{row.name}(" in api and f"attnscope.{row.name}(" in api, f"{row.name}: not in docs/python-api.md"
        # the import contract keeps it apart from the other analyses
        top = ".".join(module.split(".")[:3])  # attnscope.core.X: the module, or the package holding it
        assert top in independent, f"{row.name}: {top} is not in the contract 'analyses are independent'"
        # its words: one catalogue section named after it, in both languages
        for lang, names in sections.items():
            assert names.count(row.name) == 1 and f"end {row.name}" in names, f"{row.name}: no section in {lang}.py"
