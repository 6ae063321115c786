"""Generate docs/json-reference.md from the result dataclasses.

The reference lists every schema in ``attnscope.results.registry.RESULT_TYPES``: its
fields, their JSON types and what they mean, read from the class docstrings, attribute
docstrings and the ``# comments`` on the field lines. Nested result types get a section of
their own, written once and linked wherever they appear. The output depends on the code
only (no version number, no date), so a test can compare it with the committed copy.

Run: ``python -m attnscope.devtools.json_reference > docs/json-reference.md``
(``--check`` compares instead of printing). This module is not imported by the CLI.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import inspect
import io
import sys
import textwrap
import tokenize
import types
import typing
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from attnscope.results import json_name

COMMAND = "python -m attnscope.devtools.json_reference > docs/json-reference.md"
OUTPUT = Path("docs/json-reference.md")


# Fields that mean the same in every schema (the contract: one concept, one shape). Used only where
# the code itself says nothing about a field; a comment on the field in the code wins.
GLOSSARY: dict[str, str] = {
    "model": "the model the result came from",
    "text": "the text the model read (after the chat template, with `--chat`)",
    "chat": "the chat template was applied (`--chat`)",
    "tokens": "every token of `text`, in order",
    "words": "the whitespace-separated words of `text` (a special token is a word of its own)",
    "layers": "the layer indices selected",
    "heads": "the query head indices selected",
    "layer": "a layer index (0-based)",
    "head": "a query head index (0-based)",
    "kv_head": "the KV head that this query head reads: `head // (num_attention_heads // num_key_value_heads)`",
    "warnings": "what the view warns about, as codes with their data (also printed on stderr)",
    "tolerance": "the bar a difference must stay under for a check to pass",
    "ok": "every check passed (else the command exits with status 5)",
    "index": "a position (0-based)",
    "id": "the token id in the model's vocabulary",
    "num_hidden_layers": "layers stacked (the HF config name)",
    "num_attention_heads": "query heads per layer (the HF config name)",
    "num_key_value_heads": "K/V heads per layer (the HF config name)",
    "head_dim": "size of one head's q/k/v",
    "dtype": "the dtype the model ran in",
    "device": "where the model ran (`cpu`, `cuda:0`, `device_map=auto`, ...)",
    "model_type": "the HF `model_type` (`qwen2`, ...; a GGUF's `general.architecture`)",
}


def _anchor(cls: type) -> str:
    module = cls.__module__.rsplit(".", 1)[-1]
    return f"{module}-{cls.__name__}".lower()


def _field_docs(cls: type) -> dict[str, str]:
    """Field name -> its documentation: comment lines above it, the comment on its line, and the
    string literal right after it (an attribute docstring), in that order."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    comments = _comments(source)
    lines = source.splitlines()
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.ClassDef)
    docs: dict[str, str] = {}
    for i, stmt in enumerate(node.body):
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        next_stmt = node.body[i + 1] if i + 1 < len(node.body) else None
        parts = _comments_above(stmt, lines, comments) + _comments_on(stmt, lines, comments)
        parts += _docstring(next_stmt)
        if parts:
            docs[stmt.target.id] = " ".join(parts)
    return docs


def _comments(source: str) -> dict[int, str]:
    """Line number -> the text of the comment on that line (without ``#``)."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return {tok.start[0]: tok.string.lstrip("#").strip() for tok in tokens if tok.type == tokenize.COMMENT}


def _is_comment_line(lines: list[str], line: int) -> bool:
    return lines[line - 1].strip().startswith("#")


def _comments_above(stmt: ast.stmt, lines: list[str], comments: dict[int, str]) -> list[str]:
    """The full-line comments right above a statement, top to bottom (empty ones dropped)."""
    line = stmt.lineno - 1
    while line >= 1 and _is_comment_line(lines, line):
        line -= 1
    return [text for ln in range(line + 1, stmt.lineno) if (text := comments.get(ln, ""))]


def _comments_on(stmt: ast.stmt, lines: list[str], comments: dict[int, str]) -> list[str]:
    """The trailing comments on the lines a statement spans."""
    end = stmt.end_lineno or stmt.lineno
    return [comments[ln] for ln in range(stmt.lineno, end + 1) if ln in comments and not _is_comment_line(lines, ln)]


def _docstring(stmt: ast.stmt | None) -> list[str]:
    """An attribute docstring: ``stmt`` when it is a bare string literal, whitespace folded."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
        return [" ".join(stmt.value.value.split())]
    return []


