"""Arrays that leave the JSON document: a result's array fields in a safetensors or npz file.

A result class names its array fields in ``ARRAYS``, as paths from the result: ``"weights"``
is a field, ``"steps[].weights"`` the ``weights`` field of every item of the list ``steps``.
``Result.to_json(arrays=sink)`` hands each array to the :class:`ArraySink` under a key (the
path with each item's index: ``steps.3.weights``) and writes a reference in its place::

    {"array": "steps.3.weights", "dtype": "float32", "shape": [24, 14, 259]}

The document then carries, right after ``attnscope_version``, a header naming the file and
every key (the reference form has its own version, ``attnscope.arrays/1``; the result's own
schema is unchanged, since its inline form stays what it was)::

    "arrays": {"schema": "attnscope.arrays/1", "file": "gen.safetensors", "format": "safetensors",
               "keys": ["steps.0.weights", ...]}

``file`` is absolute, or relative to the folder of the JSON document. Each array is stored
as float32 when every value is exactly a float32 (the captured rows are), else as float64,
and as int64 for integers, so :func:`inline` gives back the inline document exactly; nulls inside
an array are stored as NaN and marked in a mask array (the reference's ``nulls`` key). The
arrays file also holds the reference document itself (safetensors: the metadata entry
``attnscope``; npz: the array ``__attnscope__``), so the file alone is enough to draw the
result again. Files are written atomically (``results.files.write_atomic``).
Nothing here imports torch or prints.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from attnscope.errors import AttnscopeError
from attnscope.results.files import check_output, write_atomic

ARRAYS_SCHEMA = "attnscope.arrays/1"
Format = Literal["safetensors", "npz"]
FORMATS: dict[str, Format] = {".safetensors": "safetensors", ".npz": "npz"}
EMBEDDED = "attnscope"  # the safetensors metadata entry that holds the reference document
EMBEDDED_NPZ = "__attnscope__"  # the npz array that holds it
NULLS = ".nulls"  # the suffix of the key of an array's null mask


def array_format(path: str | os.PathLike[str], option: str = "--arrays") -> Format:
    """The format a file name asks for, from its extension; AttnscopeError for any other."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise AttnscopeError(
            "arrays_extension", arg=option, path=os.fspath(path), suffix=repr(suffix or "no extension")
        )
    return FORMATS[suffix]


def check_writable(path: str | os.PathLike[str], option: str = "--arrays") -> Format:
    """Refuse, before any work, a file that cannot be written: a bad extension, a missing or
    unwritable folder, a folder in its place. Returns its format."""
    fmt = array_format(path, option)
    check_output(path)
    return fmt


class ArraySink:
    """Collects a document's arrays while ``Result.to_json(arrays=...)`` writes references to them.

    ``file`` is the name the document gives the file (absolute, or relative to the document's
    folder); ``fmt`` its format. ``arrays`` holds what was put, by key, in document order.
    """

    def __init__(self, file: str, fmt: Format) -> None:
        self.file = file
        self.format: Format = fmt
        self.arrays: dict[str, npt.NDArray[Any]] = {}

    def put(self, key: str, value: Any) -> Any:
        """``value`` (nested lists or an array) kept under ``key``; returns the reference to write
        in its place. None and empty lists stay inline: there is nothing to move."""
        if value is None or (isinstance(value, list) and not value):
            return value
        array, nulls = exact_array(value, key)
        self.arrays[key] = array
        ref: dict[str, Any] = {"array": key, "dtype": str(array.dtype), "shape": list(array.shape)}
        if nulls is not None:  # null entries (a grid with no value for some heads): NaN here, 1 in the mask
            self.arrays[key + NULLS] = nulls
            ref["nulls"] = key + NULLS
        return ref

    def header(self) -> dict[str, Any]:
        """The document's ``arrays`` entry."""
        return {"schema": ARRAYS_SCHEMA, "file": self.file, "format": self.format, "keys": list(self.arrays)}


def exact_array(value: Any, key: str) -> tuple[npt.NDArray[Any], npt.NDArray[np.uint8] | None]:
    """Nested lists of numbers as an array that gives every value back exactly: float32 when each
    value is exactly a float32, else float64; int64 for integers. Nulls (None) become NaN, and the
    second array marks them (1 where the value was null); None when there are none."""
    array = np.asarray(value)
    if array.dtype == np.float32:  # an array kept as the analysis made it
        return np.ascontiguousarray(array), None
    nulls = None
    if array.dtype == object:
        mask = np.asarray([v is None for v in array.ravel()], dtype=np.bool_).reshape(array.shape)
        if not mask.any():
            raise ValueError(f"{key}: not a rectangular array of numbers")
        nulls = mask.astype(np.uint8)
        array = np.asarray(value, dtype=np.float64)  # None -> NaN
    if array.dtype.kind not in "fiub":
        raise ValueError(f"{key}: not a rectangular array of numbers")
    if array.dtype.kind in "iub":
        return np.ascontiguousarray(array, dtype=np.int64), nulls
    wide = np.asarray(array, dtype=np.float64)
    narrow = wide.astype(np.float32)
    if np.array_equal(narrow.astype(np.float64), wide, equal_nan=True):
        return np.ascontiguousarray(narrow), nulls
    return np.ascontiguousarray(wide), nulls


