"""The explore page in headless Chromium: it opens offline, and clicking shows the model's numbers.

The chart's values are read from the page after clicking a token and a head, and
compared with ``attnscope weights --json`` for the same query, layer and head, within
the page's stated quantisation (1/255).
"""

from __future__ import annotations

import json

import pytest

from attnscope.render.i18n import t

from support import SEED
from support.browserkit import open_file

pytestmark = pytest.mark.browser

STEP = 1 / 255 + 1e-6


@pytest.fixture(scope="module")
def seed_page(tmp_path_factory, model_dir):
    from typer.testing import CliRunner

    from attnscope.cli import app

    out = tmp_path_factory.mktemp("explore") / "seed.html"
    res = CliRunner().invoke(app, ["explore", SEED, "--model", str(model_dir), "--query", "그것을", "-o", str(out)])
    assert res.exit_code == 0, res.stderr
    return out


def weights_json(cli, model_dir, *args):
    res = cli("weights", SEED, "--model", str(model_dir), "--json", *args)
    assert res.exit_code == 0, res.stderr
    return json.loads(res.stdout)


def chart(page):
    """(label, shown text, exact value) of every bar, and the shown sum."""
    bars = page.evaluate(
        """() => [...document.querySelectorAll('#chart g.bar')].map(g =>
            [g.querySelector('text').textContent, g.querySelector('text.value').textContent, +g.dataset.value])"""
    )
    return bars, page.text_content("#chart-sum")


def test_page_opens_offline_and_clicks_give_the_models_numbers(browser, seed_page, cli, model_dir, tmp_path):
    opened = open_file(browser, seed_page)
    page = opened.page
    try:
        page.wait_for_selector("body[data-ready]", timeout=15000)
        assert opened.errors == [] and opened.blocked == []
        assert opened.overlaps() == []
        page.screenshot(path=str(tmp_path / "explore-start.png"), full_page=True)

        # click a token: it becomes the query; click a head: the chart is that head's row
        pos, layer, head = 7, 1, 2
        assert page.get_attribute('button[data-by="word"]', "aria-pressed") == "true"  # by word, as weights
        page.click('button[data-by="token"]')
        page.click(f'#tokens .tok[data-pos="{pos}"]')
        page.click(f'#grid rect.cell[data-layer="{layer}"][data-head="{head}"]')
        doc = weights_json(cli, model_dir, "--pos", str(pos), "--layer", str(layer), "--head", str(head))
        want = doc["weights"][0][0]
        bars, total = chart(page)
        assert [label for label, _, _ in bars] == [tok["label"] for tok in doc["tokens"][: pos + 1]]
        assert len(bars) == len(want) == pos + 1
        for (_, shown, value), w in zip(bars, want, strict=True):
            assert abs(value - w) <= STEP
            assert abs(float(shown) - value) < 0.01  # rounded to hundredths (largest remainder)
        assert total == "1.00" and round(sum(float(s) for _, s, _ in bars), 2) == 1.0  # they add up to it
        kv = doc["kv_heads"][0]
        assert page.text_content("#chart-sel") == t("en", "figures.selection.one", layer=layer, head=head, kv=kv)
        assert doc["tokens"][pos]["label"] in page.text_content("#chart-title")
        assert page.evaluate("window.attnscope.state.q") == pos

        # the grid shows each head's weight on the chosen key: click the bar of key 3
        page.click('#chart g.bar[data-index="3"]')
        cell = page.get_attribute(f'#grid rect.cell[data-layer="{layer}"][data-head="{head}"]', "data-value")
        assert abs(float(cell) - want[3]) <= STEP
        page.screenshot(path=str(tmp_path / "explore-head.png"), full_page=True)

        # words and no sink: the same head, against weights --by word --no-sink
        page.click('button[data-by="word"]')
        page.uncheck("#sink")
        doc = weights_json(
            cli,
            model_dir,
            "--pos",
            str(pos),
            "--layer",
            str(layer),
            "--head",
            str(head),
            "--by",
            "word",
            "--no-sink",
            "--all-keys",
        )
        bars, total = chart(page)
        assert len(bars) == len(doc["chart"]["bars"])
        for (_, shown, value), bar in zip(bars, doc["chart"]["bars"], strict=True):
            assert abs(value - bar["weight"]) <= STEP * len(bar["tokens"]) * 2
            assert shown == "-" if bar["excluded"] else abs(float(shown) - value) < 0.01
        assert total == "1.00" and round(sum(float(s) for _, s, _ in bars if s != "-"), 2) == 1.0

        # a layer number: the mean over that layer's heads
        page.check("#sink")
        page.click('button[data-by="token"]')
        page.click(f'#grid text.layer-label[data-layer="{layer}"]')
        doc = weights_json(cli, model_dir, "--pos", str(pos), "--layer", str(layer), "--by", "token", "--all-keys")
        bars, _ = chart(page)
        for (_, _, value), bar in zip(bars, doc["chart"]["bars"], strict=True):
            assert abs(value - bar["weight"]) <= STEP

        # a row of the matrix makes its position the query
        box = page.locator("#matrix-canvas").bounding_box()
        n = len(doc["tokens"])
        page.mouse.click(box["x"] + 2, box["y"] + box["height"] * (4.5 / n))
        assert page.evaluate("window.attnscope.state.q") == 4

        # Korean, from the same catalogue
        page.click('.langs button[value="ko"]')
        label = doc["tokens"][4]["label"]
        assert t("ko", "figures.weights.title", query=label) in page.text_content("#chart-title")
        assert page.text_content("#chart-sel") == t(
            "ko", "explore.sel.layer", layer=layer, heads=doc["model"]["num_attention_heads"]
        )
        assert opened.overlaps() == []
        page.screenshot(path=str(tmp_path / "explore-ko.png"), full_page=True)
        assert opened.errors == [] and opened.blocked == []
    finally:
        page.close()


