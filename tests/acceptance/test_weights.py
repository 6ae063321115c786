"""`weights`: core against eager rows, the view maths, the CLI and JSON schema, a render snapshot."""

from __future__ import annotations

import pytest
import torch

from attnscope.core.prompt.spec import ChatSpec, Selection
from attnscope.core.weights import weights

from support import SEED, reference


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
    chat = weights(
        real_loaded, "토마토는 과일일까 채소일까?", chat=ChatSpec(system="짧게 답해."), selection=Selection(layers=[-1])
    )
    assert chat.tokens[0].label == "<|im_start|>" and chat.query.index == len(chat.tokens) - 1
    assert chat.chart.total == pytest.approx(1.0, abs=1e-4)


@pytest.mark.slow
def test_real_model_by_segment_over_a_conversation(real_loaded):
    """Qwen2.5's template inserts its system message; --by segment bars are the rows summed over each segment."""
    from attnscope.core.prompt.segments import parse_messages
    from attnscope.results.weights import WeightsView

    messages = parse_messages(
        [
            {"role": "user", "content": "토마토는 과일인가요, 채소인가요?"},
            {"role": "assistant", "content": "식물학으로는 과일이고, 요리에서는 채소로 씁니다."},
            {"role": "user", "content": "그럼 수박은요?"},
        ]
    )
    r = weights(
        real_loaded,
        None,
        chat=ChatSpec(messages=messages),
        selection=Selection(layers=[20]),
        view=WeightsView(by="segment"),
    )
    assert r.template is not None
    assert r.template.inserted_system == "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."
    labels = [(s.kind, s.turn, s.inserted) for s in r.segments]
    assert labels == [
        ("template", None, False),
        ("system", None, True),
        ("user", 1, False),
        ("assistant", 1, False),
        ("user", 2, False),
    ]
    rows = torch.tensor(r.weights)  # (1, 14, T): raw, token space
    for bar in r.chart.bars:
        by_hand = float(rows[..., r.segments[bar.segment].tokens].sum(-1).mean())
        assert bar.weight == pytest.approx(by_hand, abs=1e-5)
    assert r.chart.total == pytest.approx(1.0, abs=1e-4)
    for segment, message in zip(r.segments[2:], messages, strict=True):
        chars = sorted({c for i in segment.tokens for c in range(r.tokens[i].start, r.tokens[i].end)})
        assert "".join(r.text[c] for c in chars) == message.content  # a character split over tokens once
