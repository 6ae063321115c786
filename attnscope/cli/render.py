"""``attnscope render``: draw a saved JSON result again, with no model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from attnscope.cli import app
from attnscope.cli.common import Output, handle_errors, option_groups


def read_result(path: str) -> Any:
    """The result saved in ``path`` (a file written by any command's --json, or - for stdin)."""
    import sys

    from attnscope.errors import AttnscopeError, ExitCode
    from attnscope.results import from_json

    name = "stdin" if path == "-" else path
    try:
        data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except FileNotFoundError:
        raise AttnscopeError(f"{path}: no such file", ExitCode.INPUT_FILE) from None
    except IsADirectoryError:
        raise AttnscopeError(f"{path}: is a folder, not a JSON file", ExitCode.INPUT_FILE) from None
    except OSError as exc:
        raise AttnscopeError(f"{path}: cannot read ({exc.strerror})", ExitCode.INPUT_FILE) from None
    if not data.strip():
        raise AttnscopeError(f"{name}: empty file; expected the JSON from an attnscope --json run", ExitCode.INPUT_FILE)
    try:
        doc = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise AttnscopeError(f"{name}: not UTF-8 text (byte {exc.start})", ExitCode.INPUT_FILE) from None
    except json.JSONDecodeError as exc:
        body = data.strip()
        cut = " (the file looks truncated)" if body[:1] in (b"{", b"[") and body[-1:] not in (b"}", b"]") else ""
        raise AttnscopeError(
            f"{name}: not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}{cut}", ExitCode.INPUT_FILE
        ) from None
    try:
        return from_json(doc)
    except AttnscopeError as exc:
        raise AttnscopeError(f"{name}: {exc.message}", ExitCode.INPUT_FILE) from None
    except (TypeError, ValueError) as exc:
        raise AttnscopeError(f"{name}: not a valid attnscope result ({exc})", ExitCode.INPUT_FILE) from None


@app.command("render")
@handle_errors
@option_groups
def render_cmd(
    file: Annotated[str, typer.Argument(help="A JSON file written by any attnscope command's --json (- for stdin).")],
    out: Output,
) -> None:
    """Draw a saved --json result again (weights, heads, mask, matrix, tokens, info, ...): no model needed."""
    from attnscope.core.consistency import problem
    from attnscope.errors import AttnscopeError, ExitCode

    result = read_result(file)
    try:
        bad = problem(result)
    except (IndexError, KeyError, ValueError, TypeError, RuntimeError) as exc:
        bad = f"the raw values do not fit their shapes ({type(exc).__name__}: {exc})"
    if bad:
        name = "stdin" if file == "-" else file
        raise AttnscopeError(
            f"{name}: {bad}; the derived numbers disagree with the raw values (was it edited?)", ExitCode.INPUT_FILE
        )
    try:
        out.emit(result)
    except (IndexError, KeyError, ValueError, TypeError, ZeroDivisionError) as exc:
        raise AttnscopeError(
            f"{file}: the result's fields do not fit together ({type(exc).__name__}: {exc}); was it edited?",
            ExitCode.INPUT_FILE,
        ) from None
