"""attnscope mask: the note's figure, real padded batches against eager, and a broken mask caught."""

from __future__ import annotations

import json

import pytest
import torch

from attnscope.capture import engine
from attnscope.core import maskgrid
from attnscope.core.mask import mask
from attnscope.core.prompt.spec import ChatSpec
from attnscope.errors import AttnscopeError
from attnscope.render import render, to_text
from attnscope.results import from_json
from attnscope.results.mask import MaskKind

from support import SEED
from support.notefigure import NOTE_FIGURE, NOTE_TITLES, grids
from support.notefigure import lines as _lines

# `attnscope mask --lang ko`: the note's figure, with a legend and closing lines of our own.
ILLUSTRATION_KO = """\
행은 계산하는 위치, 열은 그 행이 섞을 수 있는 위치다. 1은 섞는 칸, .은 비율이 0인 칸이다.

causal mask만               위치 0이 빈칸일 때 (padding mask 추가)
     0  1  2  3                  0  1  2  3
0    1  .  .  .             0    -  -  -  -   빈칸 행이라 결과는 버린다
1    1  1  .  .             1    .  1  .  .
2    1  1  1  .             2    .  1  1  .
3    1  1  1  1             3    .  1  1  1

causal mask는 위치의 앞뒤만 보고 정해지므로, 입력이 무엇이든 같은 삼각형이다.
padding mask는 빈칸이 몇 개이고 어디에 있는지를 따르므로 입력마다 다르다.
앞쪽 빈칸은 진짜 토큰보다 먼저 있어서 causal mask로는 지울 수 없다. 그래서 두 마스크를 함께 건다.
"""


def test_default_illustration_snapshot(cli):
    res = cli("mask", "--lang", "ko")
    assert res.exit_code == 0, res.stderr
    assert grids(res.stdout) == grids(NOTE_FIGURE)  # the note's grids, cell for cell
    assert _lines(res.stdout)[2] == NOTE_TITLES
    assert _lines(res.stdout) == _lines(ILLUSTRATION_KO)


@pytest.mark.parametrize(
    "args,message",
    [
        (["--size", "0"], "--size 0"),
        (["--pad", "4"], "--pad 4 must be smaller than --size 4"),
        (["--size", "3", "--pad", "3"], "--pad 3 must be smaller"),
        (["--pad", "-1"], "--pad -1"),
        (["--side", "up"], "--side 'up'"),
        (["--max-size", "2"], "--max-size 2"),
        (["hello", "--size", "3"], "--size is for the illustration"),
        (["hello", "--side", "left"], "--side is for the illustration"),
        (["--model", "x"], "--model needs at least one prompt"),
        (["--padding-side", "left"], "--padding-side needs at least one prompt"),
        (["a", "b", "--padding-side", "up", "--model", "x"], "--padding-side 'up'"),
    ],
)
def test_bad_input_one_line(cli, args, message):
    res = cli("mask", *args)
    assert res.exit_code == 2
    assert res.stdout == ""
    assert res.stderr.count("\n") == 1 and message in res.stderr


def _eager_attentions(model, ids, am):
    """Independent reference: a full eager forward with output_attentions."""
    model.set_attn_implementation("eager")
    try:
        with torch.no_grad():
            out = model(input_ids=ids, attention_mask=am, position_ids=engine.position_ids(am), output_attentions=True)
    finally:
        engine.prepare(model)
    return out.attentions


@pytest.mark.parametrize("side", ["left", "right"])
def test_real_mode_tiny(loaded, side):
    prompts = [SEED, "hello", "사과를 샀다."]
    r = mask(loaded, prompts, padding_side=side)
    tok = loaded.tokenizer(prompts, padding=True, padding_side=side, return_tensors="pt")
    ids, am = tok["input_ids"], tok["attention_mask"]
    n = ids.shape[1]
    assert r.side == side and r.mode == "model"
    assert r.agrees_with_model is True and r.agrees_with_eager is True
    assert r.layers_checked == loaded.info.num_hidden_layers
    att = _eager_attentions(loaded.model, ids, am)
    for b, seq in enumerate(r.sequences):
        assert seq.attention_mask == am[b].tolist()
        assert seq.padded_rows == [i for i in range(n) if not am[b, i]]
        # by hand: query i refers to key j iff j <= i and j is a token
        assert seq.combined == [[int(j <= i and bool(am[b, j])) for j in range(n)] for i in range(n)]
        assert seq.model_mask == seq.combined and seq.eager_mask == seq.combined
        # eager weights of real rows are exactly 0 wherever the grid says '.'
        grid = torch.tensor(seq.combined, dtype=torch.bool)
        real = am[b].bool()
        blocked = ~grid[real]  # (real rows, T): the '.' cells of the token rows
        for layer in att:
            w = layer[b][:, real]  # (H, real rows, T)
            assert float(w[:, blocked].abs().max()) == 0.0
            assert float(w[:, ~blocked].min()) > 0.0
        real_labels = [seq.tokens[i] for i in range(n) if am[b, i]]
        assert "[pad]" not in real_labels
        assert all(seq.tokens[i] == "[pad]" for i in seq.padded_rows)
    assert r.sequences[0].tokens[:3] == ["민 1/3", "민 2/3", "민 3/3"] or side == "left"
    # the chosen padded token: pad columns exactly 0, rows sum to 1
    pc = r.pad_columns
    assert pc is not None and pc.sequence == 1 and pc.max_weight == 0.0
    assert pc.layers == loaded.info.num_hidden_layers and pc.heads == loaded.info.num_attention_heads
    assert pc.row_sum_min == pytest.approx(1.0, abs=1e-5) and pc.row_sum_max == pytest.approx(1.0, abs=1e-5)
    assert pc.causal_hides is (side == "right")
    # padded query rows: eager uniform over every key, capture 0 (left); both a normal softmax (right)
    rows = {p.sequence: p for p in r.pad_rows}
    assert set(rows) == {1, 2}
    p = rows[1]
    if side == "left":
        assert p.query_pos == 0 and p.allowed_keys == 0
        assert p.eager_min == pytest.approx(1 / n) and p.eager_max == pytest.approx(1 / n)
        assert p.capture_max == 0.0 and p.capture_sum_max == 0.0
        ref = att[0][1, :, 0]  # (H, T) eager row of the pad query
        assert torch.allclose(ref, torch.full_like(ref, 1 / n))
    else:
        n_real = int(am[1].sum())
        assert p.query_pos == n_real and p.allowed_keys == n_real
        assert p.capture_sum_min == pytest.approx(1.0, abs=1e-5) and p.eager_vs_capture < 1e-5
    text = to_text(render(r), width=160)
    assert "DISAGREES" not in text and "agrees" in text
    assert "max 0 (exactly)" in text


