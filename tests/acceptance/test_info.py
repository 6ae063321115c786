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
