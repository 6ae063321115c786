"""The header of a GGUF file: metadata and tensor shapes, scanned without reading tensor data.

``gguf.GGUFReader`` reads the same but first decodes the whole 151k-token vocabulary into
numpy (tens of seconds on Qwen2.5); this scan skips arrays and takes well under a second.
``attnscope.model`` uses it to refuse unsupported architectures before dequantizing and to
read a GGUF's layer and head counts before loading, and ``core.info`` to print the facts of
a GGUF model without loading it.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attnscope.errors import AttnscopeError

# GGUF value types: struct format (or None for string/array) by type id.
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9
_U64 = struct.Struct("<Q")


class ArrayLength(int):
    """A metadata array, reported by its length (an int, so ``meta["tokenizer.ggml.tokens"]`` is the
    vocabulary size) and told apart from a scalar by its type."""


@dataclass
class GGUFHeader:
    """What the header of a GGUF file says: metadata (arrays as their length) and tensor shapes."""

    metadata: dict[str, Any] = field(default_factory=dict)
    tensors: dict[str, list[int]] = field(default_factory=dict)


class _Cursor:
    def __init__(self, buf: Any) -> None:
        self.buf = buf
        self.at = 0

    def take(self, fmt: str) -> Any:
        (value,) = struct.unpack_from("<" + fmt, self.buf, self.at)
        self.at += struct.calcsize("<" + fmt)
        return value

    def string(self) -> str:
        n = self.take("Q")
        raw = bytes(self.buf[self.at : self.at + n])
        self.at += n
        return raw.decode("utf-8", errors="replace")

    def value(self, vtype: int) -> Any:
        if vtype in _SCALARS:
            return self.take(_SCALARS[vtype])
        if vtype == _STRING:
            return self.string()
        if vtype == _ARRAY:
            inner = self.take("I")
            count = self.take("Q")
            if inner in _SCALARS:
                self.at += count * struct.calcsize("<" + _SCALARS[inner])
            elif inner == _STRING:  # the vocabulary: 151k strings, skipped in one tight loop
                at, buf, unpack = self.at, self.buf, _U64.unpack_from
                for _ in range(count):
                    at += 8 + unpack(buf, at)[0]
                self.at = at
            else:
                for _ in range(count):
                    self.value(inner)
            return ArrayLength(count)  # arrays are reported by their length only
        raise ValueError(f"unknown GGUF value type {vtype}")


def read_gguf_header(path: Path) -> GGUFHeader:
    """Metadata and tensor shapes of a GGUF file (v2/v3), without reading tensor data.

    One run reads a file's header several times (the checks before loading, the weight count,
    the cache); it is scanned once per file version (path, size, modification time) and the
    same header is returned after that: treat it as read-only."""
    try:
        stat = path.stat()
        key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    except OSError as exc:
        raise AttnscopeError("gguf_unreadable", path=path, detail=exc) from exc
    if key not in _SCANNED:
        _SCANNED.clear()  # one file at a time is what a run reads
        _SCANNED[key] = _scan(path)
    return _SCANNED[key]


_SCANNED: dict[tuple[str, int, int], GGUFHeader] = {}


def _scan(path: Path) -> GGUFHeader:
    try:
        with path.open("rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            cur = _Cursor(buf)
            if bytes(buf[:4]) != b"GGUF":
                raise ValueError("no GGUF magic")
            cur.at = 4
            version = cur.take("I")
            if version < 2:
                raise ValueError(f"GGUF version {version} is too old")
            n_tensors = cur.take("Q")
            n_kv = cur.take("Q")
            header = GGUFHeader()
            for _ in range(n_kv):
                key = cur.string()
                header.metadata[key] = cur.value(cur.take("I"))
            for _ in range(n_tensors):
                name = cur.string()
                n_dims = cur.take("I")
                header.tensors[name] = [cur.take("Q") for _ in range(n_dims)]
                cur.take("I")  # ggml type
                cur.take("Q")  # offset
            return header
    except (OSError, ValueError, struct.error) as exc:
        raise AttnscopeError("gguf_unreadable", path=path, detail=exc) from exc
