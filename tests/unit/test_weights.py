"""`weights`: core against eager rows, the view maths, the CLI and JSON schema, a render snapshot."""

from __future__ import annotations

import json

from attnscope.render import render, to_text
from attnscope.results import from_json
from attnscope.results.common import ModelInfo, Query, Token, Word
from attnscope.results.weights import Bar, Chart, Strip, WeightsResult, WeightsView


def _hand_result() -> WeightsResult:
    words = ["민수는", "사과를", "샀다.", "그는", "그것을"]
    weights_ = [0.10, 0.55, 0.05, 0.10, 0.20]
    toks, start = [], 0
    for i, w in enumerate(words):
        toks.append(Token(index=i, id=100 + i, text=w, start=start, end=start + len(w), word=i, label=w))
        start += len(w) + 1
    bars = [
        Bar(label=w, tokens=[i], weight=x, is_query=i == 4)
        for i, (w, x) in enumerate(zip(words, weights_, strict=True))
    ]
    return WeightsResult(
        model=ModelInfo(
            id="hand", num_hidden_layers=1, num_attention_heads=1, num_key_value_heads=1, dtype="float32", device="cpu"
        ),
        text=" ".join(words),
        chat=False,
        tokens=toks,
        words=[Word(index=i, text=w, tokens=[i]) for i, w in enumerate(words)],
        query=Query(index=4, text="그것을", span=[4]),
        layers=[0],
        heads=[0],
        kv_heads=[0],
        weights=[[weights_]],
        view=WeightsView(),
        chart=Chart(bars=bars, total=1.0),
        strip=Strip(layers=[0], keys=words, values=[[x] for x in weights_]),
    )


SNAPSHOT = """\
query 그것을  (token 4 '그것을')
model hand  1 layers, 1 heads / 1 KV heads, float32 on cpu
layers 0  heads 0

weights the query mixes in
민수는   0.10  ███
사과를   0.55  ████████████████▌
샀다.    0.05  █▌
그는     0.10  ███
그것을   0.20  ██████             <- self
        -----
sum      1.00
"""


def test_render_snapshot_of_the_notes_chart():
    text = to_text(render(_hand_result()), width=100)
    assert "\n".join(line.rstrip() for line in text.splitlines()) + "\n" == SNAPSHOT


def test_json_round_trip_renders_identically():
    r = _hand_result()
    again = from_json(json.loads(json.dumps(r.to_json(), ensure_ascii=False)))
    assert again == r
    assert to_text(render(again)) == to_text(render(r))
