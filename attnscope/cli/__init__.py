"""The ``attnscope`` command line: a Typer app whose commands live one per module.

Only option parsing and printing happen here; each command calls the core and prints
its result in exactly one place (``common.emit``). Importing this package must not
import torch or transformers, so ``--help`` stays fast.
"""

from __future__ import annotations

import importlib

import typer

app = typer.Typer(
    name="attnscope",
    help="Inspect what attention does inside a real Qwen2.5-family model.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

_COMMAND_MODULES = (
    "weights",
    "tokens",
    "mask",
    "heads",
    "matrix",
    "info",
    "render",
    "trace",
    "explain",
    "rope",
    "reuse",
)

for _name in _COMMAND_MODULES:
    try:
        importlib.import_module(f"attnscope.cli.{_name}")
    except ModuleNotFoundError as _exc:  # a command not built yet
        if _exc.name != f"attnscope.cli.{_name}":
            raise


def main() -> None:
    """Entry point: usage errors from option parsing become one line, like every other error."""
    import sys

    try:  # typer vendors its own click
        from typer._click import exceptions as click_exc
    except ImportError:  # pragma: no cover - older typer uses click itself
        from click import exceptions as click_exc  # type: ignore[no-redef]

    try:
        code = app(prog_name="attnscope", standalone_mode=False)
    except click_exc.NoArgsIsHelpError as exc:
        sys.stdout.write(exc.ctx.get_help() + "\n")
        raise SystemExit(0) from None
    except click_exc.UsageError as exc:
        sys.stderr.write(f"attnscope: error: {' '.join(exc.format_message().split())} (see --help)\n")
        raise SystemExit(2) from None
    except KeyboardInterrupt:
        sys.stderr.write("attnscope: interrupted\n")
        raise SystemExit(130) from None
    raise SystemExit(code if isinstance(code, int) else 0)
