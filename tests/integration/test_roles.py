"""Head roles: hand-built patterns with known scores, eager patterns as reference, the CLI."""

from __future__ import annotations

import json

import pytest
import torch

from attnscope import render
from attnscope.core import roles

from support import SEED


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
        from attnscope.capture import engine

        engine.prepare(model)
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
