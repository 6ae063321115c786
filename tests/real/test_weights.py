"""`weights`: core against eager rows, the view maths, the CLI and JSON schema, a render snapshot."""

from __future__ import annotations

import pytest
import torch

from attnscope.core.weights import weights

import reference
from conftest import SEED


def eager_query_rows(loaded, text, q):
    ids = torch.tensor([loaded.tokenizer(text)["input_ids"]])
    attentions = reference.eager_attentions(loaded.model, ids)
    return torch.stack([a[0, :, q, : q + 1] for a in attentions])  # (L, H, q+1)


@pytest.mark.slow
def test_real_model_seed_and_chat(real_loaded):
    r = weights(real_loaded, SEED, query="그것을")
    assert r.model.num_hidden_layers == 24 and r.model.num_attention_heads == 14 and r.model.num_key_value_heads == 2
    assert [t.label for t in r.tokens][:3] == ["민", "수", "는"]
    assert any(t.piece == "1/2" and t.text.strip() == "샀" for t in r.tokens)
    rows = torch.tensor(r.weights)
    assert torch.allclose(rows.sum(-1), torch.ones(24, 14), atol=1e-4)
    ref = eager_query_rows(real_loaded, SEED, r.query.index)
    assert float((rows - ref).abs().max()) < 1e-4
    chat = weights(real_loaded, "토마토는 과일일까 채소일까?", chat=True, system="짧게 답해.", layer="-1")
    assert chat.tokens[0].label == "<|im_start|>" and chat.query.index == len(chat.tokens) - 1
    assert chat.chart.total == pytest.approx(1.0, abs=1e-4)
