"""What a model reference means: a hub id, a local HF folder or a ``.gguf`` file.

Also where attnscope keeps its own files (``cache_root``) and which model is used when
none is named (``default_model``). Nothing here imports torch or contacts the hub.
"""

from __future__ import annotations

import os
from pathlib import Path

from attnscope.errors import AttnscopeError

DEFAULT_MODEL = "Qwen/Qwen2.5-0.5B-Instruct"


def default_model() -> str:
    return os.environ.get("ATTNSCOPE_MODEL") or DEFAULT_MODEL


def cache_root() -> Path:
    """attnscope's cache folder: $ATTNSCOPE_CACHE, else ``attnscope`` under the user cache dir."""
    env = os.environ.get("ATTNSCOPE_CACHE")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "attnscope"


def resolve(model: str | None) -> tuple[str, str]:
    """(spec, kind) where kind is 'hub', 'folder' or 'gguf'; a clear error for a missing path."""
    spec = model or default_model()
    path = Path(spec).expanduser()
    looks_local = spec.startswith((".", "/", "~")) or spec.lower().endswith(".gguf") or spec.count("/") > 1
    if path.is_file():
        if path.suffix.lower() == ".gguf":
            return str(path), "gguf"
        raise AttnscopeError("not_gguf", spec=spec)
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise AttnscopeError("no_config", spec=spec)
        return str(path), "folder"
    if looks_local:
        raise AttnscopeError("no_such_path", spec=spec)
    return spec, "hub"
