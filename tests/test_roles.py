"""Head roles: hand-built patterns with known scores, eager patterns as reference, the CLI."""

from __future__ import annotations

import json

import pytest
import torch

from attnscope import render
from attnscope.core import roles

from conftest import SEED


def test_hand_built_patterns_have_known_scores():
    ids = torch.tensor([5, 6, 5, 6])
    prev = torch.tensor([[1.0, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]])  # a previous-token head
    uniform = torch.tril(torch.ones(4, 4)) / torch.arange(1, 5)[:, None]
    got = roles.scores(torch.stack([prev, uniform])[None], ids)  # (1, 2, 4, 4)
    # previous-token: 3 of the 4 rows' weight sits one key back
    assert got["previous_token"][0, 0] == pytest.approx(0.75)
    # duplicate: row 2 (5) sees key 0 (5), row 3 (6) sees key 1 (6); uniform puts 1/3 + 1/4 there
    assert got["duplicate_token"][0, 1] == pytest.approx((1 / 3 + 1 / 4) / 4)
    # induction (a b a b: the same head is an induction head): row 2 -> key 1, row 3 -> key 2
    assert got["induction"][0, 0] == pytest.approx(0.5)
    assert torch.equal(
        roles.induction_pattern(ids), torch.tensor([[0.0, 0, 0, 0], [0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]])
    )
    # sink: column 0 averaged over the 4 queries (Gu et al.: sum_i A[i, 0] / (T - 0))
    assert got["sink"][0, 0] == pytest.approx(0.5)
    assert got["sink"][0, 1] == pytest.approx((1 + 1 / 2 + 1 / 3 + 1 / 4) / 4)


def test_scores_use_eager_patterns(loaded):
    """roles' patterns equal eager output_attentions, so its scores are those of the real pattern."""
    res = roles.roles(loaded, None, length=6, seed=3)
    ids = [t.id for t in res.tokens]
    assert ids[-6:] == ids[-12:-6]  # the two copies
    model = loaded.model
    model.set_attn_implementation("eager")
    try:
        with torch.no_grad():
            out = model(input_ids=torch.tensor([ids]), output_attentions=True)
    finally:
        from attnscope.core import capture

        capture.prepare(model)
    eager = torch.stack([a[0] for a in out.attentions])  # (L, H, T, T)
    ref = roles.scores(eager, torch.tensor(ids))
    for role in ref:
        assert torch.allclose(torch.tensor(getattr(res.scores, role)), ref[role], atol=1e-5)
    assert res.top.induction[0].score == pytest.approx(float(ref["induction"].max()))


def test_cli_json_and_view(cli, model_dir):
    res = cli("roles", "--length", "8", "--seed", "2", "--model", str(model_dir), "--json")
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["schema"] == "attnscope.roles/1"
    assert set(doc["scores"]) == {"previous_token", "duplicate_token", "induction", "sink"}
    assert len(doc["scores"]["induction"]) == 3 and len(doc["scores"]["induction"][0]) == 4
    assert len(doc["tokens"]) in (16, 17) and all("id" in t for t in doc["tokens"])
    for lang in ("en", "ko"):
        shown = cli("roles", SEED, "--model", str(model_dir), "--lang", lang, "--width", "140")
        assert shown.exit_code == 0, shown.stderr
        assert ("induction" if lang == "en" else "인덕션") in shown.stdout


def test_view_lists_the_top_heads(loaded):
    res = roles.roles(loaded, SEED, top=3)
    console = render.console(width=140)
    with console.capture() as cap:
        console.print(render.view(res, render.Ctx(lang="en", width=140)))
    text = cap.get()
    best = res.top.previous_token[0]
    assert f"L{best.layer} H{best.head}  {best.score:.2f}" in text
    assert "sink heads (score > 0.3)" in text


@pytest.mark.parametrize(
    "args,message",
    [
        (["--length", "1"], "--length 1"),
        (["--top", "0"], "--top 0"),
        ([SEED, "--seed", "3"], "not both"),
    ],
)
def test_bad_inputs(cli, model_dir, args, message):
    res = cli("roles", *args, "--model", str(model_dir))
    assert res.exit_code == 2
    assert message in res.stderr and res.stdout == ""