# --- the paths of ARRAYS ----------------------------------------------------------------


def places(doc: dict[str, Any], path: str) -> Iterator[tuple[Any, Any, str]]:
    """Every place ``path`` names in the plain document ``doc``: (the object holding it, the
    field's name, its key). ``steps[].weights`` names ``doc["steps"][i]["weights"]`` for every i,
    with key ``steps.i.weights``; ``stats{}.mean`` names ``doc["stats"][name]["mean"]`` for every
    entry of the object ``stats``, with key ``stats.NAME.mean``; ``scores.sink`` names a field of
    a nested object. Something absent or null names nothing."""
    head, _, rest = path.partition(".")
    name = head.removesuffix("[]").removesuffix("{}")
    inner = doc.get(name)
    if inner is None:
        return
    if head.endswith("[]") or head.endswith("{}"):
        if head.endswith("[]"):
            items = list(enumerate(inner)) if isinstance(inner, list) else []
        else:
            items = list(inner.items()) if isinstance(inner, dict) else []
        for at, item in items:
            if not rest:
                yield inner, at, f"{name}.{at}"  # a list or an object: both take holder[at] = value
            elif isinstance(item, dict):
                for holder, field, key in places(item, rest):
                    yield holder, field, f"{name}.{at}.{key}"
        return
    if not rest:
        yield doc, name, name
    elif isinstance(inner, dict):
        for holder, field, key in places(inner, rest):
            yield holder, field, f"{name}.{key}"


def move_out(doc: dict[str, Any], paths: tuple[str, ...], sink: ArraySink) -> None:
    """Replace every array ``paths`` name in ``doc`` (a fresh plain document) by its reference."""
    for path in paths:
        for holder, field, key in list(places(doc, path)):
            holder[field] = sink.put(key, holder[field])


def is_reference(value: Any) -> bool:
    """A reference object written in place of an array."""
    return (
        isinstance(value, dict)
        and {"array", "dtype", "shape"} <= set(value) <= {"array", "dtype", "shape", "nulls"}
        and isinstance(value["array"], str)
    )


# --- reading back -----------------------------------------------------------------------


