"""``info``: config facts without weights, against the config, the loaded model and a GGUF written here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

from attnscope.core.info import count_parameters, gqa_groups, info
from attnscope.errors import AttnscopeError
from attnscope.ggufheader import read_gguf_header
from attnscope.render import render, to_text


def test_folder_facts_match_the_loaded_model(model_dir, loaded):
    r = info(str(model_dir))
    cfg = loaded.model.config
    assert (r.num_hidden_layers, r.num_attention_heads, r.num_key_value_heads) == (3, 4, 2)
    assert (r.head_dim, r.hidden_size, r.intermediate_size) == (8, 32, 64)
    assert r.rope_theta == cfg.rope_parameters["rope_theta"] == 10000.0
    assert r.max_position_embeddings == 128 and r.vocab_size == cfg.vocab_size
    assert r.num_parameters == sum(p.numel() for p in loaded.model.parameters())
    assert [(g.kv_head, g.heads) for g in r.gqa_groups] == [(0, [0, 1]), (1, [2, 3])]
    assert r.chat_template is True and r.source == "folder"


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


def test_info_does_not_import_torch(model_dir):
    code = f"import sys; from attnscope.core.info import info; info({str(model_dir)!r}); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_cli_json_and_view(cli, model_dir):
    res = cli("info", "--model", str(model_dir), "--json")
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["schema"] == "attnscope.info/2"
    for key in (
        "num_hidden_layers",
        "num_attention_heads",
        "num_key_value_heads",
        "head_dim",
        "hidden_size",
        "intermediate_size",
        "rope_theta",
        "max_position_embeddings",
        "vocab_size",
        "num_parameters",
    ):
        assert key in doc
    assert doc["gqa_groups"] == [{"kv_head": 0, "heads": [0, 1]}, {"kv_head": 1, "heads": [2, 3]}]
    text = cli("info", "--model", str(model_dir)).stdout
    assert "num_key_value_heads" in text and "0, 1" in text and "attnscope: sdpa + exact fp32 rows" in text


@pytest.mark.parametrize(
    "make, message, code",
    [
        (lambda p: p / "nope", "no such file or folder", 3),
        (lambda p: (p / "bad.gguf").write_bytes(b"not a gguf at all") and p / "bad.gguf", "not a readable GGUF", 3),
        (lambda p: (p / "empty").mkdir() or p / "empty", "no config.json", 3),
    ],
)
def test_bad_models(cli, tmp_path, make, message, code):
    res = cli("info", "--model", str(make(tmp_path)))
    assert res.exit_code == code and res.stdout == ""
    assert message in res.stderr


@pytest.mark.slow
def test_real_gguf(real_model):
    r = info(str(real_model))
    assert (r.num_hidden_layers, r.num_attention_heads, r.num_key_value_heads, r.head_dim) == (24, 14, 2, 64)
    assert (r.hidden_size, r.intermediate_size, r.vocab_size) == (896, 4864, 151936)
    assert r.rope_theta == 1000000.0 and r.max_position_embeddings == 32768
    assert r.num_parameters == 630167424 and r.chat_template
    assert "7 query heads share each" in to_text(render(r))


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
