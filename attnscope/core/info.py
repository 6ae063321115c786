"""The ``info`` facts: a model's config, read without loading its weights.

For a hub id or an HF folder, config.json is read as JSON (``AutoConfig`` only when
it leaves fields to the config class's defaults), and the parameter count comes from
the shapes (qwen2/llama/mistral) or from building the model on the ``meta`` device. For a
GGUF file the header is scanned directly (``attnscope.model.gguf_header``): the metadata keys
(``qwen2.block_count``, ``qwen2.attention.head_count_kv``, ...) and the tensor shapes, which
give the exact stored parameter count. What a header leaves to the config class (Gemma 3's
pattern of sliding and full layers, its second RoPE base) comes from that class, as transformers'
GGUF loader fills it (``attnscope.model.gguf_config``), except for the architectures whose layers
the header says all about (``PLAIN_GGUF_ARCHITECTURES``).
The reading itself (config.json, the tokenizer files, the GGUF header, the hub) is
``attnscope.model``'s; this module turns what it read into facts, and never prints.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal, cast

from attnscope.errors import AttnscopeError
from attnscope.model import (
    PLAIN_GGUF_ARCHITECTURES,
    REQUIRED,
    TESTED_MODEL_TYPES,
    check_config,
    gguf_config,
    has_chat_template,
    layer_kinds,
    read_config,
    read_gguf_header,
    resolve,
    rope_bases,
)
from attnscope.model.config import head_dim as config_head_dim
from attnscope.results.info import ATTN_IMPLEMENTATION, InfoResult, KVGroup


def gqa_groups(num_attention_heads: int, num_key_value_heads: int) -> list[KVGroup]:
    """Query head h reads KV head h // (num_attention_heads // num_key_value_heads)."""
    if num_key_value_heads < 1 or num_attention_heads % num_key_value_heads:
        raise AttnscopeError("heads_multiple", q=num_attention_heads, kv=num_key_value_heads)
    size = num_attention_heads // num_key_value_heads
    return [KVGroup(kv_head=k, heads=list(range(k * size, (k + 1) * size))) for k in range(num_key_value_heads)]


