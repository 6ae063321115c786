"""The terminal of one run: the language of its stderr lines, its progress line, its output.

One :class:`Terminal` is made per command run (by ``cli.command.command``) and handed to the
option groups and to any command that asks for one, so nothing about a run lives in a
process-wide global. Importing this module stays cheap (no torch, no transformers, no rich):
it is on the ``--help`` path.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any


class Terminal:
    """This run's stderr and stdout.

    ``lang`` is the run's --lang: stderr lines are worded in it, or in $ATTNSCOPE_LANG (else
    English) when it is None or not a language (a bad --lang is left for its own check to
    report). A progress line is transient: shown only on a terminal, cut to its width, erased
    before any line that stays.
    """

    def __init__(self, lang: str | None = None) -> None:
        self._lang = lang
        self._progress_shown = False

    @property
    def lang(self) -> Any:
        """The language of this run's stderr lines (``render.i18n.Lang``)."""
        from attnscope.errors import AttnscopeError
        from attnscope.render.i18n import LANGS, default_lang

        if self._lang in LANGS:
            return self._lang
        try:
            return default_lang()
        except AttnscopeError:  # a bad $ATTNSCOPE_LANG is reported where the view needs it
            return "en"

    def worded(self, message: Said | str) -> str:
        """A line from loading in the reader's language: an ``attnscope.model.Said`` is worded from
        the catalogue (``progress.KEY``); any other line is printed as it is."""
        from attnscope.model.said import Said

        if not isinstance(message, Said):
            return message
        from attnscope.render.i18n import progress_line

        return progress_line(self.lang, message.key, message.values)

    def clear(self) -> None:
        """Erase the progress line, if one is shown."""
        if self._progress_shown:
            sys.stderr.write("\r\x1b[2K")
            sys.stderr.flush()
            self._progress_shown = False

    def line(self, message: str) -> None:
        """One line on stderr that stays (the progress line is erased first)."""
        self.clear()
        sys.stderr.write(message.rstrip("\n") + "\n")
        sys.stderr.flush()

    def say(self, message: Said | str) -> None:
        """A notice or warning from loading, worded, as one stderr line."""
        self.line(f"attnscope: {self.worded(message)}")

    def progress(self, message: Said | str) -> None:
        """Loading progress: one transient line on a terminal, erased before any output;
        nothing at all when stderr is not a terminal, so an error stays the only line there.

        The line is cut to the terminal's width (in the middle, so a path keeps its file name):
        a line that wrapped would leave its first rows on screen when it is erased.
        """
        if not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty()):
            return
        from attnscope.render.fit import middle

        line = middle(f"attnscope: {' '.join(self.worded(message).split())}", max(self.columns() - 1, 10))
        sys.stderr.write(f"\r\x1b[2K{line}")
        sys.stderr.flush()
        self._progress_shown = True

    @staticmethod
    def columns() -> int:
        """The width of the terminal stderr writes to (80 when it cannot say)."""
        try:
            columns = os.get_terminal_size(sys.stderr.fileno()).columns
        except (OSError, ValueError):
            columns = 80
        return columns if columns >= 20 else 80  # a pty that never set its size reports 0


if TYPE_CHECKING:
    from attnscope.model.said import Said


def argv_lang(argv: list[str]) -> Any:
    """The language of a run whose options were not parsed (a usage error): ``--lang X`` or
    ``--lang=X`` on the command line, else $ATTNSCOPE_LANG, else English."""
    value: str | None = None
    for i, arg in enumerate(argv):
        if arg == "--lang" and i + 1 < len(argv):
            value = argv[i + 1]
        elif arg.startswith("--lang="):
            value = arg.partition("=")[2]
    return Terminal(value).lang


def warning_line(warning: Any, lang: str) -> str:
    """A result's warning in words (a structured ``ResultWarning``, or an older result's sentence)."""
    if isinstance(warning, str):
        return warning
    from attnscope.render.common import warning_text

    return warning_text(lang, warning)  # type: ignore[arg-type]


def write_json(doc: dict[str, Any]) -> None:
    """One JSON document on stdout, in one write, only after everything succeeded."""
    from attnscope.results import json_text

    sys.stdout.write(json_text(doc))
    sys.stdout.flush()
