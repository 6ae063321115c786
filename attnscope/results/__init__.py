"""Result types: frozen dataclasses of plain Python data, and their JSON form.

Every command's core returns one result object. The JSON output and the human
view are both made from that same object, and ``attnscope render`` rebuilds it
from JSON with :func:`from_json`. Results hold lists, ints, floats, strings and
nested result dataclasses only; no tensors. A field named in the class's ``ARRAYS``
may also hold a numpy array where its annotation says so (the JSON holds it as nested
lists all the same). Floats are never rounded here.

A result class names its array fields in ``ARRAYS``; with an arrays sink, ``to_json``
writes those to a safetensors or npz file and a reference in their place, and ``from_json``
reads them back (:mod:`attnscope.results.arrays`).

The numbers a result derives from its raw values are computed in one place,
:mod:`attnscope.results.derive` (numpy, no torch), and :mod:`attnscope.results.check`
compares a saved document with them. Nothing in this package prints.
"""

from __future__ import annotations

import dataclasses
import os
import types
import typing
from typing import Any, ClassVar, Literal, TypeVar, Union, get_args, get_origin

from attnscope.errors import AttnscopeError

if typing.TYPE_CHECKING:
    from attnscope.results.arrays import ArraySink


@dataclasses.dataclass(frozen=True)
class Result:
    """Base of every top-level result; subclasses set ``SCHEMA`` (e.g. ``attnscope.weights/1``)."""

    SCHEMA: ClassVar[str] = ""
    # The fields that are arrays of numbers, as paths: "weights" is a field, "steps[].weights" the
    # weights of every item of steps. With --arrays they go to the arrays file (results/arrays.py).
    ARRAYS: ClassVar[tuple[str, ...]] = ()

    def to_json(self, arrays: ArraySink | None = None) -> dict[str, Any]:
        """The JSON document: ``schema`` and ``attnscope_version`` first, then every field, floats
        unrounded. With ``arrays``, each field named in ``ARRAYS`` goes into the sink and a reference
        takes its place; the ``arrays`` header after ``attnscope_version`` names the file and the keys."""
        from attnscope.version import __version__

        out: dict[str, Any] = {"schema": self.SCHEMA, "attnscope_version": __version__}
        body = _to_plain(self, arrays=arrays is not None)
        if arrays is not None:
            from attnscope.results.arrays import move_out

            move_out(body, self.ARRAYS, arrays)
            out["arrays"] = arrays.header()
        out.update(body)
        return out


def json_text(doc: dict[str, Any]) -> str:
    """A JSON document as the CLI prints it with ``--json``: one line, non-ASCII kept, then a newline."""
    import json

    return json.dumps(doc, ensure_ascii=False) + "\n"


def json_name(f: dataclasses.Field[Any]) -> str:
    """A field's key in JSON: its name, or ``metadata["json"]`` where the key is a Python keyword (``from``)."""
    name: str = f.metadata.get("json", f.name)
    return name


# What a list of plain values holds: such a list is copied whole instead of item by item (a
# result's lists hold one type each, so the first item says what the rest are).
_PLAIN_ITEMS = (float, int, str, bool)


