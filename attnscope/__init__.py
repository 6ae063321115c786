"""attnscope: see what attention does inside a real Qwen2.5-family model.

The Python API loads a model once and inspects many prompts::

    import attnscope
    model = attnscope.load("model.gguf")
    result = attnscope.weights(model, "민수는 사과를 샀다. 그는 그것을 먹었다.", query="그것을")
    result.to_json()

Heavy modules (torch, transformers) load only when one of these names is first used,
so ``import attnscope`` and ``attnscope --help`` stay fast.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "load": ("attnscope.capture.engine", "load"),
    "weights": ("attnscope.core.weights", "weights"),
    "from_json": ("attnscope.results", "from_json"),
    "AttnscopeError": ("attnscope.errors", "AttnscopeError"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'attnscope' has no attribute {name!r}")
