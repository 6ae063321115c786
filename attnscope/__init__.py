"""attnscope: see what attention does inside a real Qwen2.5-family model.

The Python API loads a model once and inspects many prompts::

    import attnscope
    from attnscope import Selection, Text

    model = attnscope.load("model.gguf")
    result = attnscope.weights(model, "민수는 사과를 샀다. 그는 그것을 먹었다.", query="그것을")
    result = attnscope.weights(model, "...", query=Text("그", occurrence=2), selection=Selection(layers=[0, -1]))
    result.to_json()

Every analysis the CLI runs is a function here, with typed arguments (``Selection``,
``Text``, ``ChatSpec``, ``Answer``, ``StatsConfig``; a query is a text, a position or None for the last token);
docs/python-api.md shows each. Heavy modules (torch, transformers) load only when one
of these names is first used, so ``import attnscope`` and ``attnscope --help`` stay fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from attnscope import errors as _errors
from attnscope.version import __version__


def _english(error: _errors.AttnscopeError) -> str:
    """An error's English line (``str(exc)``): the English catalogue's words for its kind, read
    when a message is first needed (the catalogue sits in render, above errors)."""
    from attnscope.render.i18n import error_text

    return error_text("en", error)


_errors.set_wording(_english)

_LAZY = {
    # loading and reading results back
    "load": ("attnscope.capture.engine", "load"),
    "from_json": ("attnscope.results", "from_json"),
    "load_arrays": ("attnscope.results.arrays", "load_arrays"),
    "write_arrays": ("attnscope.results.arrays", "write_arrays"),
    "AttnscopeError": ("attnscope.errors", "AttnscopeError"),
    # the analyses
    "weights": ("attnscope.core.weights", "weights"),
    "read_entries": ("attnscope.core.weights.batch", "read_entries"),
    "run_batch": ("attnscope.core.weights.batch", "run_batch"),
    "heads": ("attnscope.core.heads", "heads"),
    "matrix": ("attnscope.core.matrix", "matrix"),
    "mask": ("attnscope.core.mask", "mask"),
    "mask_illustration": ("attnscope.core.maskgrid", "illustration"),
    "tokens": ("attnscope.core.tokenlist", "tokens"),
    "info": ("attnscope.core.info", "info"),
    "trace": ("attnscope.core.trace", "trace"),
    "explain": ("attnscope.core.explain", "explain"),
    "rope": ("attnscope.core.rope", "rope"),
    "reuse": ("attnscope.core.reuse", "reuse"),
    "roles": ("attnscope.core.roles", "roles"),
    "stats": ("attnscope.core.stats.driver", "stats"),
    "ModelSpec": ("attnscope.core.stats.driver", "ModelSpec"),
    "StatsConfig": ("attnscope.core.stats.options", "StatsConfig"),
    "generate": ("attnscope.core.generate", "generate"),
    "explore": ("attnscope.core.explore", "explore"),
    "ablate": ("attnscope.core.causal.ablate", "ablate"),
    "knockout": ("attnscope.core.causal.knockout", "knockout"),
    "patch": ("attnscope.core.causal.patch", "patch"),
    "flow": ("attnscope.core.causal.flow", "flow"),
    "circuit": ("attnscope.core.causal.circuit", "circuit"),
    "CircuitConfig": ("attnscope.core.causal.circuit", "CircuitConfig"),
    "pairs": ("attnscope.core.causal.pairs", "pairs"),
    # their typed arguments
    "Selection": ("attnscope.core.prompt.spec", "Selection"),
    "IndexRange": ("attnscope.core.prompt.spec", "IndexRange"),
    "Text": ("attnscope.core.prompt.spec", "Text"),
    "QuerySpec": ("attnscope.core.prompt.spec", "QuerySpec"),
    "ChatSpec": ("attnscope.core.prompt.spec", "ChatSpec"),
    "Prompts": ("attnscope.core.prompt.spec", "Prompts"),
    "Answer": ("attnscope.core.prompt.targets", "Answer"),
    "Message": ("attnscope.results.segments", "Message"),
    "WeightsView": ("attnscope.results.weights", "WeightsView"),
}

if TYPE_CHECKING:  # the same names for type checkers and editors, which do not run __getattr__
    from attnscope.capture.engine import load
    from attnscope.core.causal.ablate import ablate
    from attnscope.core.causal.circuit import CircuitConfig, circuit
    from attnscope.core.causal.flow import flow
    from attnscope.core.causal.knockout import knockout
    from attnscope.core.causal.pairs import pairs
    from attnscope.core.causal.patch import patch
    from attnscope.core.explain import explain
    from attnscope.core.explore import explore
    from attnscope.core.generate import generate
    from attnscope.core.heads import heads
    from attnscope.core.info import info
    from attnscope.core.mask import mask
    from attnscope.core.maskgrid import illustration as mask_illustration
    from attnscope.core.matrix import matrix
    from attnscope.core.prompt.spec import ChatSpec, IndexRange, Prompts, QuerySpec, Selection, Text
    from attnscope.core.prompt.targets import Answer
    from attnscope.core.reuse import reuse
    from attnscope.core.roles import roles
    from attnscope.core.rope import rope
    from attnscope.core.stats.driver import ModelSpec, stats
    from attnscope.core.stats.options import StatsConfig
    from attnscope.core.tokenlist import tokens
    from attnscope.core.trace import trace
    from attnscope.core.weights import weights
    from attnscope.core.weights.batch import read_entries, run_batch
    from attnscope.errors import AttnscopeError
    from attnscope.results import from_json
    from attnscope.results.arrays import load_arrays, write_arrays
    from attnscope.results.segments import Message
    from attnscope.results.weights import WeightsView

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'attnscope' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