def _doc(cls: type) -> str:
    doc = cls.__dict__.get("__doc__") or ""
    if doc.startswith(cls.__name__ + "("):  # dataclass's generated signature, not a docstring
        return ""
    return inspect.cleandoc(doc).replace("``", "`")


def _type(tp: Any, nested: list[type]) -> str:
    """The JSON form of a Python annotation, with links to nested result types (added to ``nested``)."""
    if tp is type(None):
        return "null"
    writer = _GENERIC_TYPES.get(get_origin(tp))
    if writer is not None:
        return writer(tp, nested)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return " \\| ".join(f'`"{m.value}"`' if isinstance(m.value, str) else f"`{m.value}`" for m in tp)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if tp not in nested:
            nested.append(tp)
        return f"[{tp.__name__}](#{_anchor(tp)})"
    return _PLAIN_TYPES.get(tp, str(tp))


def _in_memory_only(tp: Any) -> bool:
    """A numpy array annotation: a field may hold one in memory, but its JSON is nested lists."""
    return getattr(get_origin(tp) or tp, "__name__", "") == "ndarray"


def _union_type(tp: Any, nested: list[type]) -> str:
    args = [a for a in get_args(tp) if not _in_memory_only(a)]
    if len(args) == 1:
        return _type(args[0], nested)
    text = " or ".join(_type(a, nested) for a in args if a is not type(None))
    return text + " or null" if type(None) in args else text


def _literal_type(tp: Any, nested: list[type]) -> str:
    return " \\| ".join(f'`"{a}"`' if isinstance(a, str) else f"`{a!r}`".lower() for a in get_args(tp))


def _list_type(tp: Any, nested: list[type]) -> str:
    """A list, or a tuple of one repeated type, is "list of X"; a tuple of mixed types lists them."""
    items = [a for a in get_args(tp) if a is not Ellipsis]
    if get_origin(tp) is tuple and len(items) > 1 and len(set(items)) > 1:
        return "[" + ", ".join(_type(a, nested) for a in items) + "]"
    return "list of " + (_type(items[0], nested) if items else "any")


def _dict_type(tp: Any, nested: list[type]) -> str:
    args = get_args(tp)
    return "object of " + (_type(args[1], nested) if len(args) == 2 else "any")


# Writers of the generic annotations, by their origin (``get_origin``).
_GENERIC_TYPES: dict[Any, typing.Callable[[Any, list[type]], str]] = {
    Union: _union_type,
    types.UnionType: _union_type,
    Literal: _literal_type,
    list: _list_type,
    tuple: _list_type,
    dict: _dict_type,
}

_PLAIN_TYPES: dict[Any, str] = {int: "int", float: "float", str: "string", bool: "bool", Any: "any"}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _fields_table(cls: type, nested: list[type], top: bool) -> list[str]:
    hints = typing.get_type_hints(cls)
    docs = _field_docs(cls)
    for base in cls.__mro__[1:]:
        if dataclasses.is_dataclass(base):
            docs = {**_field_docs(base), **docs}
    out = ["| field | type | meaning |", "|---|---|---|"]
    if top:
        schema = getattr(cls, "SCHEMA", "")
        out.append(f'| `schema` | string | `"{schema}"` |')
        out.append("| `attnscope_version` | string | the attnscope version that wrote the document |")
    for f in dataclasses.fields(cls):
        tp = _type(hints[f.name], nested)
        optional = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        meaning = docs.get(f.name) or GLOSSARY.get(f.name, "")
        if optional:
            tp += " (optional)"
        out.append(f"| `{json_name(f)}` | {_cell(tp)} | {_cell(meaning.replace('``', '`'))} |")
    return out


