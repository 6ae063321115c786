"""A pytest plugin (``-p support.notorch``) and an import hook that make torch and transformers
unimportable: the unit tier runs under it, and the pre-torch checks of the CLI run under the hook.

``NO_TORCH`` is the same hook as Python source, for a child process that must run without them.
"""

from __future__ import annotations

import sys
from importlib.abc import MetaPathFinder
from typing import Any

HEAVY = ("torch", "transformers")


class NoTorch(MetaPathFinder):
    """Refuses ``torch`` and ``transformers`` (and any top-level name in ``blocked``)."""

    def __init__(self, blocked: tuple[str, ...] = HEAVY, prefixes: tuple[str, ...] = ()) -> None:
        self.blocked, self.prefixes = blocked, prefixes

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name.split(".")[0] in self.blocked or any(name == p or name.startswith(p + ".") for p in self.prefixes):
            raise ImportError(f"{name} imported where it must not be")
        return None


def block(blocked: tuple[str, ...] = HEAVY, prefixes: tuple[str, ...] = ()) -> None:
    sys.meta_path.insert(0, NoTorch(blocked, prefixes))


def pytest_configure(config: Any) -> None:
    bad = [name for name in HEAVY if name in sys.modules]
    assert not bad, f"{bad} imported before the unit tier started"
    block()
