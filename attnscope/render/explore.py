"""The explore page: one self-contained HTML file built from an :class:`ExploreData`.

The page is the HTML skeleton below, the script and style kept beside this module as
package data (``assets/explore.js``, ``assets/explore.css``), and one JSON document
with the tokens, the words, the needed catalogue entries of both languages and the
weights: the bytes of ``ExploreData.weights`` compressed with zlib (the browser's own
``DecompressionStream("deflate")`` opens them) and written in URL-safe base64. The page
holds no URL but the SVG namespace and makes no request. This module computes no
weight; it only packs and writes words.
"""

from __future__ import annotations

import base64
import json
import zlib
from importlib import resources
from xml.sax.saxutils import escape

from attnscope.render.i18n import LANGS, Lang, catalogue, t
from attnscope.results.explore import ExploreData

# Catalogue entries the page's script looks up (besides every ``explore.*`` key).
SHARED_KEYS = (
    "common.sum",
    "figures.model",
    "figures.query",
    "figures.weights.title",
    "figures.selection.one",
    "figures.self",
    "figures.sink_excluded",
    "figures.by_word",
    "figures.to_query",
    "figures.no_sink",
    "figures.layer",
    "figures.head",
    "figures.cell_head",
    "figures.scale",
    "figures.matrix.masked",
)


def _asset(name: str) -> str:
    return resources.files("attnscope.render").joinpath("assets", name).read_text(encoding="utf-8")


def messages() -> dict[str, dict[str, str]]:
    """The catalogue entries the page needs, in every language."""
    out: dict[str, dict[str, str]] = {}
    for lang in LANGS:
        cat = catalogue(lang)
        out[lang] = {k: v for k, v in cat.items() if k.startswith("explore.") or k in SHARED_KEYS}
    return out


def _model_name(model_id: str) -> str:
    return (
        model_id.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1] if model_id.startswith(("/", ".", "~")) else model_id
    )


def payload(data: ExploreData, lang: Lang) -> dict[str, object]:
    """The JSON document the page's script reads."""
    packed = base64.urlsafe_b64encode(zlib.compress(data.weights, 6)).decode("ascii")
    return {
        "lang": lang,
        "model": _model_name(data.model.id),
        "layers": data.model.num_hidden_layers,
        "heads": data.model.num_attention_heads,
        "kv_heads": data.model.num_key_value_heads,
        "tokens": [{"label": tok.label, "word": tok.word, "special": tok.special} for tok in data.tokens],
        "words": [{"text": w.text, "tokens": w.tokens} for w in data.words],
        "positions": data.positions,
        "full": data.full,
        "limit": data.limit,
        "query": data.query,
        "key": data.key,
        "levels": data.levels,
        "effects": data.effects,
        "metric": data.metric,
        "messages": messages(),
        "data": packed,
    }


def _json_for_script(doc: object) -> str:
    # Inside <script>, "</" would end the element early; \u003c keeps the JSON equal.
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def page(data: ExploreData, lang: Lang) -> str:
    """The whole HTML page."""

    def m(key: str) -> str:
        return f'<span data-msg="{key}">{escape(t(lang, key))}</span>'

    langs = "".join(
        f'<button type="button" value="{code}">{escape(t(code, "explore.lang_name"))}</button>' for code in LANGS
    )
    return f"""<!DOCTYPE html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>attnscope explore</title>
<style>
{_asset("explore.css")}</style>
</head>
<body>
<header>
<div><h1>{m("explore.title")}</h1><div class="dim small" id="model"></div></div>
<div class="langs" role="group">{langs}</div>
</header>
<p class="note small warn" id="partial" hidden></p>
<section>
<h2>{m("explore.tokens")}</h2>
<p class="dim small note">{m("explore.tokens_hint")}</p>
<div id="tokens"></div>
<p class="small warn" id="status"></p>
</section>
<section class="controls">
<span class="dim">{m("explore.by")}</span>
<button type="button" data-by="token">{m("explore.by_token")}</button>
<button type="button" data-by="word">{m("explore.by_word")}</button>
<label><input type="checkbox" id="sink" checked> {m("explore.sink")}</label>
<button type="button" id="sel-all">{m("explore.all")}</button>
</section>
<div class="panels">
<section class="panel" id="chart-box">
<h2 id="chart-title"></h2>
<div class="dim small" id="chart-sel"></div>
<p class="dim small note">{m("explore.chart_hint")}</p>
<svg id="chart" xmlns="http://www.w3.org/2000/svg" width="10" height="10"></svg>
<p class="dim small note" id="chart-notes"></p>
</section>
<section class="panel">
<div class="layers" id="grid-layers" hidden><button type="button" data-layer="weight">{m("explore.layer_weight")}</button> <button type="button" data-layer="effect">{m("explore.layer_effect")}</button></div>
<h2 id="grid-title"></h2>
<p class="dim small note">{m("explore.grid_hint")}</p>
<svg id="grid" xmlns="http://www.w3.org/2000/svg" width="10" height="10"></svg>
</section>
</div>
<section class="panel" id="matrix-section">
<h2 id="matrix-title"></h2>
<p class="dim small note">{m("explore.matrix_hint")}</p>
<div class="matrix-wrap">
<div id="matrix-corner"></div>
<svg id="matrix-cols" xmlns="http://www.w3.org/2000/svg" width="10" height="10"></svg>
<svg id="matrix-rows" xmlns="http://www.w3.org/2000/svg" width="10" height="10"></svg>
<canvas id="matrix-canvas" width="1" height="1"></canvas>
</div>
<p class="dim small note" id="matrix-scale"></p>
</section>
<footer><p class="dim small note" id="quant"></p></footer>
<noscript><p>{escape(t(lang, "explore.nojs"))}</p></noscript>
<script type="application/json" id="attnscope-data">{_json_for_script(payload(data, lang))}</script>
<script>
{_asset("explore.js")}</script>
</body>
</html>
"""
