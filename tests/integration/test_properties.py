"""Invariants, property-tested with hypothesis over random tiny configs and prompts.

Configs vary the query heads and KV heads (GQA ratios 1, 2, 3 and 7), the layers (1-3)
and the padding (none, left, right, batches of up to three prompts); prompts are drawn
from a small alphabet of Korean syllables, ASCII, whitespace, punctuation and
multi-byte characters (é, 😀) so that characters split across tokens. The reference is
always independent: eager ``output_attentions`` of the same model, the tokenizer's own
padding, or a sequence run alone. Models are built once per config and cached; the
whole module runs in well under two minutes on 2 cores (``HYPOTHESIS_PROFILE=thorough``
runs ten times more examples).
"""

from __future__ import annotations

import functools
from typing import Any

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnscope.capture import anatomy, engine, hooks
from attnscope.core.prompt.tokens import encode
from attnscope.core.weights.single import query_rows
from attnscope.model import Loaded
from attnscope.results.common import ModelInfo

from support import reference, tiny
from support.properties import any_text, check_readable, prompts

# (num_attention_heads, num_key_value_heads): GQA ratios 1, 2, 3, 7
HEADS = [(1, 1), (3, 3), (4, 2), (6, 2), (7, 1), (14, 2)]


configs = st.tuples(st.sampled_from(HEADS), st.integers(min_value=1, max_value=3))


@functools.cache
def tokenizer() -> Any:
    return tiny.train_tokenizer()


@functools.cache
def model_for(heads: int, kv: int, layers: int) -> Any:
    config = tiny.make_config(
        len(tokenizer()), num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=kv
    )
    model = tiny.make_model(config, seed=heads * 100 + kv * 10 + layers)
    engine.prepare(model)
    return model