def test_page_over_the_limit_offers_only_the_stored_queries(browser, cli, model_dir, tmp_path, monkeypatch):
    from attnscope.core import explore as core_explore

    monkeypatch.setattr(core_explore, "LIMIT", 8)
    out = tmp_path / "partial.html"
    res = cli("explore", SEED, "--model", str(model_dir), "--pos", "5", "--query", "그것을", "-o", str(out))
    assert res.exit_code == 0, res.stderr
    opened = open_file(browser, out)
    page = opened.page
    try:
        page.wait_for_selector("body[data-ready]", timeout=15000)
        assert opened.errors == [] and opened.blocked == []
        assert page.is_visible("#partial") and not page.is_visible("#matrix-section")
        assert "8" in page.text_content("#partial")
        q = page.evaluate("window.attnscope.state.q")
        page.click('#tokens .tok[data-pos="2"]')  # not stored: the query stays
        assert page.evaluate("window.attnscope.state.q") == q
        page.click('#tokens .tok[data-pos="5"]')
        assert page.evaluate("window.attnscope.state.q") == 5
        assert opened.overlaps() == []
        page.screenshot(path=str(tmp_path / "explore-partial.png"), full_page=True)
    finally:
        page.close()


def test_effect_layer_shows_the_ablate_effects(browser, cli, model_dir, tmp_path):
    out = tmp_path / "effect.html"
    res = cli("explore", SEED, "--model", str(model_dir), "--target", ".", "--key", "사과를", "-o", str(out))
    assert res.exit_code == 0, res.stderr
    ablated = json.loads(cli("ablate", SEED, "--model", str(model_dir), "--target", ".", "--json").stdout)
    opened = open_file(browser, out)
    page = opened.page
    try:
        page.wait_for_selector("body[data-ready]", timeout=15000)
        assert not page.is_hidden("#grid-layers")
        page.click("button[data-layer=effect]")
        assert page.text_content("#grid-title").startswith("Effect on log P('.')")
        cells = page.evaluate(
            "() => [...document.querySelectorAll('#grid rect.cell')].map(c => [+c.dataset.layer, +c.dataset.head, +c.dataset.value])"
        )
        assert len(cells) == 3 * 4
        for layer, head, value in cells:
            assert abs(value - ablated["effects"][layer][head]) < 1e-6
        page.click("button[data-layer=weight]")
        assert page.text_content("#grid-title").startswith("Weight from")
        assert opened.errors == []
    finally:
        page.close()


def test_korean_page_uses_the_notes_words_and_the_catalogues_particles(browser, seed_page, tmp_path):
    """In Korean, every text the script draws (labels, titles, tooltips) holds no banned term, and
    the chart's title takes the particle i18n gives each query ("그것을"이, " 사"가)."""
    import re

    from attnscope.render.messages.ko import BANNED

    opened = open_file(browser, seed_page)
    page = opened.page
    try:
        page.wait_for_selector("body[data-ready]", timeout=15000)
        page.click('.langs button[value="ko"]')
        labels = page.evaluate("() => [...document.querySelectorAll('#tokens .tok')].map(b => +b.dataset.pos)")
        tokens = page.evaluate(
            "() => JSON.parse(document.getElementById('attnscope-data').textContent).tokens.map(t => t.label)"
        )
        for pos in labels:
            page.click(f'#tokens .tok[data-pos="{pos}"]')
            want = t("ko", "figures.weights.title", query=tokens[pos]) + ": "
            want += t("ko", "figures.query", query=tokens[pos], pos=pos)
            assert page.text_content("#chart-title") == want
        page.click('#grid rect.cell[data-layer="1"][data-head="2"]')
        words = page.evaluate(
            """() => [document.body.innerText,
                ...[...document.querySelectorAll('title, [title]')].map(e => e.getAttribute('title') || e.textContent)]"""
        )
        assert any("K·V 헤드" in w for w in words)  # the cells' tooltips name the K·V head in the note's words
        assert [(w, use) for w in words for pattern, use in BANNED if re.search(pattern, w)] == []
        page.screenshot(path=str(tmp_path / "explore-ko-head.png"), full_page=True)
        assert opened.errors == []
    finally:
        page.close()
