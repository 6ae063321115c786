"""Imports that must not happen, checked in one place.

- ``-p support.notorch``: a pytest plugin that makes torch and transformers unimportable, for the
  unit tier (``tests/unit/test_tier.py`` runs it that way).
- :func:`run_cli_without_torch`: the CLI in a child process where torch, transformers and the
  view and figure modules cannot be imported, for the checks that must answer before a model loads.
- :func:`imported`: which of some modules a piece of code imported, run in a fresh process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.abc import MetaPathFinder
from pathlib import Path
from typing import Any

HEAVY = ("torch", "transformers")
ROOT = Path(__file__).resolve().parents[2]
MESSAGE = "imported before the input was checked"


class NoTorch(MetaPathFinder):
    """Refuses every top-level name in ``blocked`` and every module under one of ``prefixes``."""

    def __init__(self, blocked: tuple[str, ...] = HEAVY, prefixes: tuple[str, ...] = ()) -> None:
        self.blocked, self.prefixes = blocked, prefixes

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name.split(".")[0] in self.blocked or any(name == p or name.startswith(p + ".") for p in self.prefixes):
            raise ImportError(f"{name} {MESSAGE}")
        return None


def block(blocked: tuple[str, ...] = HEAVY, prefixes: tuple[str, ...] = ()) -> None:
    sys.meta_path.insert(0, NoTorch(blocked, prefixes))


def view_modules() -> tuple[str, ...]:
    """The modules of every view and figure in the command table (loaded only to draw a result)."""
    from attnscope.commands import COMMANDS

    paths = [p for row in COMMANDS for p in (row.view, row.figure) if p]
    return tuple(sorted({p.split(":")[0] for p in paths}))


def pytest_configure(config: Any) -> None:
    bad = [name for name in HEAVY if name in sys.modules]
    assert not bad, f"{bad} imported before the unit tier started"
    block()


_CLI_CHILD = """
import sys
sys.path.insert(0, {support!r})
from support.notorch import block, view_modules
block(prefixes=view_modules())
sys.argv = ["attnscope", *sys.argv[1:]]
from attnscope.cli import main
main()
"""


def _env(**env: str) -> dict[str, str]:
    full = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    full.pop("ATTNSCOPE_DEBUG", None)
    return full


def run_cli_without_torch(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``attnscope ARGS`` in a child where torch, transformers and the views cannot be imported."""
    code = _CLI_CHILD.format(support=str(ROOT / "tests"))
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=_env(**env), cwd=ROOT, timeout=120
    )


def imported(
    code: str, watch: tuple[str, ...] = HEAVY, **env: str
) -> tuple[list[str], subprocess.CompletedProcess[str]]:
    """Run ``code`` in a fresh process; which of ``watch`` it left in ``sys.modules`` (and the run).

    ``code`` may end the process with ``SystemExit``: the modules are read after it either way."""
    wrapped = (
        "import json, sys\n"
        f"try:\n    exec(compile({code!r}, '<code>', 'exec'))\n"
        "except SystemExit as e:\n    assert not e.code, e.code\n"
        f"print('\\nIMPORTED ' + json.dumps([m for m in {list(watch)!r} if m in sys.modules]))\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", wrapped], capture_output=True, text=True, env=_env(**env), cwd=ROOT, timeout=120
    )
    assert res.returncode == 0, res.stderr
    last = res.stdout.rstrip().splitlines()[-1]
    assert last.startswith("IMPORTED "), res.stdout
    return json.loads(last.removeprefix("IMPORTED ")), res


def one_line(res: subprocess.CompletedProcess[str], code: int) -> str:
    """The child failed cleanly: exit ``code``, empty stdout, one ``attnscope: error:`` line."""
    assert res.returncode == code, res.stderr
    assert res.stdout == ""
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("attnscope: error: "), lines
    return lines[0]
