"""The ``attnscope`` command line: a Typer app whose commands live one per module.

Only option parsing and printing happen here; each command calls the core and prints
its result in exactly one place (``options.Output.emit``). The commands are registered from
the command table (``attnscope.commands``), in its order. Importing this package must not
import torch or transformers, so ``--help`` stays fast.
"""

from __future__ import annotations

import typer

from attnscope.version import __version__

app = typer.Typer(
    name="attnscope",
    help="Inspect what attention does inside a real Qwen2.5-family model.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"attnscope {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", help="Print the attnscope version and exit.", is_eager=True, callback=_print_version
    ),
) -> None:
    """Inspect what attention does inside a real Qwen2.5-family model."""


def _register() -> None:
    """Register every command of the table under its name, in the table's order (--help's)."""
    from attnscope.commands import COMMANDS, resolve

    for row in COMMANDS:
        app.command(row.name)(resolve(row.cli))


_register()

__all__ = ["app", "main"]


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
        from attnscope.cli.terminal import argv_lang
        from attnscope.cli.usage import usage_text
        from attnscope.render.i18n import error_line

        lang = argv_lang(sys.argv[1:])
        sys.stderr.write(error_line(lang, usage_text(lang, exc), usage=True) + "\n")
        raise SystemExit(2) from None
    except KeyboardInterrupt:
        from attnscope.cli.terminal import argv_lang
        from attnscope.render.i18n import t

        sys.stderr.write(t(argv_lang(sys.argv[1:]), "errors.interrupted") + "\n")
        raise SystemExit(130) from None
    raise SystemExit(code if isinstance(code, int) else 0)
