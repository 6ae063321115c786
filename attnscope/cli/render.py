"""``attnscope render``: draw a saved JSON result again, with no model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from attnscope.cli.command import command
from attnscope.cli.options import ArrayOutput


def read_result(path: str, line: int | None = None) -> Any:
    """The result saved in ``path`` (a file written by any command's --json, or - for stdin);
    with ``line``, the ``line``-th document (1-based, blank lines skipped) of a JSON Lines file
    such as ``weights --input FILE --json`` writes.

    A document written with ``--arrays`` reads its arrays from the file it names (absolute, or
    relative to the document's folder; from stdin, the current folder). ``path`` may also be such
    an arrays file (.safetensors, .npz): it holds its document too."""
    import sys

    from attnscope.errors import AttnscopeError
    from attnscope.results.arrays import FORMATS

    if path != "-" and Path(path).suffix.lower() in FORMATS:
        return _from_arrays_file(Path(path))
    name = "stdin" if path == "-" else path
    try:
        data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except FileNotFoundError:
        raise AttnscopeError("file_missing", path=path) from None
    except IsADirectoryError:
        raise AttnscopeError("file_is_folder", path=path) from None
    except OSError as exc:
        raise AttnscopeError("file_unreadable", path=path, why=exc.strerror) from None
    if not data.strip():
        raise AttnscopeError("file_empty", path=name)
    try:
        doc = _one_document(data.decode("utf-8"), name, line)
    except UnicodeDecodeError as exc:
        raise AttnscopeError("file_utf8", path=name, n=exc.start) from None
    except json.JSONDecodeError as exc:
        lines = _json_lines(data)
        if lines:
            raise AttnscopeError("file_jsonl", path=name, n=lines, m=lines) from None
        body = data.strip()
        cut = body[:1] in (b"{", b"[") and body[-1:] not in (b"}", b"]")
        raise AttnscopeError(
            "file_json_cut" if cut else "file_json", path=name, line=exc.lineno, col=exc.colno, why=exc.msg
        ) from None
    return _rebuilt(doc, name, None if path == "-" else Path(path).parent)


def _rebuilt(doc: Any, name: str, folder: Path | None) -> Any:
    """``from_json`` of ``doc``, its errors prefixed with the file's ``name``."""
    from attnscope.errors import AttnscopeError
    from attnscope.results import from_json

    try:
        return from_json(doc, folder)
    except AttnscopeError as exc:
        raise AttnscopeError("path_prefix", path=name, message=exc) from None
    except (TypeError, ValueError) as exc:
        raise AttnscopeError("file_not_result", path=name, why=exc) from None


def _from_arrays_file(path: Path) -> Any:
    """The result an arrays file holds: its document, with the arrays from the file itself."""
    from attnscope.results.arrays import embedded_document

    doc = embedded_document(path)
    head = doc.get("arrays")
    if isinstance(head, dict):  # the file is read where it is now, whatever name the document gave it
        doc = {**doc, "arrays": {**head, "file": str(path.resolve())}}
    return _rebuilt(doc, str(path), path.parent)


def _json_lines(data: bytes) -> int:
    """How many documents ``data`` holds when each non-blank line is a JSON object of its own, else 0."""
    count = 0
    for raw in data.splitlines():
        if not raw.strip():
            continue
        try:
            if not isinstance(json.loads(raw), dict):
                return 0
        except ValueError:
            return 0
        count += 1
    return count if count > 1 else 0


def _one_document(text: str, name: str, line: int | None) -> Any:
    """The JSON document in ``text``, or with ``line`` its ``line``-th non-blank line's."""
    from attnscope.errors import AttnscopeError

    if line is None:
        return json.loads(text)
    rows = [row for row in text.splitlines() if row.strip()]
    if not 1 <= line <= len(rows):
        raise AttnscopeError("file_line", line=line, path=name, n=len(rows))
    doc = json.loads(rows[line - 1])
    if isinstance(doc, dict):
        doc.pop("input_line", None)  # batch runs add it after the schema
    return doc


@command
def render_cmd(
    file: Annotated[str, typer.Argument(help="A JSON file written by any attnscope command's --json (- for stdin).")],
    line: Annotated[
        int | None,
        typer.Option(
            "--line", help="For a JSON Lines file (weights --input ... --json): render its Nth document.", min=1
        ),
    ] = None,
    *,
    out: ArrayOutput,
) -> None:
    """Draw a saved --json result again (weights, heads, mask, matrix, tokens, info, ...): no model needed."""
    from attnscope.errors import AttnscopeError
    from attnscope.results.check import problem

    result = read_result(file, line)
    try:
        bad = problem(result)
    except (IndexError, KeyError, ValueError, TypeError, RuntimeError) as exc:
        bad = f"the raw values do not fit their shapes ({type(exc).__name__}: {exc})"
    if bad:
        name = "stdin" if file == "-" else file
        raise AttnscopeError("file_edited", path=name, bad=bad)
    try:
        out.emit(result)
    except (IndexError, KeyError, ValueError, TypeError, ZeroDivisionError) as exc:
        raise AttnscopeError("file_fields", path=file, why=f"{type(exc).__name__}: {exc}") from None
