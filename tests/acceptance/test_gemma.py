"""Gemma 3 270M, the real checkpoint of a second family, against references outside attnscope.

The model is loaded once for the module (attnscope's capture) and once more as plain transformers
with eager attention from the same converted folder (``support.causal.Plain``): the rows come
from eager ``output_attentions``, the causal commands from hooks on that copy's own forward (a
head's slice of o_proj's input zeroed by a forward pre-hook, an additive mask handed to the
attention, a donor's activation copied in), ``generate`` from that copy's greedy ``generate``,
and ``stats`` from eager rows written out position by position (``support.statsref``).

Gemma 3 prepends BOS, has 18 layers (full attention at 5, 11 and 17, a 512-key sliding window
elsewhere), 4 query heads sharing 1 KV head of 256 dims, q/k norms and a norm after each block.
The long prompt (more than 512 tokens) puts the query past the window: its rows in the sliding
layers are exactly 0 on every key further back than 512 tokens, and eager agrees.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from attnscope.core.prompt.spec import Selection
from attnscope.core.prompt.targets import Answer
from attnscope.devtools.models_doc import assert_measured

from support import SEED
from support.causal import Plain, max_diff

ENGLISH = "The cat sat on the mat because it was tired"
CAT = "The cat sat on the mat"  # the causal commands' prompt (short: each reference is a forward per intervention)
DOG = "The dog sat on the mat"  # one token different, the same length
TARGET = "."
WINDOW = 512
FULL = [5, 11, 17]
# More than 512 tokens: numbered copies of one sentence, so no two copies are the same tokens.
LONG = " ".join(f"Note {n}: the keeper lit the lamp and the ships turned from the rocks." for n in range(1, 41))


@pytest.fixture(scope="module")
def gemma(real_gemma: Path) -> Any:
    from attnscope.capture.engine import load

    return load(str(real_gemma), device="cpu", dtype="float32")


@pytest.fixture(scope="module")
def plain(gemma: Any) -> Plain:
    """The same converted folder under plain transformers, eager attention."""
    return Plain(Path(gemma.path), attn="eager")


def documented(key: str, value: float) -> None:
    """What this test measured is what docs/models.md says (REAL in attnscope/devtools/models_doc.py)."""
    assert_measured("gemma3_text", key, value)


def eager_rows(plain: Plain, text: str) -> torch.Tensor:
    """(L, H, T, T) eager attention of the plain copy."""
    with torch.no_grad():
        out = plain.model(input_ids=plain.ids(text), output_attentions=True)
    return torch.stack([a[0] for a in out.attentions])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "text", "query"), [("english", ENGLISH, "it"), ("seed", SEED, "그것을"), ("long", LONG, None)]
)
def test_weights_rows_equal_eager(gemma: Any, plain: Plain, name: str, text: str, query: str | None) -> None:
    from attnscope.core.weights import weights

    r = weights(gemma, text, query=query)
    ids = plain.ids(text)[0].tolist()
    assert [t.id for t in r.tokens] == ids and ids[0] == plain.tok.bos_token_id  # BOS at position 0
    q = r.query.index
    rows = torch.tensor(r.weights)  # (18, 4, q+1): every layer and head
    want = eager_rows(plain, text)[:, :, q, : q + 1]
    assert rows.shape == want.shape == (18, 4, q + 1)
    diff = float((rows - want).abs().max())
    assert diff < 1e-4
    assert torch.allclose(rows.sum(-1), torch.ones(18, 4), atol=1e-4)
    documented(f"weights {name}", diff)
    if text is LONG:
        assert q == len(ids) - 1 >= WINDOW + 50
        past = q - WINDOW + 1  # keys 0 .. past-1 lie further back than the window
        sliding = [layer for layer in range(18) if layer not in FULL]
        assert torch.all(rows[sliding, :, :past] == 0) and torch.all(want[sliding, :, :past] == 0)
        assert torch.all(rows[FULL, :, 0] > 0)  # the full layers still reach BOS
        assert torch.all(rows[sliding, :, past:].sum(-1) > 1 - 1e-4)
        documented(
            "weights long, past the window", float((rows[sliding, :, :past] - want[sliding, :, :past]).abs().max())
        )


@pytest.mark.slow
def test_ablate_equals_a_hook_on_o_proj(gemma: Any, plain: Plain) -> None:
    from attnscope.core.causal.ablate import ablate

    layers = [0, 5, 11, 17]  # sliding and full layers, the first and the last
    got = ablate(gemma, CAT, answer=Answer(TARGET), selection=Selection(layers=layers))
    ref = plain.ablate(CAT, TARGET, layers=layers)  # each head's slice of o_proj's input zeroed, one at a time
    assert abs(got.baseline - plain.logprob(CAT, TARGET)) < 1e-4
    assert got.layers == layers and max_diff(got.effects, ref) < 1e-4
    assert max(abs(v) for row in ref for v in row) > 1e-2  # the heads matter: the check can fail
    documented("ablate", max_diff(got.effects, ref))


@pytest.mark.slow
def test_knockout_equals_an_edited_eager_mask(gemma: Any, plain: Plain) -> None:
    from attnscope.core.causal.knockout import knockout

    layers = [3, 4, 5]  # two sliding layers and a full one, blocked at once
    got = knockout(gemma, ENGLISH, key="cat", query="it", answer=Answer(TARGET), selection=Selection(layers=layers))
    keys, queries = plain.span(ENGLISH, " cat"), plain.span(ENGLISH, " it")
    assert got.key.span == keys and got.query.span == queries
    base = plain.knockout(ENGLISH, TARGET, [], queries, keys, None)
    assert abs(got.baseline - base) < 1e-4
    ((window,),) = [got.windows]
    effect = plain.knockout(ENGLISH, TARGET, layers, queries, keys, None) - base
    assert window.layers == layers and abs(window.effect - effect) < 1e-4
    assert abs(effect) > 1e-3
    documented("knockout", abs(window.effect - effect))


@pytest.mark.slow
def test_patch_equals_a_donor_copied_in(gemma: Any, plain: Plain) -> None:
    from attnscope.core.causal.patch import patch

    layers = [5, 17]
    got = patch(
        gemma, CAT, DOG, answer=Answer(TARGET), sites=["head", "resid", "k", "v"], selection=Selection(layers=layers)
    )
    assert abs(got.clean - plain.logprob(CAT, TARGET)) < 1e-4
    assert abs(got.corrupt - plain.logprob(DOG, TARGET)) < 1e-4
    worst = 0.0
    for site, raw in (
        ("head", got.heads_metric),
        ("resid", got.residual_metric),
        ("k", got.k_metric),
        ("v", got.v_metric),
    ):
        ref = plain.patch(DOG, CAT, site, TARGET, layers=layers)  # denoise: the clean run's piece into the corrupt one
        assert raw is not None and max_diff(raw, ref) < 1e-4, site
        worst = max(worst, max_diff(raw, ref))
    documented("patch", worst)
    assert got.residual_metric is not None
    assert max(abs(v - got.corrupt) for row in got.residual_metric for v in row) > 1e-2
    assert got.shared_by == [[0, 1, 2, 3]]  # one KV head for the four query heads


@pytest.mark.slow
def test_generate_equals_transformers_greedy_and_eager_rows(gemma: Any, plain: Plain) -> None:
    from attnscope.core.generate import generate, stop_ids

    result = generate(gemma, ENGLISH, max_new_tokens=4)
    ids = plain.ids(ENGLISH)
    out = plain.model.generate(
        ids,
        attention_mask=torch.ones_like(ids),
        max_new_tokens=4,
        do_sample=False,
        eos_token_id=stop_ids(plain.model, plain.tok),
        pad_token_id=0,
    )
    new = [s.id for s in result.steps]
    assert new == out[0, ids.shape[1] :].tolist() and len(new) >= 1
    eager = eager_rows(plain, plain.tok.decode(ids[0].tolist() + new, skip_special_tokens=True))
    assert eager.shape[-1] == ids.shape[1] + len(new)  # the text re-encodes to the same ids
    worst = 0.0
    for step in result.steps:
        got = torch.tensor(step.weights)  # (L, H, keys)
        worst = max(worst, float((got - eager[:, :, step.index - 1, : step.index]).abs().max()))
    assert worst < 1e-4, worst
    documented("generate", worst)


@pytest.mark.slow
def test_info_from_the_header_is_the_loaded_model(gemma: Any, real_gemma: Path) -> None:
    from attnscope.core.info import info

    r = info(str(real_gemma))
    loaded = gemma.info
    assert r.layer_kinds == loaded.layer_kinds and [i for i, k in enumerate(r.layer_kinds) if k == "full"] == FULL
    assert r.sliding_window == gemma.model.config.sliding_window == WINDOW
    cfg = gemma.model.config
    for name in ("num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim", "hidden_size"):
        assert getattr(r, name) == getattr(cfg, name), name
    assert r.rope_theta_by_kind == {
        "full": cfg.rope_parameters["full_attention"]["rope_theta"],
        "sliding": cfg.rope_parameters["sliding_attention"]["rope_theta"],
    }
    assert r.num_parameters == sum(p.numel() for p in gemma.model.parameters())


@pytest.mark.slow
def test_stats_equal_eager(gemma: Any, tmp_path: Path) -> None:
    import json

    from attnscope.core.prompt.tokens import encode
    from attnscope.core.stats import driver
    from attnscope.core.stats.options import StatsConfig

    from support.statsref import BASE, reference

    prompts = [ENGLISH, SEED, "def add(a, b):\n    return a + b", "the the the cat cat"]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"prompt": p}) + "\n" for p in prompts), encoding="utf-8")
    res = driver.stats(gemma, str(corpus), StatsConfig(batch_size=2, bootstrap=10))  # padded pairs
    ref = reference(gemma.model, [encode(gemma.tokenizer, p).ids for p in prompts])
    worst = 0.0
    for name in BASE:
        mean, std, n = ref[name]
        got = res.stats[name]
        assert all(v == n for row in got.n for v in row), name
        np.testing.assert_allclose(np.array(got.mean, float), mean, rtol=1e-4, atol=1e-5, err_msg=name)
        np.testing.assert_allclose(np.array(got.std, float), std, rtol=1e-3, atol=1e-5, err_msg=name)
        worst = max(worst, float(np.abs(np.array(got.mean, float) - mean).max()))
    assert ref["induction"][2] > 0 and ref["duplicate_token"][2] > 0
    documented("stats", worst)


@pytest.mark.slow
def test_flow_is_complete(gemma: Any) -> None:
    """Each layer's parts add up to what the model computes (each post-block norm's scale frozen per
    position, as the pre-norm's already is), as on Qwen: within float rounding of the residual,
    whose entries reach the thousands in Gemma 3, so the bound is relative to each layer's
    largest |activation|."""
    from attnscope.core.causal.flow import flow

    from support.statsref import eager

    r = flow(gemma, ENGLISH)
    assert len(r.layers) == 18 and r.edges
    _, hidden = eager(gemma.model, r.token_ids)  # each layer's output (T, D)
    scale = [float(np.abs(h).max()) for h in hidden]
    assert max(scale) > 100  # the absolute errors below are rounding at this size
    worst = max(max(c.attention_error, c.mlp_error) / scale[layer] for layer, c in enumerate(r.layers))
    assert worst < 1e-5, worst
    documented("flow", worst)


@pytest.mark.slow
def test_reuse_on_a_prefix_that_ends_inside_a_word(gemma: Any) -> None:
    """Gemma's pieces are SentencePiece, not byte-level: a prefix cut inside a word ('ma' + 't')
    gives ids the whole text would not, and the tokens are read from the pieces themselves."""
    from attnscope.core.reuse import reuse

    r = reuse(gemma, "The cat sat on the ma", "t because it was tired")
    assert [t.label for t in r.tokens][:8] == ["<bos>", "The", "cat", "sat", "on", "the", "ma", "t"]
    assert "".join(t.text for t in r.tokens) == "The cat sat on the mat because it was tired"
    assert r.prefix_tokens == 7