def eager_attentions(model: Any, ids: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Eager ``output_attentions``: (layer) -> (B, H, T, T), with the same position ids."""
    return reference.eager_attentions(model, ids, mask)


def padded(texts: list[str], side: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(input_ids, attention_mask), both (B, T), padded by the tokenizer itself."""
    tok = tokenizer()
    tok.padding_side = "left" if side == "none" else side
    enc = tok(texts, padding=True, return_tensors="pt")
    return enc["input_ids"], enc["attention_mask"]


@given(
    config=configs,
    side=st.sampled_from(["none", "left", "right"]),
    texts=st.lists(prompts, min_size=2, max_size=3),
    data=st.data(),
)
def test_captured_rows_equal_eager_and_keep_the_invariants(
    config: tuple[tuple[int, int], int], side: str, texts: list[str], data: st.DataObject
) -> None:
    (heads, kv), layers = config
    if side == "none":
        texts = texts[:1]
    model = model_for(heads, kv, layers)
    ids, mask = padded(texts, side)
    B, T = ids.shape
    # A random set of query positions per batch (the same count for every sequence).
    n_pos = data.draw(st.integers(min_value=1, max_value=T), label="queries")
    positions = torch.stack(
        [
            torch.tensor(sorted(data.draw(st.sets(st.integers(0, T - 1), min_size=n_pos, max_size=n_pos))))
            for _ in range(B)
        ]
    )  # (B, P)
    wanted = frozenset(data.draw(st.sets(st.integers(0, layers - 1), min_size=1), label="layers"))
    names = [f"rows.{layer}" for layer in sorted(wanted)]
    run = hooks.capture(anatomy.of(model), ids, mask, [*names, "mask.0"], positions=positions, cpu=True, stop=True)
    got = run.captured
    assert got is not None
    ref = eager_attentions(model, ids, mask)
    real_key = mask.bool()  # (B, T)
    for layer in wanted:
        rows = got.rows[layer]  # (B, H, P, T)
        assert rows.dtype == torch.float32 and rows.shape == (B, heads, n_pos, T)
        expect = torch.gather(ref[layer], 2, positions[:, None, :, None].expand(B, heads, n_pos, T))  # (B, H, P, T)
        real_query = torch.gather(real_key, 1, positions)[:, None, :].expand(B, heads, n_pos)  # (B, H, P)
        diff = (rows - expect).abs().amax(dim=-1)  # (B, H, P)
        assert float(diff[real_query].max()) < 1e-5
        sums = rows.sum(dim=-1)[real_query]
        assert torch.allclose(sums, torch.ones_like(sums), atol=1e-5)
        later = torch.arange(T)[None, None, None, :] > positions[:, None, :, None]  # (B, 1, P, T)
        assert float(torch.where(later, rows, 0.0).abs().max()) == 0.0
        pad_col = ~real_key[:, None, None, :]  # (B, 1, 1, T)
        assert float(torch.where(pad_col, rows, 0.0).abs().max()) == 0.0
        assert torch.isfinite(rows).all()
    _mask_agrees(run.masks[0], mask)


def _mask_agrees(mask4d: torch.Tensor | None, mask2d: torch.Tensor) -> None:
    """The grid attnscope draws (core.maskgrid) equals the mask the model's layer 0 received."""
    maskgrid = pytest.importorskip("attnscope.core.maskgrid")
    B, T = mask2d.shape
    for b in range(B):
        grid = torch.tensor(maskgrid.combined(mask2d[b].tolist()), dtype=torch.bool)  # (T, T)
        if mask4d is None:  # sdpa's is_causal fast path: pure causal, no padding
            assert bool(mask2d[b].all())
            model_grid = torch.ones(T, T).tril().bool()
        else:
            m = mask4d[b, 0]  # (T, T)
            model_grid = m if m.dtype == torch.bool else m > torch.finfo(m.dtype).min / 2
        real = mask2d[b].bool()  # pad query rows differ by design (drawn as '-'); compare real rows
        assert torch.equal(grid[real], model_grid[real])


@given(config=configs, side=st.sampled_from(["left", "right"]), texts=st.lists(prompts, min_size=2, max_size=3))
def test_a_sequence_in_a_padded_batch_gets_the_rows_it_gets_alone(
    config: tuple[tuple[int, int], int], side: str, texts: list[str]
) -> None:
    (heads, kv), layers = config
    model = model_for(heads, kv, layers)
    tok = tokenizer()
    info = ModelInfo(
        id="tiny",
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv,
        dtype="float32",
        device="cpu",
        model_type="qwen2",
        head_dim=8,
    )
    loaded = Loaded(model=model, tokenizer=tok, info=info, source="folder", path="tiny")
    encs = [encode(tok, t) for t in texts]
    queries = [len(e.ids) - 1 for e in encs]
    all_layers = list(range(layers))
    together = query_rows(loaded, encs, queries, all_layers, side)
    for enc, q, rows in zip(encs, queries, together, strict=True):
        (alone,) = query_rows(loaded, [enc], [q], all_layers, side)
        assert rows.shape == alone.shape == (layers, heads, q + 1)
        assert float((rows - alone).abs().max()) < 1e-5


@settings(max_examples=10 * settings().max_examples)  # cheap: no model
@given(text=st.one_of(prompts, any_text), chat=st.booleans())
def test_readable_tokens_give_back_the_prompt_and_words_cover_every_token(text: str, chat: bool) -> None:
    check_readable(tokenizer(), text, chat)


def test_rows_are_fp32_from_a_bf16_model(loaded: Any) -> None:
    """Rows come out in fp32, from bf16 q/k upcast before the softmax."""
    model = tiny.make_model(tiny.make_config(len(loaded.tokenizer))).to(torch.bfloat16)
    engine.prepare(model)
    ids = torch.tensor([loaded.tokenizer("민수는 사과를 샀다. 그는 그것을 먹었다.")["input_ids"]])  # (1, T)
    T = ids.shape[1]
    run = hooks.capture(
        anatomy.of(model),
        ids,
        torch.ones_like(ids),
        ["rows.1", "q.1", "k.1"],
        positions=torch.arange(T)[None],
        cpu=True,
    )
    rows = run["rows.1"]  # (1, H, T, T)
    assert rows.dtype == torch.float32
    q, k = run["q.1"], run["k.1"]  # (1, H, T, D), (1, KV, T, D), bf16
    assert q.dtype == torch.bfloat16
    k_per_head = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)  # (1, H, T, D)
    scores = (q.double() @ k_per_head.double().transpose(-1, -2)) * q.shape[-1] ** -0.5  # (1, H, T, T)
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    ref = torch.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1)
    assert float((rows.double() - ref).abs().max()) < 1e-6
    assert float((rows.sum(-1) - 1).abs().max()) < 1e-6
    # A bf16 softmax would be visibly off: the check above can tell the two apart.
    low = torch.softmax(scores.masked_fill(~causal, float("-inf")).bfloat16(), dim=-1)
    assert float((low.double() - ref).abs().max()) > 1e-4