def test_broken_grid_is_reported(loaded, monkeypatch):
    # A grid that forgets the padding mask must be caught by both independent checks.
    monkeypatch.setattr(maskgrid, "combined", lambda am: maskgrid.causal(len(am)))
    r = mask(loaded, [SEED, "hello"], padding_side="left")
    assert r.agrees_with_model is False and r.agrees_with_eager is False
    assert r.sequences[0].agrees_with_model is True  # the unpadded sequence is still right
    bad = r.sequences[1]
    assert bad.agrees_with_model is False and bad.mismatches
    assert all(not bad.attention_mask[k] for _, k in bad.mismatches)  # every mismatch is a pad column
    assert "DISAGREES" in to_text(render(r), width=160)


def test_broken_model_mask_is_reported(loaded, monkeypatch):
    # A model whose mask builder ignores padding: the grid is right, the model is wrong.
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, sdpa_mask

    def no_padding(*args, **kwargs):
        kwargs["attention_mask"] = None
        return sdpa_mask(*args, **kwargs)

    monkeypatch.setitem(ALL_MASK_ATTENTION_FUNCTIONS._global_mapping, engine.IMPL, no_padding)
    r = mask(loaded, [SEED, "hello"], padding_side="left")
    assert r.agrees_with_model is False
    assert r.agrees_with_eager is True
    assert r.sequences[1].agrees_with_model is False
    assert r.sequences[1].model_mask == maskgrid.causal(len(r.sequences[1].tokens))
    assert r.mask_kinds == [MaskKind(kind="none")]
    assert "no mask (sdpa is_causal: pure causal)" in to_text(render(r), width=160)


def test_cli_disagreement_exits_5(cli, model_dir, monkeypatch):
    monkeypatch.setattr(maskgrid, "combined", lambda am: maskgrid.causal(len(am)))
    res = cli("mask", SEED, "hello", "--model", str(model_dir), "--padding-side", "left", "--width", "160")
    assert res.exit_code == 5
    assert "DISAGREES" in res.stdout and "disagrees" in res.stderr


def test_json_round_trip(cli, model_dir):
    res = cli("mask", SEED, "사과를 샀다.", "--model", str(model_dir), "--padding-side", "right", "--json")
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["schema"] == "attnscope.mask/2"
    assert doc["agrees_with_model"] is True
    for seq in doc["sequences"]:
        assert set(seq) >= {"tokens", "attention_mask", "causal", "combined", "padded_rows", "agrees_with_model"}
    back = from_json(doc)
    assert back.to_json() == doc
    view = cli("mask", SEED, "사과를 샀다.", "--model", str(model_dir), "--padding-side", "right", "--width", "120")
    assert to_text(render(back), width=120) == view.stdout
    ill = json.loads(cli("mask", "--json").stdout)
    assert from_json(ill).to_json() == ill
    assert ill["sequences"][0]["combined"] == [[0, 0, 0, 0], [0, 1, 0, 0], [0, 1, 1, 0], [0, 1, 1, 1]]
    assert ill["sequences"][0]["padded_rows"] == [0]


def test_long_input_condensed(loaded):
    r = mask(loaded, [SEED, "hello"], padding_side="left", max_size=6)
    n = len(r.sequences[0].tokens)
    assert r.shown_positions == [0, 1, 2, n - 3, n - 2, n - 1]
    text = to_text(render(r), width=100)
    assert "grid condensed" in text
    assert "…" in text
    # a narrow console draws fewer positions and says so, instead of cutting the grid
    narrow = to_text(render(mask(loaded, [SEED, "hello"], padding_side="left")), width=50)
    assert "narrowed to" in narrow
    assert max(len(line) for line in narrow.splitlines() if line.startswith(" 0 ")) <= 50


def test_single_prompt_has_no_padding(loaded):
    r = mask(loaded, [SEED])
    assert r.agrees_with_model is True and r.pad_columns is None and r.pad_rows == []
    assert r.mask_kinds == [MaskKind(kind="none")]
    assert "no sequence is padded" in to_text(render(r), width=160)


def test_bad_side_in_core(loaded):
    with pytest.raises(AttnscopeError, match="padding_side 'middle'"):
        mask(loaded, [SEED], padding_side="middle")


def test_chat_batch(loaded):
    r = mask(loaded, [SEED, "hello"], chat=ChatSpec(), padding_side="left")
    assert r.chat and r.agrees_with_model is True and r.agrees_with_eager is True
    seq = r.sequences[1]
    real = [t for t, m in zip(seq.tokens, seq.attention_mask, strict=True) if m]
    assert real[0] == "<|im_start|>" and "<|im_end|>" in real
    assert seq.text.startswith("<|im_start|>user\nhello")
