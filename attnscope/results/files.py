"""Files that commands write beside their output: checked before any work, written atomically.

``check_output`` refuses a path whose folder is missing or not writable, or that is a folder,
before a model loads; ``write_atomic`` writes through a temporary file in the same folder and a
rename (after an fsync), so a reader sees the old file or the whole new one, and a failure or a
crash leaves nothing half-written. It is the one atomic write: ``attnscope.render`` writes its SVG
and HTML files with it, ``results.arrays`` its arrays files, ``stats`` its checkpoint files and
its long table.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

from attnscope.errors import AttnscopeError


def check_output(path: str | os.PathLike[str]) -> None:
    """Refuse, before any work, an output path whose folder is missing or not writable."""
    target = Path(path)
    folder = target.parent
    if not folder.is_dir():
        raise AttnscopeError("write_no_folder", path=os.fspath(path), folder=repr(str(folder)))
    if target.is_dir():
        raise AttnscopeError("write_is_folder", path=os.fspath(path))
    if not os.access(folder, os.W_OK):
        raise AttnscopeError("write_not_writable", path=os.fspath(path), folder=repr(str(folder)))


def write_atomic(path: str | os.PathLike[str], write: Callable[[IO[bytes]], object]) -> None:
    """``write(file)`` into a temporary file beside ``path``, flushed to disk, then renamed onto it (mode 644):
    either the whole file is there afterwards, or nothing (one error line otherwise)."""
    target = Path(path)
    folder = target.parent
    check_output(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise AttnscopeError("write_error", path=os.fspath(path), why=exc.strerror) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())  # on disk before the rename makes it the file: a crash leaves the old one
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise AttnscopeError("write_error", path=os.fspath(path), why=exc.strerror or exc) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
