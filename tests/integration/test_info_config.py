"""``info``: config facts without weights, against the config, the loaded model and a GGUF written here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

from attnscope.core.info import count_parameters, gqa_groups, info
from attnscope.errors import AttnscopeError
from attnscope.model.gguf_header import read_gguf_header


def test_gqa_grouping_follows_repeat_kv():
    # transformers' repeat_kv: query head h reads KV head h // (heads // kv_heads)
    assert [g.heads for g in gqa_groups(14, 2)] == [list(range(7)), list(range(7, 14))]
    assert [g.heads for g in gqa_groups(7, 1)] == [list(range(7))]
    with pytest.raises(AttnscopeError):
        gqa_groups(14, 3)


@pytest.mark.parametrize(
    "config",
    [
        Qwen2Config(
            vocab_size=50,
            hidden_size=32,
            intermediate_size=48,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            tie_word_embeddings=True,
        ),
        Qwen2Config(
            vocab_size=50,
            hidden_size=32,
            intermediate_size=48,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=1,
            tie_word_embeddings=False,
        ),
        LlamaConfig(
            vocab_size=50,
            hidden_size=32,
            intermediate_size=48,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            attention_bias=True,
        ),
        LlamaConfig(
            vocab_size=50,
            hidden_size=32,
            intermediate_size=48,
            num_hidden_layers=3,
            num_attention_heads=4,
            num_key_value_heads=4,
            head_dim=16,
        ),
    ],
)
def test_parameter_count_equals_a_built_model(config):
    cls = Qwen2ForCausalLM if config.model_type == "qwen2" else LlamaForCausalLM
    model = cls(config)
    assert count_parameters(config.to_dict()) == sum(p.numel() for p in model.parameters())


def write_gguf(path: Path, tied: bool) -> None:
    import gguf

    w = gguf.GGUFWriter(str(path), "qwen2")
    w.add_block_count(2)
    w.add_context_length(4096)
    w.add_embedding_length(16)
    w.add_feed_forward_length(40)
    w.add_head_count(4)
    w.add_head_count_kv(2)
    w.add_rope_freq_base(1000000.0)
    w.add_token_list([f"t{i}" for i in range(30)])
    w.add_chat_template("{{ messages }}")
    w.add_tensor("token_embd.weight", np.zeros((30, 16), dtype=np.float32))
    if not tied:
        w.add_tensor("output.weight", np.zeros((30, 16), dtype=np.float32))
    w.add_tensor("blk.0.attn_q.weight", np.zeros((16, 16), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


@pytest.mark.parametrize("tied", [True, False])
def test_gguf_header_matches_gguf_reader(tmp_path, tied):
    import gguf

    path = tmp_path / "m.gguf"
    write_gguf(path, tied)
    header = read_gguf_header(path)
    reader = gguf.GGUFReader(str(path))
    assert {t.name: int(t.n_elements) for t in reader.tensors} == {
        k: int(np.prod(v)) for k, v in header.tensors.items()
    }
    assert header.metadata["qwen2.block_count"] == reader.fields["qwen2.block_count"].contents()
    assert header.metadata["tokenizer.ggml.tokens"] == 30  # arrays are reported by length
    r = info(str(path))
    assert (r.num_hidden_layers, r.num_attention_heads, r.num_key_value_heads) == (2, 4, 2)
    assert (r.hidden_size, r.intermediate_size, r.head_dim, r.vocab_size) == (16, 40, 4, 30)
    assert r.rope_theta == 1000000.0 and r.max_position_embeddings == 4096 and r.chat_template
    assert r.num_parameters == 30 * 16 * (1 if tied else 2) + 256
    assert r.tie_word_embeddings is tied


def test_hub_id_offline_and_not_cached_is_one_line(tmp_path):
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_HOME=str(tmp_path))
    out = subprocess.run(
        [sys.executable, "-m", "attnscope", "info", "--model", "Qwen/Qwen2.5-0.5B-Instruct"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert out.returncode == 3 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and "not in the local cache" in out.stderr


# GGUF architectures whose header transformers can read, each with a window where its config has one.
_HEADER_ARCHS = {
    "qwen2": None,
    "qwen3": None,
    "llama": None,
    "phi3": None,
    "starcoder2": None,
    "gemma2": 4,
    "gemma3": 4,
}


def write_header_gguf(path: Path, arch: str, window: int | None, layers: int = 12) -> None:
    """A GGUF of metadata and one tensor: what ``info`` reads of a header, for ``arch``."""
    import gguf

    w = gguf.GGUFWriter(str(path), arch)
    w.add_name(f"tiny-{arch}")
    w.add_block_count(layers)
    w.add_context_length(4096)
    w.add_embedding_length(64)
    w.add_feed_forward_length(128)
    w.add_head_count(4)
    w.add_head_count_kv(1)
    w.add_key_length(16)
    w.add_value_length(16)
    w.add_rope_freq_base(1000000.0)
    w.add_layer_norm_rms_eps(1e-6)
    if window is not None:
        w.add_sliding_window(window)
    w.add_token_list([f"t{i}" for i in range(30)])
    w.add_tensor("token_embd.weight", np.zeros((30, 64), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


@pytest.mark.parametrize("arch", sorted(_HEADER_ARCHS))
def test_gguf_layers_and_rope_bases_are_the_loaders_config(tmp_path, arch):
    """The layer kinds, the window and the RoPE bases from the header alone are those of the config
    transformers' GGUF loader makes of the same file (what a conversion writes)."""
    from transformers import AutoConfig

    from attnscope.model.config import layer_kinds, rope_bases

    path = tmp_path / f"{arch}.gguf"
    write_header_gguf(path, arch, _HEADER_ARCHS[arch])
    loaded = AutoConfig.from_pretrained(str(tmp_path), gguf_file=path.name)
    want = getattr(loaded, "text_config", loaded).to_dict()
    r = info(str(path))
    assert r.layer_kinds == layer_kinds(want)
    window = want.get("sliding_window") if "sliding" in r.layer_kinds else None
    assert r.sliding_window == window
    bases = rope_bases(want)
    assert r.rope_theta_by_kind == (bases if len(set(bases.values())) > 1 else {})
    assert r.rope_theta == bases.get("full", want.get("rope_parameters", {}).get("rope_theta"))
    if arch == "gemma3":  # the pattern and the second base come from the config class, not the header
        assert r.layer_kinds == (["sliding"] * 5 + ["full"]) * 2 and r.rope_theta_by_kind == {
            "full": 1e6,
            "sliding": 1e4,
        }
