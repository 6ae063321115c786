"""A tiny random model of every decoder family attnscope is tested on, built from transformers' own
config classes (nothing is downloaded).

Each family gets 4 layers, 4 query heads sharing 2 KV heads (head_dim 8), and the settings that
make its attention differ from Qwen2's set small enough to matter on a 20-token prompt: a sliding
window of 4 keys, soft-capping at 5, a scaling that is not 1/sqrt(head_dim), partial rotary,
random sink logits. ``FAMILIES`` maps a model_type to those settings; a model_type this
transformers lacks is skipped by ``config`` with the reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

WINDOW = 4  # the sliding window of every family that has one, in keys

_MOE = {"num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 16, "shared_expert_intermediate_size": 16}
_HYBRID = {
    **_MOE,
    "layer_types": ["linear_attention", "full_attention", "linear_attention", "full_attention"],
    "linear_num_value_heads": 2,
    "linear_num_key_heads": 2,
    "linear_key_head_dim": 8,
    "linear_value_head_dim": 8,
}

FAMILIES: dict[str, dict[str, Any]] = {
    "qwen2": {},
    "qwen2_moe": {**_MOE, "sliding_window": None},
    "qwen3": {},
    "qwen3_moe": _MOE,
    "qwen3_next": _HYBRID,
    "qwen3_5_text": _HYBRID,
    "llama": {},
    "mistral": {"sliding_window": WINDOW},
    "ministral": {"sliding_window": WINDOW, "layer_types": ["sliding_attention", "full_attention"] * 2},
    "smollm3": {"no_rope_layer_interval": 2},
    "gemma": {"query_pre_attn_scalar": 32},
    "gemma2": {
        "sliding_window": WINDOW,
        "attn_logit_softcapping": 5.0,
        "final_logit_softcapping": 30.0,
        "query_pre_attn_scalar": 16,
    },
    "gemma3_text": {
        "sliding_window": WINDOW,
        "layer_types": ["sliding_attention", "full_attention"] * 2,
        "query_pre_attn_scalar": 16,
    },
    "phi3": {"partial_rotary_factor": 0.5, "sliding_window": WINDOW},
    "glm4": {"partial_rotary_factor": 0.5},
    "olmo2": {},
    "olmo3": {"sliding_window": WINDOW},
    "granite": {"attention_multiplier": 0.2, "residual_multiplier": 0.5, "embedding_multiplier": 2.0},
    "cohere": {"use_qk_norm": True},
    "starcoder2": {"sliding_window": WINDOW},
    "gpt_oss": {
        **_MOE,
        "sliding_window": WINDOW,
        "num_local_experts": 4,
        "layer_types": ["sliding_attention", "full_attention"] * 2,
    },
    "exaone4": {"sliding_window": WINDOW, "sliding_window_pattern": 2},
}


def config(model_type: str, vocab_size: int) -> Any:
    """The family's tiny config; the test is skipped when this transformers has no such model_type."""
    from transformers import CONFIG_MAPPING, AutoConfig

    if model_type not in CONFIG_MAPPING:
        pytest.skip(f"this transformers has no {model_type!r} model")
    return AutoConfig.for_model(
        model_type,
        vocab_size=vocab_size,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=4,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        max_position_embeddings=128,
        tie_word_embeddings=False,
        pad_token_id=0,
        bos_token_id=None,
        eos_token_id=None,
        **FAMILIES[model_type],
    )


def model(model_type: str, vocab_size: int, seed: int = 0, *, norm_gains: bool = False) -> Any:
    """A random model of the family in eval mode, its q/k widened so that rows are peaked, and its
    sink logits (where it has them) random, so that the sink takes a real share. ``norm_gains``: the
    layers' norm weights random too (they start as all 0 or all 1, a gain of 1 everywhere)."""
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    net = AutoModelForCausalLM.from_config(config(model_type, vocab_size))
    with torch.no_grad():
        for name, param in net.named_parameters():
            if name.endswith(("q_proj.weight", "k_proj.weight", "qkv_proj.weight")):
                param.mul_(8.0)
            elif name.endswith("self_attn.sinks"):
                param.copy_(torch.randn_like(param))
            elif norm_gains and name.startswith("model.layers.") and name.endswith("layernorm.weight"):
                param.add_(0.5 * torch.randn_like(param))
    return net.float().eval()


def save(path: Path, model_type: str, tokenizer: Any, *, norm_gains: bool = False) -> Path:
    """The family's tiny model and ``tokenizer`` saved as an HF folder (config, weights, tokenizer)."""
    net = model(model_type, len(tokenizer), norm_gains=norm_gains)
    net.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
