"""The result types, read from the command table: every schema attnscope writes.

``RESULT_TYPES`` holds the result class of every row of ``attnscope.commands.COMMANDS`` that
has one, in the table's order; ``from_json`` and the JSON reference read it. This module
computes nothing.
"""

from __future__ import annotations

from attnscope.commands import COMMANDS, resolve
from attnscope.results import Result

RESULT_TYPES: tuple[type[Result], ...] = tuple(resolve(row.result) for row in COMMANDS if row.result is not None)
