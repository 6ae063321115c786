"""A tiny HF folder written out as a GGUF file, for the GGUF loading tests."""

from __future__ import annotations

import json
from pathlib import Path

from support import tiny


def write_tiny_gguf(model_dir: Path, out: Path, arch: str = "qwen2", quantized: bool = False) -> Path:
    """Write the HF folder ``model_dir`` (a tiny Qwen2 + byte-level BPE) as an F32 GGUF.

    ``arch`` is the GGUF's general.architecture (``llama``: transformers reorders q and k rows on
    loading, and drops the q/k/v biases). ``quantized``: the matrices are stored as Q8_0 blocks,
    the MLP's down projections as F16, as llama.cpp mixes them; norms and biases stay F32.
    """
    import gguf
    import numpy as np
    from safetensors.torch import load_file
    from transformers import AutoConfig, AutoTokenizer

    cfg = AutoConfig.from_pretrained(model_dir)
    tok = AutoTokenizer.from_pretrained(model_dir)
    state = load_file(str(model_dir / "model.safetensors"))
    writer = gguf.GGUFWriter(str(out), arch)
    writer.add_name("tiny-qwen2")
    writer.add_block_count(cfg.num_hidden_layers)
    writer.add_context_length(cfg.max_position_embeddings)
    writer.add_embedding_length(cfg.hidden_size)
    writer.add_feed_forward_length(cfg.intermediate_size)
    writer.add_head_count(cfg.num_attention_heads)
    writer.add_head_count_kv(cfg.num_key_value_heads)
    writer.add_rope_freq_base(float(cfg.rope_parameters["rope_theta"]))
    writer.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    writer.add_file_type(7 if quantized else 0)  # mostly Q8_0, or all F32
    spec = json.loads(tok.backend_tokenizer.to_str())
    tokens: list[str] = [""] * len(tok)
    for text, index in spec["model"]["vocab"].items():
        tokens[index] = text
    for index, added in tok.added_tokens_decoder.items():
        tokens[index] = added.content
    special = {tok.convert_tokens_to_ids(s) for s in tiny.SPECIALS}
    writer.add_tokenizer_model("gpt2")  # byte-level BPE
    writer.add_tokenizer_pre("default")  # GPT-2's split regex, as the tiny tokenizer uses
    writer.add_token_list(tokens)
    writer.add_token_types([3 if i in special else 1 for i in range(len(tokens))])  # 3 = CONTROL
    writer.add_token_merges([m if isinstance(m, str) else " ".join(m) for m in spec["model"]["merges"]])
    writer.add_eos_token_id(tok.eos_token_id)
    writer.add_pad_token_id(tok.pad_token_id)
    writer.add_bos_token_id(tok.pad_token_id)
    writer.add_add_bos_token(False)
    writer.add_chat_template(tiny.CHAT_TEMPLATE)
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.QWEN2, cfg.num_hidden_layers)
    for name, tensor in state.items():
        base, suffix = name.rsplit(".", 1)
        gguf_name = names.get_name(base)
        assert gguf_name is not None, name
        data = tensor.float().numpy()  # (out, in), as llama.cpp writes
        if quantized and data.ndim == 2 and "down_proj" in name:
            writer.add_tensor(f"{gguf_name}.{suffix}", data.astype(np.float16))
        elif quantized and data.ndim == 2:
            kind = gguf.GGMLQuantizationType.Q8_0
            blocks = gguf.quants.quantize(data, kind)
            writer.add_tensor(f"{gguf_name}.{suffix}", blocks, raw_shape=blocks.shape, raw_dtype=kind)
        else:
            writer.add_tensor(f"{gguf_name}.{suffix}", data)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return out