def header(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The document's ``arrays`` header, checked; None for an inline document."""
    head = doc.get("arrays")
    if head is None:
        return None
    if not isinstance(head, dict) or head.get("schema") != ARRAYS_SCHEMA:
        found = head.get("schema") if isinstance(head, dict) else head
        raise AttnscopeError("arrays_header", want=repr(ARRAYS_SCHEMA), found=repr(found))
    if not isinstance(head.get("file"), str) or head.get("format") not in FORMATS.values():
        raise AttnscopeError("arrays_header_fields")
    return head


def arrays_path(doc: dict[str, Any], folder: str | os.PathLike[str] | None) -> Path | None:
    """Where the document's arrays file is: its ``file``, absolute or relative to ``folder``
    (the document's folder; None: the current folder). None for an inline document."""
    head = header(doc)
    if head is None:
        return None
    file = Path(head["file"])
    return file if file.is_absolute() else Path(folder or ".") / file


def read_arrays(path: Path, fmt: Format | None = None) -> dict[str, npt.NDArray[Any]]:
    """Every array in a safetensors or npz file, by key (the embedded document left out)."""
    fmt = fmt or array_format(path, "arrays")
    if not path.is_file():
        raise AttnscopeError("arrays_missing", path=path)
    try:
        if fmt == "safetensors":
            from safetensors.numpy import load_file

            return dict(load_file(str(path)))
        with np.load(path, allow_pickle=False) as data:
            return {key: data[key] for key in data.files if key != EMBEDDED_NPZ}
    except Exception as exc:  # a broken file: OSError, zipfile's and numpy's errors, safetensors' own SafetensorError
        raise AttnscopeError("arrays_unreadable", path=path, fmt=fmt, why=exc) from None


def embedded_document(path: Path) -> dict[str, Any]:
    """The reference document an arrays file carries (see the module's docstring)."""
    fmt = array_format(path, "render")
    if not path.is_file():
        raise AttnscopeError("file_missing", path=path)
    text: str | None = None
    try:
        if fmt == "safetensors":
            from safetensors import safe_open

            with safe_open(str(path), framework="numpy") as f:
                text = (f.metadata() or {}).get(EMBEDDED)
        else:
            with np.load(path, allow_pickle=False) as data:
                text = str(data[EMBEDDED_NPZ]) if EMBEDDED_NPZ in data.files else None
    except Exception as exc:  # a broken file: safetensors' own error type, zipfile's, numpy's
        raise AttnscopeError("arrays_unreadable", path=path, fmt=fmt, why=exc) from None
    if text is None:
        raise AttnscopeError("arrays_no_document", path=path)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        doc = None
    if not isinstance(doc, dict):
        raise AttnscopeError("arrays_no_document", path=path)
    return doc


def load_arrays(
    doc: dict[str, Any] | str | os.PathLike[str], folder: str | os.PathLike[str] | None = None
) -> dict[str, npt.NDArray[Any]]:
    """The arrays a reference document names, by key, as numpy arrays.

    ``doc`` is the document (a dict; ``folder`` is where it was saved, default the current
    folder), or the path of its JSON file (the folder is then the file's own). Every key the
    document names must be in the file, with the shape its reference gives.
    """
    if not isinstance(doc, dict):
        where = Path(doc)
        doc = _read_json(where)
        folder = where.parent if folder is None else folder
    path = arrays_path(doc, folder)
    if path is None:
        return {}
    head = header(doc)
    assert head is not None
    stored = read_arrays(path, head["format"])
    wanted = head.get("keys") or []
    missing = [key for key in wanted if key not in stored]
    if missing:
        raise AttnscopeError("arrays_key", path=path, key=repr(missing[0]), n=len(wanted), m=len(missing))
    return {key: stored[key] for key in wanted}


def inline(doc: dict[str, Any], folder: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The inline document: every reference replaced by its array as nested lists, the header
    gone. An inline document comes back as it is."""
    if header(doc) is None:
        return doc
    arrays = load_arrays(doc, folder)
    path = arrays_path(doc, folder)

    def back(value: Any) -> Any:
        if is_reference(value):
            key = value["array"]
            if key not in arrays:
                raise AttnscopeError("arrays_no_array", path=path, key=repr(key))
            array = arrays[key]
            if list(array.shape) != list(value["shape"]):
                raise AttnscopeError(
                    "arrays_shape", path=path, key=repr(key), have=list(array.shape), want=value["shape"]
                )
            if "nulls" in value:
                if value["nulls"] not in arrays:
                    raise AttnscopeError("arrays_no_array", path=path, key=repr(value["nulls"]))
                values = array.astype(object)
                values[arrays[value["nulls"]].astype(bool)] = None
                return values.tolist()
            return array.tolist()
        if isinstance(value, dict):
            return {k: back(v) for k, v in value.items()}
        if isinstance(value, list) and value and isinstance(value[0], (dict, list)):
            return [back(v) for v in value]
        return value

    return {k: back(v) for k, v in doc.items() if k != "arrays"}


def _read_json(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AttnscopeError("file_missing", path=path) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AttnscopeError("arrays_not_json", path=path, why=exc) from None
    if not isinstance(doc, dict):
        raise AttnscopeError("arrays_not_document", path=path)
    return doc


# --- writing ----------------------------------------------------------------------------


def save_arrays(path: Path, sink: ArraySink, doc: dict[str, Any]) -> None:
    """The sink's arrays, and the reference document ``doc``, into ``path`` (atomically)."""
    text = json.dumps(doc, ensure_ascii=False)
    if sink.format == "safetensors":
        from safetensors.numpy import save

        write_atomic(path, lambda fh: fh.write(save(sink.arrays, metadata={EMBEDDED: text})))
    else:
        everything = {**sink.arrays, EMBEDDED_NPZ: np.asarray(text)}
        savez: Any = np.savez  # numpy's stubs read a keyword array named like a keyword argument as one
        write_atomic(path, lambda fh: savez(fh, **everything))


def doc_name(path: Path, folder: Path | None) -> str:
    """How a document saved in ``folder`` names the arrays file ``path``: an absolute path stays
    absolute; a relative one becomes relative to ``folder`` (None: the current folder)."""
    if path.is_absolute():
        return str(path)
    if folder is None:
        return path.as_posix()
    return Path(os.path.relpath(Path.cwd() / path, folder.resolve())).as_posix()


def write_arrays(
    result: Any, path: str | os.PathLike[str], doc_folder: str | os.PathLike[str] | None = None
) -> dict[str, Any]:
    """Write ``result``'s arrays to ``path`` (.safetensors or .npz) and return its reference document.

    The document names the file relative to ``doc_folder``, the folder it will be saved in
    (default: the arrays file's own folder, so the two are kept side by side).
    """
    target = Path(path)
    fmt = check_writable(target)
    folder = Path(doc_folder) if doc_folder is not None else (Path.cwd() / target).parent
    sink = ArraySink(Path(os.path.relpath(Path.cwd() / target, folder.resolve())).as_posix(), fmt)
    doc: dict[str, Any] = result.to_json(arrays=sink)
    save_arrays(target, sink, doc)
    return doc
