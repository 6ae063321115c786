"""``info``: config facts without weights, against the config, the loaded model and a GGUF written here."""

from __future__ import annotations

import pytest

from attnscope.core.info import info
from attnscope.render import render, to_text


@pytest.mark.slow
def test_real_gguf(real_model):
    r = info(str(real_model))
    assert (r.num_hidden_layers, r.num_attention_heads, r.num_key_value_heads, r.head_dim) == (24, 14, 2, 64)
    assert (r.hidden_size, r.intermediate_size, r.vocab_size) == (896, 4864, 151936)
    assert r.rope_theta == 1000000.0 and r.max_position_embeddings == 32768
    assert r.num_parameters == 630167424 and r.chat_template
    assert "7 query heads share each" in to_text(render(r))


@pytest.mark.slow
def test_real_gemma_header_is_the_loaded_config(real_gemma):
    """Gemma 3 270M from its header alone: full attention at layers 5, 11 and 17, a 512-key window
    elsewhere, RoPE base 1e6 on the full layers and 1e4 on the sliding ones, as transformers' GGUF
    loader (what the conversion writes) configures it."""
    from transformers import AutoConfig

    from attnscope.model.config import layer_kinds, rope_bases

    r = info(str(real_gemma))
    want = AutoConfig.from_pretrained(str(real_gemma.parent), gguf_file=real_gemma.name).to_dict()
    assert r.layer_kinds == layer_kinds(want)
    assert [i for i, k in enumerate(r.layer_kinds) if k == "full"] == [5, 11, 17]
    assert r.sliding_window == want["sliding_window"] == 512
    assert r.rope_theta_by_kind == rope_bases(want) == {"full": 1e6, "sliding": 1e4}
    assert (r.num_hidden_layers, r.num_attention_heads, r.num_key_value_heads, r.head_dim) == (18, 4, 1, 256)
    text = to_text(render(r))
    assert "full attention 5,11,17" in text and "10,000 on sliding-window layers" in text
