"""attnscope explore: the page's data against eager attention, its size limit, its bad input."""

from __future__ import annotations

import base64
import json
import re
import zlib

import pytest
import torch

from attnscope.core import explore as core_explore
from attnscope.render.explore import messages

from support import SEED, reference


def page_data(path) -> dict:
    html = path.read_text(encoding="utf-8")
    m = re.search(r'<script type="application/json" id="attnscope-data">(.*?)</script>', html, re.S)
    assert m, "the page holds no data"
    doc = json.loads(m.group(1))
    doc["bytes"] = zlib.decompress(base64.urlsafe_b64decode(doc["data"]))
    return doc


def stored_row(doc: dict, layer: int, head: int, pos: int) -> list[int]:
    """The bytes of one (layer, head, query pos) row, by the layout the page states."""
    block = sum(p + 1 for p in doc["positions"])
    off = sum(p + 1 for p in doc["positions"] if p < pos)
    start = (layer * doc["heads"] + head) * block + off
    return list(doc["bytes"][start : start + pos + 1])


def eager(model, ids):
    return reference.eager_attentions(model, ids)  # per layer (1, H, T, T)


def test_page_holds_every_row_as_eager_gives_it(cli, model_dir, loaded, tokenizer, tmp_path):
    out = tmp_path / "p.html"
    res = cli("explore", SEED, "--model", str(model_dir), "--query", "그것을", "--key", "사과를", "-o", str(out))
    assert res.exit_code == 0, res.stderr
    assert res.stdout == ""
    doc = page_data(out)
    ids = torch.tensor([tokenizer(SEED)["input_ids"]])
    T = ids.shape[1]
    assert doc["full"] and doc["positions"] == list(range(T)) and doc["levels"] == 255
    assert doc["tokens"][doc["query"]]["label"] == "을" or "을" in doc["tokens"][doc["query"]]["label"]
    assert "".join(doc["tokens"][i]["label"] for i in doc["key"]).replace(" ", "").startswith("사")
    ref = eager(loaded.model, ids)
    worst = 0.0
    for layer in range(len(ref)):
        for head in range(doc["heads"]):
            for pos in range(T):
                row = stored_row(doc, layer, head, pos)
                assert sum(row) == 255
                want = ref[layer][0, head, pos, : pos + 1]
                worst = max(worst, float((torch.tensor(row) / 255 - want).abs().max()))
    assert worst < 1 / 255


def test_page_has_no_url_and_both_languages(cli, model_dir, tmp_path):
    out = tmp_path / "p.html"
    assert cli("explore", SEED, "--model", str(model_dir), "-o", str(out), "--lang", "ko").exit_code == 0
    html = out.read_text(encoding="utf-8")
    assert set(re.findall(r"[a-z]+://[^\"' )]*", html)) == {"http://www.w3.org/2000/svg"}
    assert "//" not in html.replace("http://www.w3.org/2000/svg", "")  # no protocol-relative URL either
    assert not re.search(r"<(link|img|iframe)\b|\bsrc=|@import|url\(", html)
    doc = page_data(out)
    assert doc["lang"] == "ko" and doc["messages"] == messages()
    assert set(doc["messages"]["en"]) == set(doc["messages"]["ko"])
    assert '<html lang="ko">' in html and "프롬프트의 토큰" in html


def test_over_the_limit_needs_a_query(cli, model_dir, tmp_path, monkeypatch):
    monkeypatch.setattr(core_explore, "LIMIT", 8)
    out = tmp_path / "p.html"
    res = cli("explore", SEED, "--model", str(model_dir), "-o", str(out))
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr.count("\n") == 1 and "up to 8 tokens" in res.stderr and "--query" in res.stderr
    assert not out.exists() and list(tmp_path.iterdir()) == []
    res = cli("explore", SEED, "--model", str(model_dir), "-o", str(out), "--query", "그것을", "--pos", "3")
    assert res.exit_code == 0, res.stderr
    doc = page_data(out)
    assert not doc["full"] and doc["limit"] == 8 and doc["positions"] == sorted([doc["query"], 3])
    assert len(doc["bytes"]) == doc["layers"] * doc["heads"] * sum(p + 1 for p in doc["positions"])


def test_pos_ranges_and_repeats_are_queries_too(cli, model_dir, tmp_path, monkeypatch):
    """--pos takes the one grammar here too: a range from the end and a repeated --pos join as queries,
    resolved against the prompt's length (28 tokens), and one out of range is refused before any work."""
    monkeypatch.setattr(core_explore, "LIMIT", 8)
    out = tmp_path / "p.html"
    res = cli("explore", SEED, "--model", str(model_dir), "-o", str(out), "--pos", "-3--1", "--pos", "2")
    assert res.exit_code == 0, res.stderr
    assert page_data(out)["positions"] == [2, 25, 26, 27]
    bad = cli("explore", SEED, "--model", str(model_dir), "-o", str(out), "--pos", "20-30")
    assert bad.exit_code == 2 and "--pos 20-30: the prompt has 28 tokens" in bad.stderr


@pytest.mark.parametrize("where", ["missing/dir/p.html", "."])
def test_bad_output_path_is_one_line_and_leaves_nothing(cli, model_dir, tmp_path, where):
    res = cli("explore", SEED, "--model", str(model_dir), "-o", str(tmp_path / where))
    assert res.exit_code == 2 and res.stdout == "" and res.stderr.count("\n") == 1
    assert res.stderr.startswith("attnscope: error: cannot write")
    assert list(tmp_path.iterdir()) == []


def test_a_failed_write_leaves_nothing_half_written(cli, model_dir, tmp_path, monkeypatch):
    import os

    def full_disk(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    res = cli("explore", SEED, "--model", str(model_dir), "-o", str(tmp_path / "p.html"))
    assert res.exit_code == 2 and res.stdout == "" and res.stderr.count("\n") == 1
    assert "No space left on device" in res.stderr
    assert list(tmp_path.iterdir()) == []  # neither the page nor its temporary file


def test_target_effects_are_ablates_and_composed_only_from_its_result(cli, loaded, model_dir, tmp_path):
    """explore --target carries ablate's exact effects; with_effects takes only an ablation of the
    same tokens over every layer and head."""
    from attnscope.core.causal.ablate import ablate
    from attnscope.core.prompt.spec import Selection
    from attnscope.core.prompt.targets import Answer
    from attnscope.errors import AttnscopeError

    out = tmp_path / "effect.html"
    res = cli("explore", SEED, "--model", str(model_dir), "--target", ".", "-o", str(out))
    assert res.exit_code == 0, res.stderr
    ablated = json.loads(cli("ablate", SEED, "--model", str(model_dir), "--target", ".", "--json").stdout)
    doc = page_data(out)
    assert doc["effects"] == ablated["effects"] and doc["metric"] == "log P('.')"
    data = core_explore.explore(loaded, SEED)
    assert data.effects is None
    with pytest.raises(AttnscopeError, match="other tokens"):
        core_explore.with_effects(data, ablate(loaded, SEED + " 그", answer=Answer(".")))
    with pytest.raises(AttnscopeError, match="every layer and head"):
        core_explore.with_effects(data, ablate(loaded, SEED, answer=Answer("."), selection=Selection(layers=[0])))