def _to_plain(obj: Any, arrays: bool = False) -> Any:
    """``obj`` as JSON values. A numpy array (in an ARRAYS field) becomes nested lists, or with
    ``arrays`` stays as it is, for an arrays sink to take without a copy."""
    if isinstance(obj, (list, tuple)):
        if obj and type(obj[0]) in _PLAIN_ITEMS:
            return list(obj)
        return [_to_plain(x, arrays) for x in obj]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {json_name(f): _to_plain(getattr(obj, f.name), arrays) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {k: _to_plain(v, arrays) for k, v in obj.items()}
    if hasattr(obj, "dtype") and hasattr(obj, "tolist"):  # a numpy array (or scalar) in an ARRAYS field
        return obj if arrays and getattr(obj, "ndim", 0) > 0 else obj.tolist()
    return obj


T = TypeVar("T")


def _from_plain(tp: Any, value: Any, where: str) -> Any:
    """``value`` read from JSON as the annotation ``tp``; raises AttnscopeError naming ``where``."""
    reader = _READERS.get(get_origin(tp))
    if reader is not None:
        return reader(tp, value, where)
    if dataclasses.is_dataclass(tp):
        return _from_dataclass(tp, value, where)
    if tp in _SCALARS:
        return _from_scalar(tp, value, where)
    return value  # Any


def _from_literal(tp: Any, value: Any, where: str) -> Any:
    if value not in get_args(tp):
        raise _bad(where, " or ".join(repr(a) for a in get_args(tp)))
    return value


def _from_optional(tp: Any, value: Any, where: str) -> Any:
    """``X | None``: None stays None, anything else is read as the first non-None member."""
    if value is None:
        return None
    args = [a for a in get_args(tp) if a is not type(None)]
    return _from_plain(args[0], value, where)


def _from_list(tp: Any, value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise AttnscopeError("expected_list", where=where)
    (inner,) = get_args(tp)[:1]
    exact = _EXACT.get(inner)
    if exact is not None and all(type(v) is exact for v in value):
        return list(value)  # the common case, without a call per number
    return [_from_plain(inner, v, f"{where}[{i}]") for i, v in enumerate(value)]


def _from_dict(tp: Any, value: Any, where: str) -> dict[str, Any]:
    """An object; with ``dict[str, X]`` each value is read as ``X`` (a nested result, say)."""
    if not isinstance(value, dict):
        raise _bad(where, "an object")
    args = get_args(tp)
    if len(args) != 2:
        return value
    return {k: _from_plain(args[1], v, f"{where}.{k}") for k, v in value.items()}


def _from_dataclass(tp: Any, value: Any, where: str) -> Any:
    """A nested result: every field read with its own annotation; a missing field needs a default."""
    if not isinstance(value, dict):
        raise _bad(where, "an object")
    hints = typing.get_type_hints(tp)
    kwargs = {}
    for f in dataclasses.fields(tp):
        key = json_name(f)
        if key in value:
            kwargs[f.name] = _from_plain(hints[f.name], value[key], f"{where}.{key}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise AttnscopeError("missing_field", where=where, name=f"'{key}'")
    return tp(**kwargs)


# Readers of the generic annotations, by their origin (``get_origin``).
_READERS: dict[Any, typing.Callable[[Any, Any, str], Any]] = {
    Literal: _from_literal,
    Union: _from_optional,
    types.UnionType: _from_optional,
    list: _from_list,
    tuple: _from_list,
    dict: _from_dict,
}

# The scalar annotations: the JSON values each accepts and what the error says it expected.
# A JSON true/false is a bool only, never a number.
_SCALARS: dict[Any, tuple[tuple[type, ...], str]] = {
    float: ((int, float), "a number"),
    int: ((int,), "an integer"),
    bool: ((bool,), "true or false"),
    str: ((str,), "a string"),
}


# The annotations whose JSON values need no conversion when they have exactly this type.
_EXACT: dict[Any, type] = {float: float, int: int, str: str}


def _from_scalar(tp: Any, value: Any, where: str) -> Any:
    accepts, what = _SCALARS[tp]
    ok = isinstance(value, accepts) and (tp is bool or not isinstance(value, bool))
    if not ok:
        raise _bad(where, what)
    return float(value) if tp is float else value


def _bad(where: str, what: str) -> AttnscopeError:
    return AttnscopeError("expected", where=where, what=what)


def result_types() -> dict[str, type[Result]]:
    """Every schema name and its result class (from the command table, ``attnscope.commands``)."""
    from attnscope.results.registry import RESULT_TYPES

    return {cls.SCHEMA: cls for cls in RESULT_TYPES}


def from_json(doc: Any, folder: str | os.PathLike[str] | None = None) -> Result:
    """Rebuild a result from its JSON document; raises AttnscopeError when it is not one.

    A document written with an arrays file (its ``arrays`` header) reads its arrays from that
    file: its name is absolute or relative to ``folder``, the document's folder (None: the
    current folder)."""
    if not isinstance(doc, dict) or "schema" not in doc:
        raise AttnscopeError("no_schema")
    from attnscope.results.arrays import inline
    from attnscope.results.upgrade import upgrade

    doc = upgrade(inline(doc, folder))
    registry = result_types()
    schema = doc["schema"]
    if schema not in registry:
        known = ", ".join(sorted(registry))
        raise AttnscopeError("unknown_schema", schema=repr(schema), known=known)
    cls = registry[schema]
    body = {k: v for k, v in doc.items() if k not in ("schema", "attnscope_version", "arrays")}
    result: Result = _from_plain(cls, body, schema)
    return result
