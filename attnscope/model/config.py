"""A model's config, read without its weights: the preflight counts and the facts for ``info``.

``model_shape`` resolves a model reference and reads its layer and head counts without
torch, so bad selections are refused before anything heavy is imported. ``read_config``
and ``has_chat_template`` read a hub id's or a folder's config and tokenizer files for
``info``. ``check_config`` refuses a config whose attention attnscope cannot capture, and
``layer_kinds`` says what each layer's attention is (full, a sliding window, linear).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attnscope.errors import AttnscopeError
from attnscope.model import hub
from attnscope.model.gguf_header import ArrayLength, read_gguf_header
from attnscope.model.reference import resolve

# The model types tests/integration/test_families.py checks against eager attention (docs/models.md
# lists them). Support does not depend on this list: it only lets ``info`` and the GGUF header check
# skip importing transformers for them.
TESTED_MODEL_TYPES = (
    *("qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "qwen3_next", "qwen3_5_text"),
    *("llama", "mistral", "ministral", "smollm3", "gemma", "gemma2", "gemma3_text", "phi3", "glm4"),
    *("olmo2", "olmo3", "granite", "cohere", "starcoder2", "gpt_oss", "exaone4"),
)
REQUIRED = ("num_hidden_layers", "num_attention_heads", "hidden_size", "vocab_size")

# How a config's layer_types name a layer's attention, in attnscope's words.
_KINDS = {"full_attention": "full", "sliding_attention": "sliding", "linear_attention": "linear"}
LayerKind = str  # "full", "sliding" (a window of sliding_window keys) or "linear" (no attention weights)


def layer_kinds(text: Mapping[str, Any]) -> list[LayerKind]:
    """Each layer's attention, from a config's (text) fields: its ``layer_types`` where it has
    them, else a sliding window on every layer when ``sliding_window`` is set and not switched
    off by ``use_sliding_window``, else full attention everywhere."""
    n = text.get("num_hidden_layers")
    if not isinstance(n, int) or n <= 0:
        return []
    types = text.get("layer_types")
    if isinstance(types, list) and len(types) == n:
        return [_KINDS.get(str(kind), str(kind)) for kind in types]
    window = text.get("sliding_window")
    sliding = isinstance(window, int) and window > 0 and text.get("use_sliding_window", True) is not False
    return ["sliding" if sliding else "full"] * n


def rope_bases(text: Mapping[str, Any]) -> dict[LayerKind, float]:
    """Each layer kind's RoPE base where a config's ``rope_parameters`` give the kinds their own
    (``{"full_attention": {"rope_theta": ...}, "sliding_attention": {...}}`` in transformers 5), in
    attnscope's kind names; empty when one base serves every layer."""
    rope = text.get("rope_parameters")
    if not isinstance(rope, dict) or not all(isinstance(v, dict) for v in rope.values()) or not rope:
        return {}
    bases = {_KINDS.get(str(k), str(k)): v.get("rope_theta") for k, v in rope.items()}
    return {k: float(v) for k, v in bases.items() if isinstance(v, (int, float))}


# GGUF architectures whose config class adds nothing to the header about the layers: every layer has
# full attention (or the header's one window) and one RoPE base. For any other architecture ``info``
# asks the config class, as transformers' GGUF loader does (tests/integration/test_info_config.py
# compares both with the config that loader makes).
PLAIN_GGUF_ARCHITECTURES = ("qwen2", "qwen2moe", "qwen3", "qwen3moe", "llama")


