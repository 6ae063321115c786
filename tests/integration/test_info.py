"""``info``: config facts without weights, against the config, the loaded model and a GGUF written here."""

from __future__ import annotations

import json

import pytest

from attnscope.core.info import info

from support.notorch import imported


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


def test_info_does_not_import_torch(model_dir):
    heavy, _ = imported(f"from attnscope.core.info import info; info({str(model_dir)!r})", ("torch",))
    assert heavy == []


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
