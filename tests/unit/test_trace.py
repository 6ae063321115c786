"""`trace`: rows against the model's own hidden states and logits, the compare rows, a broken lens, CLI, render."""

from __future__ import annotations

from attnscope.render import Ctx, render, to_text
from attnscope.results.common import ModelInfo, Token
from attnscope.results.trace import Compare, CompareRow, NextCheck, TopToken, TraceResult, TraceRow


def _hand_result() -> TraceResult:
    tok = Token(index=1, id=7, text="는", start=2, end=3, word=0, label="는")
    top = [TopToken(token=" 그", id=5, prob=0.5)]
    rows = [
        TraceRow(layer=0, norm=1.0, cos_prev=None, head_dims=[0.1, -0.2], top=top),
        TraceRow(layer=1, norm=2.5, cos_prev=0.25, head_dims=[0.3, 0.4], top=top),
    ]
    return TraceResult(
        model=ModelInfo(
            id="tiny", num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1, dtype="float32", device="cpu"
        ),
        text="민수는",
        chat=False,
        tokens=[Token(index=0, id=3, text="민수", start=0, end=2, word=0, label="민수"), tok],
        position=1,
        token=tok,
        dims=2,
        rows=rows,
        next_token=top[0],
        check=NextCheck(
            lens=top[0],
            model=top[0],
            match=True,
            max_diff_logits=0.0,
            hidden_states_last_normed=0.0,
            tolerance=1e-4,
            ok=True,
        ),
        compare=Compare(
            position=0,
            token=tok,
            same_id=True,
            rows=[
                CompareRow(layer=0, cos=1.0, max_abs_diff=0.0),
                CompareRow(layer=1, cos=0.9, max_abs_diff=0.5),
            ],
        ),
    )


def test_render_snapshot():
    text = to_text(render(_hand_result()), width=100)
    lines = [line.rstrip() for line in text.splitlines()]
    assert lines[0] == "trace of position 1 '는' (token id 7)"
    assert "stage          first 2 dims       norm  cos prev  cos vs 0  logit lens top-1" in lines
    assert "embedding      [+0.100 -0.200]    1.00         -    1.0000  ' 그' 0.50" in lines
    assert "after layer 0  [+0.300 +0.400]    2.50     0.250    0.9000  ' 그' 0.50" in lines
    assert any("same ✓ (max |Δlogit| 0)" in line for line in lines)
    ko = to_text(render(_hand_result(), Ctx(lang="ko")), width=100)
    assert "임베딩은 토큰 ID 하나로 정해진다" in ko
    assert any(line.startswith("레이어 0 뒤  [+0.300 +0.400]") for line in ko.splitlines())
    # 62 columns: each stage stays one line with its vector whole; the logit lens goes to a second
    # block led by the stage; nothing is cut
    narrow = [line.rstrip() for line in to_text(render(_hand_result()), width=62).splitlines()]
    assert "after layer 0 [+0.300 +0.400]   2.50    0.250   0.9000" in narrow
    assert "after layer 0 ' 그' 0.50" in narrow
    assert "…" not in "\n".join(narrow)


def test_trace_2_documents_read_as_trace_3():
    # A trace/2 file had a "stage" word on each row ("layer 1" for the output of layer 0); it is
    # read without it, and a trace/1 file (with lang and notes) goes through /2 to the same.
    from attnscope.results import from_json
    from attnscope.results.upgrade import upgrade

    doc = _hand_result().to_json()
    old = {**doc, "schema": "attnscope.trace/2"}
    old["rows"] = [{"stage": "embedding" if r["layer"] == 0 else f"layer {r['layer']}", **r} for r in doc["rows"]]
    old["compare"] = {**doc["compare"], "rows": [{"stage": "x", **r} for r in doc["compare"]["rows"]]}
    assert upgrade(old) == doc and from_json(old).to_json() == doc
    oldest = {**old, "schema": "attnscope.trace/1", "lang": "en", "notes": ["a sentence"]}
    assert from_json(oldest).to_json() == doc and "stage" not in upgrade(oldest)["rows"][0]
