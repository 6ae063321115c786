"""The one error type a user can cause, and the exit codes the CLI returns.

Every module raises :class:`AttnscopeError` for bad input (a prompt, an option, a
model that cannot be loaded). The CLI turns it into one line on stderr and the
exit code it carries. Nothing here prints.
"""

from __future__ import annotations

import re
from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    USAGE = 2  # bad option values, bad prompt, bad query (typer also uses 2)
    MODEL = 3  # model cannot be found, loaded or captured
    RESOURCE = 4  # not enough memory, device missing
    NUMERIC = 5  # NaN or inf in captured numbers, a failed self-check
    INPUT_FILE = 6  # a batch input or a render file is malformed


class AttnscopeError(Exception):
    """A user-facing error: its message is printed as one line, with ``code`` as exit status."""

    def __init__(
        self, message: str, code: ExitCode = ExitCode.USAGE, *, option: str | None = None, cli: str | None = None
    ) -> None:
        super().__init__(message)
        self.message = " ".join(message.split())  # always one line, in the core's own terms
        self.code = code
        self.option = option  # the core's name of the value at fault ("layer", "query_agg")
        self.cli = " ".join(cli.split()) if cli else None  # the whole line in the CLI's terms, where it differs more

    def cli_message(self) -> str:
        """The line the CLI prints: ``cli`` when given, else the message with the value's name
        at its start (or after ``line N: ``) written as the flag (``layer 99 ...`` -> ``--layer 99 ...``)."""
        if self.cli:
            return self.cli
        if self.option:
            flag = "--" + self.option.replace("_", "-")
            return re.sub(
                rf"(^|: ){re.escape(self.option)}(?=[ :])", lambda m: m.group(1) + flag, self.message, count=1
            )
        return self.message

    def __str__(self) -> str:
        return self.message