def _numel(shape: list[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def info_from_gguf(path: Path) -> InfoResult:
    header = read_gguf_header(path)  # a header scan, no tensor data
    meta = header.metadata
    arch = meta.get("general.architecture")
    if not isinstance(arch, str):
        raise AttnscopeError("gguf_metadata", path=path, name="general.architecture")

    def need(name: str) -> int:
        value = meta.get(f"{arch}.{name}")
        if not isinstance(value, int):
            raise AttnscopeError("gguf_metadata", path=path, name=f"{arch}.{name}")
        return value

    layers = need("block_count")
    heads = need("attention.head_count")
    kv = meta.get(f"{arch}.attention.head_count_kv", heads)
    hidden = need("embedding_length")
    head_dim = meta.get(f"{arch}.attention.key_length") or hidden // heads
    theta = meta.get(f"{arch}.rope.freq_base")
    vocab = meta.get("tokenizer.ggml.tokens")
    if not isinstance(vocab, int):
        embd = header.tensors.get("token_embd.weight")
        vocab = max(embd) if embd else 0
    params = sum(_numel(s) for s in header.tensors.values())
    window = meta.get(f"{arch}.attention.sliding_window")
    window = window if isinstance(window, int) and window > 0 else None
    kinds = ["sliding" if window else "full"] * layers
    bases: dict[str, float] = {}
    if arch not in PLAIN_GGUF_ARCHITECTURES:
        config = gguf_config(meta, header.tensors)
        kinds, bases = layer_kinds(config) or kinds, rope_bases(config)
        window = _window(kinds, config.get("sliding_window"))
        # the RoPE base the loaded model runs with: the full layers' one, or the config's only one (the
        # loader may leave the header's rope.freq_base unread, as it does for starcoder2)
        rope = config.get("rope_parameters")
        theta = bases.get("full", rope.get("rope_theta") if isinstance(rope, dict) else config.get("rope_theta"))
    tied: bool | None = "output.weight" not in header.tensors
    separate = None
    if not tied and "token_embd.weight" in header.tensors:
        separate = _numel(header.tensors["output.weight"])
    return InfoResult(
        model=str(path),
        source="gguf",
        read_from=path.name,
        gguf_metadata_keys=len(meta),
        gguf_tensors=len(header.tensors),
        model_type=arch,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=int(kv),
        gqa_groups=gqa_groups(heads, int(kv)),
        head_dim=int(head_dim),
        hidden_size=hidden,
        intermediate_size=need("feed_forward_length"),
        rope_theta=float(theta) if isinstance(theta, (int, float)) else None,
        max_position_embeddings=meta.get(f"{arch}.context_length"),
        vocab_size=int(vocab),
        layer_kinds=kinds,
        sliding_window=window,
        rope_theta_by_kind=bases if len(set(bases.values())) > 1 else {},
        num_parameters=params,
        num_parameters_from="gguf_tensors",
        separate_output_weight=separate,
        tie_word_embeddings=tied,
        attn_implementation=ATTN_IMPLEMENTATION,
        chat_template=isinstance(meta.get("tokenizer.chat_template"), str),
    )


def _count_qwen2_like(text: Any, tied: bool) -> int | None:
    """Parameters of a qwen2/llama/mistral decoder from its config shapes; None for other types."""
    model_type = getattr(text, "model_type", "")
    if model_type not in ("qwen2", "llama", "mistral"):
        return None
    h, n_layers = int(text.hidden_size), int(text.num_hidden_layers)
    heads = int(text.num_attention_heads)
    kv = int(getattr(text, "num_key_value_heads", None) or heads)
    d = config_head_dim(text)
    inter, vocab = int(text.intermediate_size), int(text.vocab_size)
    qkv_bias = model_type == "qwen2" or bool(getattr(text, "attention_bias", False))
    o_bias = model_type != "qwen2" and bool(getattr(text, "attention_bias", False))
    mlp_bias = bool(getattr(text, "mlp_bias", False))
    attn = h * heads * d + 2 * h * kv * d + heads * d * h  # q, k, v, o weights
    attn += (heads * d + 2 * kv * d) * qkv_bias + h * o_bias
    mlp = 3 * h * inter + (2 * inter + h) * mlp_bias  # gate, up, down
    per_layer = attn + mlp + 2 * h  # two RMSNorm weights
    return vocab * h * (1 if tied else 2) + n_layers * per_layer + h  # embed (+ lm_head) + layers + final norm


def count_parameters(doc: dict[str, Any]) -> int:
    """Exact parameter count of the model a config.json describes: from the shapes for
    qwen2/llama/mistral, otherwise by building it on the meta device (no weights)."""
    text = SimpleNamespace(**doc.get("text_config", doc))
    quick = _count_qwen2_like(text, bool(doc.get("tie_word_embeddings", False)))
    if quick is not None:
        return quick
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.for_model(**doc)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    return sum(p.numel() for p in model.parameters())  # tied weights are counted once


def _config_object(spec: str, doc: dict[str, Any]) -> Any:
    """The transformers config class's view of a config.json (its defaults filled in)."""
    from transformers import AutoConfig

    try:
        return AutoConfig.for_model(**doc)
    except (ValueError, KeyError, TypeError) as exc:
        raise AttnscopeError("config_unreadable", spec=spec, detail=f"{type(exc).__name__}: {exc}") from exc


def _window(kinds: list[str], window: Any) -> int | None:
    return window if "sliding" in kinds and isinstance(window, int) and window > 0 else None


def _layers(spec: str, doc: dict[str, Any], text: Any, model_type: str) -> tuple[list[str], dict[str, float]]:
    """Each layer's kind and each kind's RoPE base, from config.json, or from the config class where
    the family is untested or only the class can spell the layer kinds out."""
    if not isinstance(text, dict):
        return [], {}
    if model_type in TESTED_MODEL_TYPES and ("layer_types" in text or "sliding_window_pattern" not in text):
        return layer_kinds(text), rope_bases(text)
    config = _config_object(spec, doc)
    check_config(config, spec)
    filled = getattr(config, "text_config", config).to_dict()
    return layer_kinds(filled), rope_bases(filled)


def info_from_config(spec: str, kind: Literal["hub", "folder"], revision: str | None = None) -> InfoResult:
    doc = read_config(spec, kind, revision)
    model_type = str(doc.get("model_type", ""))
    text = doc.get("text_config", doc)
    kinds, bases = _layers(spec, doc, text, model_type)
    missing = [k for k in REQUIRED if not isinstance(text.get(k), int)]
    if missing:
        raise AttnscopeError("config_missing", spec=spec, names=", ".join(missing))
    heads = int(text["num_attention_heads"])
    kv = int(text.get("num_key_value_heads") or heads)
    hidden = int(text["hidden_size"])
    rope = text.get("rope_parameters") or {}
    theta = rope.get("rope_theta") if isinstance(rope, dict) else None
    if theta is None:
        theta = bases.get("full", text.get("rope_theta"))
    error = None
    try:
        params: int | None = count_parameters(doc)
    except Exception as exc:  # an architecture transformers cannot build
        params, error = None, type(exc).__name__
    template = has_chat_template(spec, kind, revision)
    tied = doc.get("tie_word_embeddings")
    return InfoResult(
        model=spec,
        source=kind,
        read_from=f"{spec} config.json" if kind == "hub" else str(Path(spec) / "config.json"),
        model_type=str(doc.get("model_type", "")),
        num_hidden_layers=int(text["num_hidden_layers"]),
        num_attention_heads=heads,
        num_key_value_heads=kv,
        gqa_groups=gqa_groups(heads, kv),
        head_dim=int(text.get("head_dim") or hidden // heads),
        hidden_size=hidden,
        intermediate_size=int(text.get("intermediate_size") or 0),
        rope_theta=float(theta) if isinstance(theta, (int, float)) else None,
        max_position_embeddings=text.get("max_position_embeddings"),
        vocab_size=int(text["vocab_size"]),
        layer_kinds=kinds,
        sliding_window=_window(kinds, text.get("sliding_window")),
        rope_theta_by_kind=bases if len(set(bases.values())) > 1 else {},
        num_parameters=params,
        num_parameters_from="none" if params is None else "config",
        num_parameters_error=error,
        tie_word_embeddings=tied if isinstance(tied, bool) else None,
        attn_implementation=ATTN_IMPLEMENTATION,
        chat_template=bool(template),
        tokenizer_unread=template is None,
    )


def info(model: str | None, revision: str | None = None) -> InfoResult:
    """The config facts of a hub id, an HF folder or a GGUF file, without its weights."""
    spec, kind = resolve(model)
    if kind == "gguf":
        return info_from_gguf(Path(spec))
    return info_from_config(spec, cast(Literal["hub", "folder"], kind), revision)