ARRAYS_SECTION = [
    '<a id="arrays-reference"></a>',
    "",
    "## Arrays in a file of their own (`--arrays`)",
    "",
    "The commands whose results hold arrays (each schema below lists its arrays) take",
    "`--arrays FILE.safetensors` or `--arrays FILE.npz`. The arrays are written to that file, and",
    "the JSON document holds the rest, with a reference object in place of each array and a",
    "header right after `attnscope_version`. The command's own schema is the same as without",
    "`--arrays`; the reference form has a version of its own, `attnscope.arrays/1`:",
    "",
    "| field | type | meaning |",
    "|---|---|---|",
    '| `arrays.schema` | string | `"attnscope.arrays/1"` |',
    "| `arrays.file` | string | the arrays file: an absolute path, or relative to the JSON document's folder |",
    '| `arrays.format` | `"safetensors"` \\| `"npz"` | the file\'s format |',
    "| `arrays.keys` | list of string | every array's key in the file |",
    "",
    'A reference is `{"array": KEY, "dtype": "float32", "shape": [...]}`. A key is the',
    "field's path with each list index written out: `weights`, `steps.3.weights`,",
    "`scores.sink`. An array is stored as float32 when every value is exactly a float32 (the",
    "captured rows are), else as float64, and as int64 for integers, so reading it back gives",
    "exactly the inline document. A null or empty array stays inline; nulls inside an array are",
    'stored as NaN, and the reference then names a mask array (`"nulls": "KEY.nulls"`, uint8, 1',
    "where the value was null), so they come back as nulls. The file also holds the",
    "reference document itself (safetensors: metadata entry `attnscope`; npz: array",
    "`__attnscope__`), so `attnscope render FILE.safetensors` draws it alone.",
    "`attnscope.load_arrays(doc)` returns the arrays by key, `attnscope.from_json(doc, folder)` the",
    "result with its arrays read back, and plain `safetensors.numpy.load_file` or `numpy.load`",
    "read the file too.",
    "",
]


def generate() -> str:
    """The whole Markdown reference, as a string."""
    from attnscope.results.registry import RESULT_TYPES
    from attnscope.results.upgrade import STEPS

    out = [
        "# JSON reference",
        "",
        f"<!-- Generated by `{COMMAND}`; do not edit by hand. -->",
        "",
        "Every `--json` output is one JSON document on one line. It starts with `schema` (the result",
        "type and its version, `attnscope.NAME/N`) and `attnscope_version`. Floats are never rounded.",
        "`attnscope render FILE` draws any of these documents again, and `attnscope.from_json(doc)`",
        "rebuilds the Python result object from one. A field marked *(optional)* has a default: a",
        "document without it still renders.",
        "",
        "Documents of an older version are read too: `attnscope/results/upgrade.py` rewrites them one",
        "version at a time to the current one (the sentences they held are dropped; the view writes",
        "them again from the facts). The older versions read: " + ", ".join(f"`{schema}`" for schema in STEPS) + ".",
        "",
        "This page is generated from the result dataclasses in `attnscope/results/` (their docstrings",
        "and field comments). To change a description, change the code and run",
        "",
        "```bash",
        COMMAND,
        "```",
        "",
        "## Schemas",
        "",
    ]
    for cls in RESULT_TYPES:
        first = _doc(cls).split("\n\n")[0].replace("\n", " ")
        out.append(f"- [`{cls.SCHEMA}`](#{_anchor(cls)})" + (f": {first}" if first else ""))
    out.append("")
    out += ARRAYS_SECTION
    written: set[type] = set()
    for cls in RESULT_TYPES:
        nested: list[type] = []
        out.append(f'<a id="{_anchor(cls)}"></a>')
        out.append("")
        out.append(f"## `{cls.SCHEMA}`")
        out.append("")
        command = cls.SCHEMA.removeprefix("attnscope.").split("/")[0]
        out.append(f"Written by `attnscope {command} --json`; Python: `{cls.__module__}.{cls.__name__}`.")
        doc = _doc(cls)
        if doc:
            out += ["", doc]
        out.append("")
        out += _fields_table(cls, nested, top=True)
        out.append("")
        if cls.ARRAYS:
            names = ", ".join(f"`{path}`" for path in cls.ARRAYS)
            out.append(
                f"Arrays: {names}. With `--arrays FILE`, each is a [reference](#arrays-reference) into that file."
            )
            out.append("")
        i = 0
        while i < len(nested):
            sub = nested[i]
            i += 1
            if sub in written:
                continue
            written.add(sub)
            out.append(f'<a id="{_anchor(sub)}"></a>')
            out.append("")
            out.append(f"### {sub.__name__}")
            out.append("")
            out.append(f"Python: `{sub.__module__}.{sub.__name__}`.")
            doc = _doc(sub)
            if doc:
                out += ["", doc]
            out.append("")
            out += _fields_table(sub, nested, top=False)
            out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    text = generate()
    if args == ["--check"]:
        if not OUTPUT.exists() or OUTPUT.read_text(encoding="utf-8") != text:
            print(f"{OUTPUT} is out of date; run: {COMMAND}", file=sys.stderr)
            return 1
        return 0
    if args:
        print("usage: python -m attnscope.devtools.json_reference [--check]", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