def gguf_config(meta: Mapping[str, Any], tensors: Mapping[str, Any]) -> dict[str, Any]:
    """The (text) config that transformers' GGUF loader makes of a header, without reading the
    vocabulary or any tensor: the metadata renamed by transformers' own GGUF config mapping, its
    GGUF defaults, and the config class's defaults for the rest (Gemma 3's layer pattern and its
    second RoPE base come from there: the header holds neither)."""
    from transformers import AutoConfig
    from transformers.integrations.ggml import GGUF_CONFIG_DEFAULTS_MAPPING, GGUF_CONFIG_MAPPING

    hub.quiet_transformers()
    arch = str(meta.get("general.architecture"))
    model_type = gguf_model_type(arch)
    if "llama" in arch and "mistral" in str(meta.get("general.name", "")).lower():
        model_type = "mistral"  # as transformers' load_gguf_checkpoint reads a llama.cpp mistral
    kwargs: dict[str, Any] = dict(
        GGUF_CONFIG_DEFAULTS_MAPPING.get(model_type) or GGUF_CONFIG_DEFAULTS_MAPPING.get(arch) or {}
    )
    for key, name in (GGUF_CONFIG_MAPPING.get(model_type) or GGUF_CONFIG_MAPPING.get(arch) or {}).items():
        value = meta.get(f"{arch}.{key}")
        if name is None or name == -1 or value is None or isinstance(value, ArrayLength):
            continue
        kwargs[name] = value
    kwargs["tie_word_embeddings"] = "output.weight" not in tensors
    config_type = {"gemma3": "gemma3_text", "gemma4": "gemma4_text"}.get(model_type, model_type)
    try:
        config = AutoConfig.for_model(config_type, **kwargs)
    except (ValueError, KeyError, TypeError) as exc:
        raise AttnscopeError("gguf_config", arch=arch, detail=f"{type(exc).__name__}: {exc}") from exc
    full: dict[str, Any] = getattr(config, "text_config", config).to_dict()
    return full


def head_dim(config: Any) -> int:
    """The width of one attention head: ``head_dim`` where the config sets it (Gemma, Qwen3),
    else ``hidden_size // num_attention_heads``. The one place of this formula."""
    return int(getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads)


def attention_source(model_class: type) -> bool:
    """Whether the modeling module of ``model_class`` runs its attention through transformers'
    attention interface (the way transformers itself tells, from the module's source)."""
    import inspect
    import sys

    module = sys.modules.get(model_class.__module__)
    try:
        return module is not None and "ALL_ATTENTION_FUNCTIONS.get_interface(" in inspect.getsource(module)
    except (OSError, TypeError):
        return False


def check_config(config: Any, name: str) -> None:
    """Refuse a transformers config that is not a causal LM, or whose layers never call
    transformers' attention interface (the one place attnscope reads attention from)."""
    from transformers import MODEL_FOR_CAUSAL_LM_MAPPING

    model_type = getattr(config, "model_type", "?")
    # BERT, RoBERTa, Whisper... are registered for causal LM only as decoders; a saved
    # encoder (architectures: BertModel, BertForMaskedLM) is not one.
    archs = list(getattr(config, "architectures", None) or [])
    encoder_only = bool(archs) and not any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in archs)
    if type(config) not in MODEL_FOR_CAUSAL_LM_MAPPING or encoder_only:
        what = f" ({', '.join(archs)})" if archs else ""
        raise AttnscopeError("not_causal", name=name, model_type=repr(model_type), what=what)
    if not attention_source(MODEL_FOR_CAUSAL_LM_MAPPING[type(config)]):
        raise AttnscopeError("not_interface", name=name, model_type=repr(model_type))
    kinds = layer_kinds(config.to_dict())
    if kinds and all(kind == "linear" for kind in kinds):
        raise AttnscopeError("all_linear", name=name, model_type=repr(model_type))


@dataclass(frozen=True)
class ModelShape:
    """What can be checked before loading, read without torch: the model's path and kind,
    and its config's counts (None where the config is not at hand, e.g. a hub id not cached)."""

    spec: str
    kind: str  # "hub", "folder" or "gguf"
    num_hidden_layers: int | None = None
    num_attention_heads: int | None = None
    model_type: str | None = None


# Families whose attention multiplies each head's output by a sigmoid gate computed from the
# query side before o_proj (their modeling code does, unconditionally; no config field says so).
# For these the norm measure's f_h(x_j) is not what a key adds. The capture refuses any such
# layer it meets (engine: q_proj twice the heads' width); this table lets the refusal come
# before the model loads.
OUTPUT_GATED_TYPES = frozenset({"qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text"})


