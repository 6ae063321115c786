"""What a command reads besides its options: the prompt (or stdin) and a --messages file.

Both are read and checked before any model is loaded; a bad one is one error line.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from attnscope.errors import AttnscopeError, os_error


def read_prompt(prompt: str) -> str:
    """The prompt itself, or stdin for '-'; strict UTF-8. An empty prompt is refused here,
    before any model is loaded."""
    if prompt != "-":
        if not prompt.strip():
            raise AttnscopeError("prompt_empty")
        return prompt
    data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AttnscopeError("stdin_utf8", n=exc.start) from None
    if not text.strip():
        raise AttnscopeError("stdin_empty")
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
        raise os_error("messages", path, exc) from None
    try:
        doc = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise AttnscopeError("messages_utf8", arg="messages", path=path, n=exc.start) from None
    except json.JSONDecodeError as exc:
        raise AttnscopeError("messages_json", path=path, why=exc.msg, line=exc.lineno, col=exc.colno) from None
    try:
        return parse_messages(doc, f"--messages {path}")
    except AttnscopeError as exc:
        raise exc from None


def read_lines(path: str, name: str) -> list[str]:
    """The non-empty lines of a UTF-8 file, one prompt each (``--mean-over``)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise os_error(name, path, exc) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AttnscopeError("messages_utf8", arg=name, path=path, n=exc.start) from None
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise AttnscopeError("prompts_none", arg=name, path=path)
    return lines
