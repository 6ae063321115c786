"""What a command reads besides its options: the prompt (or stdin) and a --messages file.

Both are read and checked before any model is loaded; a bad one is one error line.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from attnscope.errors import AttnscopeError, ExitCode


def read_prompt(prompt: str) -> str:
    """The prompt itself, or stdin for '-'; strict UTF-8. An empty prompt is refused here,
    before any model is loaded."""
    if prompt != "-":
        if not prompt.strip():
            raise AttnscopeError("the prompt is empty")
        return prompt
    data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AttnscopeError(f"stdin is not valid UTF-8 (byte {exc.start})") from None
    if not text.strip():
        raise AttnscopeError("the prompt read from stdin is empty")
    return text.rstrip("\n")


def read_messages(path: str | None) -> Any:
    """The messages of a --messages file (``list[Message]``), or None without one."""
    if path is None:
        return None
    from attnscope.core.prompt.segments import parse_messages

    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise AttnscopeError(f"--messages {path}: {exc.strerror}", ExitCode.INPUT_FILE) from None
    try:
        doc = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise AttnscopeError(f"--messages {path}: not UTF-8 (byte {exc.start})", ExitCode.INPUT_FILE) from None
    except json.JSONDecodeError as exc:
        raise AttnscopeError(
            f"--messages {path}: not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})", ExitCode.INPUT_FILE
        ) from None
    try:
        return parse_messages(doc, f"--messages {path}")
    except AttnscopeError as exc:
        raise AttnscopeError(exc.message, ExitCode.INPUT_FILE) from None


def read_lines(path: str, flag: str) -> list[str]:
    """The non-empty lines of a UTF-8 file, one prompt each (``--mean-over``)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise AttnscopeError(f"{flag} {path}: {exc.strerror}", ExitCode.INPUT_FILE) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AttnscopeError(f"{flag} {path}: not UTF-8 (byte {exc.start})", ExitCode.INPUT_FILE) from None
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise AttnscopeError(f"{flag} {path}: the file holds no prompts", ExitCode.INPUT_FILE)
    return lines