def check_norm_applies(shape: ModelShape) -> None:
    """Refuse ``--measure norm`` before loading where the model type tells that it cannot apply."""
    if shape.model_type in OUTPUT_GATED_TYPES:
        raise AttnscopeError("gated_heads", model_type=shape.model_type)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def model_shape(model: str | None = None, revision: str | None = None) -> ModelShape:
    """Resolve ``model`` and read its layer and head counts the fast way, without torch.

    A missing path, a folder without config.json, and a hub id that is neither reachable nor
    cached are errors here, in well under a second. A GGUF's counts come from its header
    (``attnscope.model.gguf_header``), a folder's from config.json, a hub id's from the cached
    config.json when there is one (otherwise the counts stay None and loading checks them).
    """
    spec, kind = resolve(model)
    if kind == "gguf":
        try:
            meta = read_gguf_header(Path(spec)).metadata
        except AttnscopeError:  # unreadable: loading reports it with the reason
            return ModelShape(spec, kind)
        arch = meta.get("general.architecture")
        return ModelShape(
            spec,
            kind,
            num_hidden_layers=_count(meta.get(f"{arch}.block_count")),
            num_attention_heads=_count(meta.get(f"{arch}.attention.head_count")),
            model_type=gguf_model_type(arch) if isinstance(arch, str) else None,
        )
    if kind == "hub":
        config_path = hub.cached_config(spec, revision)
        if config_path is None:
            if hub.hub_local_only():
                raise hub.offline_error(spec)
            return ModelShape(spec, kind)
    else:
        config_path = Path(spec) / "config.json"
    try:
        doc = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # unreadable: loading reports it with the reason
        return ModelShape(spec, kind)
    text = doc.get("text_config", doc) if isinstance(doc, dict) else {}
    if not isinstance(text, dict):
        return ModelShape(spec, kind)
    model_type = text.get("model_type", doc.get("model_type"))
    return ModelShape(
        spec,
        kind,
        num_hidden_layers=_count(text.get("num_hidden_layers")),
        num_attention_heads=_count(text.get("num_attention_heads")),
        model_type=model_type if isinstance(model_type, str) else None,
    )


def gguf_model_type(arch: str) -> str:
    """The transformers model_type of a GGUF's general.architecture (qwen2moe is qwen2_moe)."""
    return arch[: -len("moe")] + "_moe" if arch.endswith("moe") else arch


def has_chat_template(spec: str, kind: str, revision: str | None) -> bool | None:
    """Whether a hub id's or a folder's tokenizer files carry a chat template; None when they cannot be read."""
    if kind == "folder":
        folder = Path(spec)
        if (folder / "chat_template.jinja").is_file():
            return True
        try:
            doc = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return bool(isinstance(doc, dict) and doc.get("chat_template"))
    from huggingface_hub import hf_hub_download

    for name in ("chat_template.jinja", "tokenizer_config.json"):
        try:
            local = hf_hub_download(spec, name, revision=revision, local_files_only=hub.hub_local_only())
        except Exception:  # missing file, offline, gated: all mean "cannot tell from here"
            continue
        if name.endswith(".jinja"):
            return True
        try:
            doc = json.loads(Path(local).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return bool(isinstance(doc, dict) and doc.get("chat_template"))
    return None


def read_config(spec: str, kind: str, revision: str | None) -> dict[str, Any]:
    """A hub id's or a folder's config.json as a dict (``info``): read directly (no torch import), or through AutoConfig when
    it leaves out fields that the config class fills with defaults."""
    try:
        if kind == "folder":
            path = Path(spec) / "config.json"
        else:
            from huggingface_hub import hf_hub_download

            hub.quiet_hub()
            path = Path(hf_hub_download(spec, "config.json", revision=revision, local_files_only=hub.hub_local_only()))
        doc = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise AttnscopeError("config_not_json", spec=spec, detail=exc) from exc
    except Exception as exc:  # OSError, hub errors
        if kind == "hub":
            raise hub.hub_error(spec, exc) from exc
        raise AttnscopeError("config_unreadable", spec=spec, detail=exc) from exc
    if not isinstance(doc, dict):
        raise AttnscopeError("config_not_object", spec=spec)
    text = doc.get("text_config", doc)
    if isinstance(text, dict) and all(k in text for k in REQUIRED):
        return doc
    from transformers import AutoConfig

    hub.quiet_transformers()
    try:
        options: dict[str, Any] = (
            {"revision": revision, "local_files_only": hub.hub_local_only()} if kind == "hub" else {}
        )
        full: dict[str, Any] = AutoConfig.from_pretrained(spec, **options).to_dict()
    except (OSError, ValueError, KeyError) as exc:
        raise AttnscopeError("config_unreadable", spec=spec, detail=f"{type(exc).__name__}: {exc}") from exc
    return full
