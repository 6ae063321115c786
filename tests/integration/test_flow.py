"""``flow`` on the tiny GQA model against the reference in support.flow, which materialises every part
of every sum from plain transformers (eager attention, values recomputed from the weights): the same
edges, the same importances, completeness, the chunked path against the unchunked one, and the
knockout check against support.causal's hand-edited eager mask."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from attnscope.core.causal.flow import flow
from attnscope.errors import AttnscopeError, ExitCode

from support import SEED, families, one_error
from support.causal import Plain
from support.flow import reference, value, walk

THRESHOLD = 0.01


def groups_of(r: Any) -> list[list[int]]:
    n = r.pos + 1
    if r.by == "token":
        return [[j] for j in range(n)]
    return [g for g in ([j for j in w.tokens if j < n] for w in r.words) if g]


def key(e: Any) -> tuple[int, str, str, int | None, int, int | None]:
    return (e.layer, e.kind, e.block, e.from_, e.to, e.head)


def check_against_reference(r: Any, folder: Path) -> None:
    groups = groups_of(r)
    ref = reference(folder, r.token_ids[: r.pos + 1], groups, r.heads)
    assert {key(e) for e in r.edges} == walk(ref, r.pos, groups, r.threshold, r.heads)
    assert len({key(e) for e in r.edges}) == len(r.edges)
    for e in r.edges:
        assert abs(e.importance - value(ref, groups, e)) < 1e-5, (e, value(ref, groups, e))
    for c in r.layers:
        assert c.attention_error < 1e-4 and c.mlp_error < 1e-4, c
        assert c.scale > 0 or not (c.attention or c.mlp)
    assert max(float(lay.attention_error.max()) for lay in ref) < 1e-4  # the reference's own parts add up


@pytest.mark.parametrize(("by", "heads"), [("token", False), ("token", True), ("word", False), ("word", True)])
def test_importances_equal_the_reference(loaded: Any, model_dir: Path, by: str, heads: bool) -> None:
    r = flow(loaded, SEED, threshold=THRESHOLD, by=by, heads=heads)  # type: ignore[arg-type]
    assert sum(e.kind == "attention" for e in r.edges) >= 5  # the walk does leave the residual stream
    assert any(e.from_ != e.to for e in r.edges if e.kind == "attention")
    check_against_reference(r, model_dir)


def test_a_position_before_the_end(loaded: Any, model_dir: Path) -> None:
    r = flow(loaded, SEED, pos=10, threshold=THRESHOLD)
    assert r.pos == 10 and all(e.to <= 10 and (e.from_ or 0) <= 10 for e in r.edges)
    assert r.layers[-1].mlp == [10]
    check_against_reference(r, model_dir)
    assert flow(loaded, SEED, pos=-18, threshold=THRESHOLD).pos == len(r.tokens) - 18


def test_the_sums_of_a_model_with_an_output_bias(tokenizer: Any, tmp_path: Path) -> None:
    from attnscope.capture.engine import load

    folder = families.save(tmp_path / "starcoder2", "starcoder2", tokenizer)
    r = flow(load(str(folder), device="cpu", dtype="float32"), SEED, threshold=THRESHOLD)
    check_against_reference(r, folder)


@pytest.mark.parametrize(("by", "heads"), [("token", False), ("token", True), ("word", True)])
def test_chunked_equals_unchunked(loaded: Any, by: str, heads: bool) -> None:
    whole = flow(loaded, SEED, threshold=0.005, by=by, heads=heads, chunk=None)  # type: ignore[arg-type]
    for chunk in (1, 37 * 32, 5000):
        part = flow(loaded, SEED, threshold=0.005, by=by, heads=heads, chunk=chunk)  # type: ignore[arg-type]
        assert [key(e) for e in part.edges] == [key(e) for e in whole.edges]
        assert max(abs(a.importance - b.importance) for a, b in zip(part.edges, whole.edges, strict=True)) < 1e-5
        for a, b in zip(part.layers, whole.layers, strict=True):
            assert (a.attention, a.mlp) == (b.attention, b.mlp)
            assert abs(a.attention_error - b.attention_error) < 1e-6


def test_verify_equals_an_eager_knockout(loaded: Any, model_dir: Path) -> None:
    from attnscope.results.derive import spearman

    r = flow(loaded, SEED, threshold=THRESHOLD, verify_top=6)
    eager = Plain(model_dir, attn="eager")
    assert eager.tid(r.prediction_text) == r.prediction
    base = eager.logprob(SEED, r.prediction_text)
    assert r.baseline is not None and abs(r.baseline - base) < 1e-5 and abs(r.logprob - base) < 1e-5
    attention = sorted((e for e in r.edges if e.kind == "attention"), key=lambda e: -e.importance)
    assert len(r.verified) == 6
    assert [v.importance for v in r.verified] == [e.importance for e in attention[:6]]
    for v in r.verified:
        ref = eager.knockout(SEED, r.prediction_text, [v.layer], [v.to], v.sources, None)
        assert abs(v.logprob - ref) < 1e-5 and abs(v.effect - (ref - base)) < 1e-5
    assert r.rank_correlation == spearman([v.importance for v in r.verified], [-v.effect for v in r.verified])
    by_head = flow(loaded, SEED, threshold=THRESHOLD, heads=True, verify_top=3)
    for v in by_head.verified:
        assert v.head is not None
        ref = eager.knockout(SEED, r.prediction_text, [v.layer], [v.to], v.sources, [v.head])
        assert abs(v.logprob - ref) < 1e-5


def test_cli_json_view_and_render(cli: Any, model_dir: Path, tmp_path: Path) -> None:
    res = cli("flow", SEED, "--threshold", "0.01", "--verify", "3", "--json", "-m", str(model_dir))
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["schema"] == "attnscope.flow/1" and doc["threshold"] == 0.01 and len(doc["token_ids"]) == 28
    edge = doc["edges"][0]
    assert set(edge) == {"layer", "kind", "block", "from", "to", "head", "importance"}
    assert {e["kind"] for e in doc["edges"]} <= {"attention", "mlp", "residual"}
    assert len(doc["layers"]) == 3 and all("attention_error" in c for c in doc["layers"])
    (tmp_path / "f.json").write_text(res.stdout, encoding="utf-8")
    for lang in ("en", "ko"):
        shown = cli("render", str(tmp_path / "f.json"), "--lang", lang)
        assert shown.exit_code == 0, shown.stderr
        direct = cli("flow", SEED, "--threshold", "0.01", "--verify", "3", "--lang", lang, "-m", str(model_dir))
        assert direct.stdout == shown.stdout
    assert "completeness" in shown.stdout or "합계" in shown.stdout
    svg = tmp_path / "f.svg"
    res = cli("flow", SEED, "--heads", "--by", "word", "--svg", str(svg), "--lang", "ko", "-m", str(model_dir))
    assert res.exit_code == 0, res.stderr and svg.read_text(encoding="utf-8").startswith("<svg")
    assert "헤드 " in res.stdout


@pytest.mark.parametrize(
    ("args", "code", "fragments"),
    [
        (["--threshold", "0"], 2, ["--threshold 0.0: give a number between 0 and 1"]),
        (["--threshold", "1"], 2, ["--threshold 1.0"]),
        (["--threshold", "-0.5"], 2, ["--threshold -0.5"]),
        (["--threshold", "nan"], 2, ["--threshold nan"]),
        (["--pos", "28"], 2, ["--pos 28 is out of range: the prompt has 28 tokens"]),
        (["--pos", "-29"], 2, ["--pos -29 is out of range"]),
        (["--by", "segment"], 2, ["--by 'segment': use token or word"]),
        (["--verify", "-1"], 2, ["--verify -1: give 0 or more edges"]),
    ],
)
def test_bad_input(cli: Any, model_dir: Path, args: list[str], code: int, fragments: list[str]) -> None:
    one_error(cli("flow", SEED, *args, "-m", str(model_dir)), code, *fragments)


def test_models_that_do_not_split(cli: Any, tokenizer: Any, tmp_path: Path) -> None:
    granite = families.save(tmp_path / "granite", "granite", tokenizer)
    one_error(cli("flow", SEED, "-m", str(granite)), 3, "flow splits each layer", "residual_multiplier 0.5")
    phi3 = families.save(tmp_path / "phi3", "phi3", tokenizer)
    res = cli("flow", SEED, "--threshold", "0.01", "--json", "-m", str(phi3))  # the decomposition works there
    assert res.exit_code == 0, res.stderr
    assert max(c["attention_error"] for c in json.loads(res.stdout)["layers"]) < 1e-4
    one_error(
        cli("flow", SEED, "--verify", "3", "-m", str(phi3)),
        3,
        "--verify knocks edges out, which is not supported on this model",
        "no k_proj, v_proj module",
    )


def test_memory_guard_says_what_would_fit(loaded: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from attnscope.capture import memory

    monkeypatch.setattr(memory, "available_bytes", lambda device="cpu": None)
    monkeypatch.setenv(memory.ENV_LIMIT, "300K")
    with pytest.raises(AttnscopeError) as err:
        flow(loaded, SEED)
    assert err.value.code == ExitCode.RESOURCE
    message = err.value.message
    assert "for the 28 tokens up to the prediction" in message and "tokens would fit" in message
    fits = int(message.rsplit("about ", 1)[1].split(" tokens")[0])
    assert 0 < fits < 28
    flow(loaded, SEED, pos=fits - 1)  # that many tokens do fit
    with pytest.raises(AttnscopeError, match=f"for the {fits + 1} tokens"):
        flow(loaded, SEED, pos=fits)


def test_model_errors_read_in_korean() -> None:
    from attnscope.cli.flags import flag
    from attnscope.errors import AttnscopeError as E
    from attnscope.render.i18n import error_text

    for error in (
        E(
            "flow_layout",
            message=E("why_block_norm", layer=2, kind="gemma2", name="post_feedforward_layernorm", cls="LayerNorm"),
        ),
        E("flow_layout", message=E("why_parallel", kind="cohere")),
        E("flow_verify_model", arg="verify", message=E("why_attn_modules", kind="phi3", names="k_proj, v_proj")),
        E("causal_layerwise", message=E("why_layer_types", kind="qwen3_next", types="linear_attention")),
        E("flow_memory", arg="pos", tokens=28, need="458 KiB", room="300 KiB", fits=22),
    ):
        worded = error_text("ko", error, flag)
        assert worded != error_text("en", error, flag) and "model" not in worded.replace("모델", ""), worded
