"""The tokenizer of a model reference, alone (for commands and checks that need no weights).

A GGUF's tokenizer comes from its cache entry when one exists, else straight from the file;
a hub id's or folder's through ``AutoTokenizer``, refused when it holds no vocabulary.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from attnscope.errors import AttnscopeError
from attnscope.model import hub
from attnscope.model.config import model_shape
from attnscope.model.gguf_cache import cached_entry
from attnscope.model.said import Progress, Said, noop


def check_vocab(tokenizer: Any, spec: str) -> Any:
    """A folder with no tokenizer files still gets an empty tokenizer from transformers; refuse it."""
    if len(tokenizer) <= len(getattr(tokenizer, "all_special_tokens", []) or []):
        raise AttnscopeError("no_tokenizer_files", spec=spec)
    return tokenizer


def load_tokenizer(model: str | None = None, revision: str | None = None, progress: Progress = noop) -> Any:
    """Only the tokenizer of ``model`` (a hub id, folder or .gguf file; None: the default model)."""
    shape = model_shape(model, revision)  # a bad path, or offline and not cached: fails before torch
    spec, kind = shape.spec, shape.kind
    from transformers import AutoTokenizer

    hub.quiet_transformers()
    try:
        if kind == "gguf":
            path = Path(spec)
            cached = cached_entry(path)
            if cached is not None and (cached / "tokenizer_config.json").is_file():
                return AutoTokenizer.from_pretrained(str(cached))
            progress(Said.of("reading_tokenizer", file=path.name))
            return AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        return check_vocab(
            AutoTokenizer.from_pretrained(spec, revision=revision, local_files_only=hub.hub_local_only()), spec
        )
    except AttnscopeError:
        raise
    except OSError as exc:
        if kind == "hub":
            raise hub.hub_error(spec, exc) from exc
        raise AttnscopeError("no_tokenizer", spec=spec, detail=exc) from exc
    except Exception as exc:
        raise AttnscopeError("no_tokenizer", spec=spec, detail=f"{type(exc).__name__}: {exc}") from exc
