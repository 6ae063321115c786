"""How a failure ends a run: one line on stderr and an exit status.

An ``AttnscopeError`` exits with its own code; running out of memory exits 4; a closed stdout
(``| head``) exits 0 quietly; anything else is an internal error, exit 70, with its traceback
only under $ATTNSCOPE_DEBUG.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import typer

from attnscope.cli.terminal import Terminal
from attnscope.errors import AttnscopeError, ExitCode

T = TypeVar("T")

INTERNAL = 70  # EX_SOFTWARE


def run_mapped(terminal: Terminal, call: Callable[[], T]) -> T:
    """``call()``, with every failure turned into one stderr line and an exit status (worded in
    the run's language; the catalogue is imported only when a run fails)."""
    try:
        return call()
    except AttnscopeError as exc:
        from attnscope.cli.flags import cli_text
        from attnscope.render.i18n import error_line

        terminal.line(error_line(terminal.lang, cli_text(exc, terminal.lang)))
        raise typer.Exit(int(exc.code)) from None
    except (typer.Exit, typer.Abort, KeyboardInterrupt):
        raise
    except BrokenPipeError:
        _silence_stdout()
        raise typer.Exit(0) from None
    except MemoryError:
        from attnscope.render.i18n import error_line, t

        terminal.line(error_line(terminal.lang, t(terminal.lang, "errors.out_of_memory")))
        raise typer.Exit(int(ExitCode.RESOURCE)) from None
    except Exception as exc:
        from attnscope.render.i18n import error_line, t

        if type(exc).__name__ == "OutOfMemoryError":
            terminal.line(error_line(terminal.lang, t(terminal.lang, "errors.out_of_memory_device", detail=exc)))
            raise typer.Exit(int(ExitCode.RESOURCE)) from None
        if os.environ.get("ATTNSCOPE_DEBUG"):
            raise
        detail = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
        terminal.line(t(terminal.lang, "errors.internal", detail=detail))
        raise typer.Exit(INTERNAL) from None
    finally:
        terminal.clear()


def fail_if_not_ok(terminal: Terminal, result: Any, what: str) -> None:
    """After the result is printed: a failed self-check (``result.ok`` false) exits 5 with one line on stderr."""
    if not result.ok:
        terminal.line(f"attnscope: check failed: {what}")
        raise typer.Exit(int(ExitCode.NUMERIC))


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
