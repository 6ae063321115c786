"""``core.causal.circuit`` on a tiny GQA Qwen2 model with an o_proj bias, against the independent
edge-gated forward of ``support.circuitref`` (hand-written from the weights, no hooks): EAP scores
by autograd, edge patching of one edge and of random edge sets, the residual stream as the sum of
the upstream outputs plus the bias, and the identities (a ``gqa`` K/V edge is the sum of the
``mib`` graph's edges of its group; EAP-IG with one step is EAP; the whole graph gives the clean
metric and the empty one the corrupt metric, exactly)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from attnscope.capture import anatomy, engine
from attnscope.core.causal import circuit as C
from attnscope.core.causal.pairs import Pair, pairs, read_pairs
from attnscope.errors import AttnscopeError, decoded
from attnscope.results import derive
from attnscope.results.graph import Graph

from support import circuitref, tiny


@pytest.fixture(scope="module")
def biased(tokenizer: Any) -> Any:
    """The tiny GQA model (3 layers, 4 query heads, 2 KV heads) with a bias on every o_proj."""
    model = tiny.make_model(tiny.make_config(len(tokenizer)))
    torch.manual_seed(1)
    for layer in model.model.layers:
        o = layer.self_attn.o_proj
        new = torch.nn.Linear(o.in_features, o.out_features, bias=True)
        new.weight.data.copy_(o.weight.data)
        new.bias.data.normal_(0, 0.3)
        layer.self_attn.o_proj = new
    model.eval()
    engine.prepare(model)
    return model


@pytest.fixture(scope="module")
def batch(tokenizer: Any) -> C.Batch:
    g = torch.Generator().manual_seed(0)
    clean = torch.randint(3, len(tokenizer), (3, 7), generator=g)
    corrupt = clean.clone()
    corrupt[:, 1:4] = torch.randint(3, len(tokenizer), (3, 3), generator=g)
    pairs = [Pair(i + 1, tuple(clean[i].tolist()), tuple(corrupt[i].tolist()), 5 + i, 40 + i) for i in range(3)]
    (only,) = C.batches(pairs, 8)
    return only


def _graph(model: Any, kind: str = "gqa") -> Graph:
    return C.graph_of(anatomy.of(model), "gqa") if kind == "gqa" else Graph("mib", 3, 4, 2)


def test_the_graph_is_the_references_and_the_residual_adds_up(biased: Any, batch: C.Batch) -> None:
    """Sum of the upstream outputs before an input + the o_proj biases before it = the residual
    stream the model has there (each attention's and MLP's input before its norm, the final norm's)."""
    body = anatomy.of(biased)
    graph = _graph(biased)
    ref = circuitref.Reference(biased, "gqa")
    assert [
        (graph.upstream[u], graph.downstream[d].node, graph.downstream[d].input)
        for u, d in zip(*graph.edges, strict=True)
    ] == (ref.edges)
    run = C.record(body, graph, batch.clean, batch)
    bias = C.bias_at(body)
    assert bias[0] is None and bias[1] is not None  # layer 0's MLP already reads o_proj's bias
    for layer in range(body.n_layers):
        for where, n_up, seen in (
            (2 * layer, graph.head(layer, 0), run.attn_in[layer]),
            (2 * layer + 1, graph.mlp(layer), run.mlp_in[layer]),
        ):
            total = run.ups[:n_up].sum(0) + (0 if bias[where] is None else bias[where])
            assert torch.allclose(total, seen, atol=1e-5), (layer, where)
    total = run.ups.sum(0) + bias[-1]
    assert torch.allclose(total, run.final, atol=1e-5)
    without = run.ups.sum(0)  # the bias left out: the sum is off
    assert not torch.allclose(without, run.final, atol=1e-3)


def test_eap_is_the_autograd_reference_and_eap_ig_with_one_step_is_eap(biased: Any, batch: C.Batch) -> None:
    body = anatomy.of(biased)
    graph = _graph(biased)
    ours = C.score_batch(body, graph, batch, "eap", 1)
    ref = circuitref.Reference(biased, "gqa").eap(batch.clean, batch.corrupt, batch.target, batch.foil).double().numpy()
    scale = np.abs(ref).max()
    assert scale > 1e-4
    assert np.abs(ours - ref).max() <= 1e-5 * scale
    one_step = C.score_batch(body, graph, batch, "eap-ig", 1)
    assert np.abs(one_step - ours).max() <= 1e-6 * scale
    five = C.score_batch(body, graph, batch, "eap-ig", 5)
    assert np.abs(five - ours).max() > 1e-4 * scale  # more steps: another estimate


def test_a_gqa_kv_edge_is_the_sum_of_the_mib_edges_of_its_group(biased: Any, batch: C.Batch) -> None:
    body = anatomy.of(biased)
    graph = _graph(biased)
    ours = C.score_batch(body, graph, batch, "eap", 1)
    mib = circuitref.Reference(biased, "mib").eap(batch.clean, batch.corrupt, batch.target, batch.foil).double().numpy()
    index = Graph("mib", 3, 4, 2).index
    scale = np.abs(mib).max()
    checked = 0
    for e, (u, d) in enumerate(zip(*graph.edges, strict=True)):
        down = graph.downstream[d]
        if down.input not in ("k", "v"):
            continue
        assert down.index is not None
        heads = range(down.index * graph.groups, (down.index + 1) * graph.groups)
        total = sum(mib[index[(graph.upstream[u], f"a{down.layer}.h{h}", down.input)]] for h in heads)
        assert abs(total - ours[e]) <= 1e-5 * scale
        checked += 1
    assert checked == 2 * 2 * sum(1 + layer * 5 for layer in range(3))


def test_edge_patching_is_the_reference_and_exact_at_both_ends(biased: Any, batch: C.Batch) -> None:
    body = anatomy.of(biased)
    graph = _graph(biased)
    ref = circuitref.Reference(biased, "gqa")
    corrupt = C.record(body, graph, batch.corrupt, batch)
    clean = C.record(body, graph, batch.clean, batch)
    patcher = C.Patcher(body, graph, batch, corrupt)
    with torch.inference_mode():
        everything = patcher.metric(np.ones(graph.n_edges, dtype=bool))
        nothing = patcher.metric(np.zeros(graph.n_edges, dtype=bool))
    assert torch.equal(everything, clean.metric) and torch.equal(nothing, corrupt.metric)
    assert derive.faithfulness(clean.metric.tolist(), corrupt.metric.tolist(), everything.tolist()) == 1.0
    assert derive.faithfulness(clean.metric.tolist(), corrupt.metric.tolist(), nothing.tolist()) == 0.0
    rng = np.random.default_rng(0)
    one = np.zeros(graph.n_edges, dtype=bool)
    one[graph.index[("a0.h1", "a2.kv1", "k")]] = True
    sets = [one, ~one] + [rng.random(graph.n_edges) < p for p in (0.1, 0.5, 0.9)]
    spread = float((clean.metric - corrupt.metric).abs().max())
    assert spread > 1e-3
    for keep in sets:
        with torch.inference_mode():
            ours = patcher.metric(keep)
        expect = ref.patched(batch.clean, batch.corrupt, batch.target, batch.foil, torch.tensor(keep))
        assert torch.allclose(ours, expect, atol=1e-5 * max(1.0, spread)), int(keep.sum())


def test_ifr_is_flows_proximity_share_by_hand(biased: Any, batch: C.Batch) -> None:
    body = anatomy.of(biased)
    graph = _graph(biased)
    scores = C.score_batch(body, graph, batch, "ifr", 1)
    run = C.record(body, graph, batch.clean, batch)
    x = run.mlp_in[1].double()  # layer 1's MLP input: input, layers 0 and 1's heads, m0
    n_up = graph.mlp(1)
    parts = [run.ups[u].double() for u in range(n_up)]
    bias = C.bias_at(body)[3]
    assert bias is not None

    def prox(z: torch.Tensor) -> torch.Tensor:
        return (x.abs().sum(-1) - (x - z).abs().sum(-1)).clamp_min(0)

    total = sum(prox(z) for z in parts) + prox(bias.double())
    row = next(i for i, d in enumerate(graph.downstream) if d.node == "m1")
    for u in (0, graph.head(0, 2), graph.mlp(0), graph.head(1, 3)):
        expect = float((prox(parts[u]) / total).sum())
        assert abs(scores[graph.offsets[row] + u] - expect) <= 1e-9 * max(1.0, abs(expect))


def test_the_pairs_file_skips_bad_lines_with_their_number(tmp_path: Path, tokenizer: Any) -> None:
    lines = [
        json.dumps({"clean": "the cat sat", "corrupt": "the hat sat", "target": " on", "foil": 7}),
        "",
        "not json",
        json.dumps(["a list"]),
        json.dumps({"clean": "the cat", "corrupt": "the cat", "target": " on", "foil": 9}),
        json.dumps({"clean": "the cat sat", "corrupt": "a cat sat on the mat", "target": " on", "foil": 9}),
        json.dumps({"clean": "the cat sat", "corrupt": "the hat sat", "target": " attention mixes", "foil": 7}),
        json.dumps({"clean": "the cat sat", "corrupt": "the hat sat", "target": 7, "foil": 7}),
        json.dumps({"clean": "the cat sat", "corrupt": "the hat sat", "target": 7}),
        json.dumps({"clean": "the cat sat", "corrupt": "the hat sat", "target": 10**9, "foil": 7}),
    ]
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    read = read_pairs(str(path), tokenizer)
    assert [p.line for p in read.pairs] == [1]
    kinds = {line: decoded(reason).kind for line, reason in read.skipped}  # type: ignore[union-attr]
    assert kinds == {
        3: "stats_line_json",
        4: "pairs_line_object",
        5: "pairs_line_same",
        6: "pairs_line_lengths",
        7: "pairs_line_token",
        8: "pairs_line_foil",
        9: "pairs_line_field",
        10: "pairs_line_id",
    }
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(AttnscopeError, match="blank"):
        read_pairs(str(empty), tokenizer)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("nope\n", encoding="utf-8")
    with pytest.raises(AttnscopeError) as info:
        read_pairs(str(bad), tokenizer)
    assert info.value.kind == "circuit_no_pairs"


def test_the_builtin_tasks_are_reproducible_pairs() -> None:
    ioi = pairs("ioi", 20, 3)
    assert ioi == pairs("ioi", 20, 3) and ioi != pairs("ioi", 20, 4)
    for pair in ioi:
        assert pair["clean"] != pair["corrupt"] and pair["target"] != pair["foil"]
        assert pair["clean"].endswith(" to") and pair["target"][1:] in pair["clean"]
        clean, corrupt = pair["clean"].split(), pair["corrupt"].split()
        changed = [i for i, (a, b) in enumerate(zip(clean, corrupt, strict=True)) if a != b]
        assert len(changed) == 1 and clean[changed[0]] == pair["foil"][1:]  # the repeated subject, renamed
        assert clean.count(pair["foil"][1:]) == 2 and clean.count(pair["target"][1:]) == 1
    ko = pairs("ko-fruit", 12, 0)
    assert ko[0]["clean"] == "민수는 사과를 샀다. 그는 그것을 먹었다. 민수가 먹은 것은" and ko[0]["target"] == " 사"
    for pair in ko:
        assert pair["target"] != pair["foil"] and pair["foil"][1] in pair["corrupt"]
    with pytest.raises(AttnscopeError):
        pairs("nope", 3, 0)  # type: ignore[arg-type]


def test_evaluate_of_the_circuit_eap_ig_chose_is_its_curve_point(cli: Any, model_dir: Path, tmp_path: Path) -> None:
    """The CLI's --json, then --evaluate of the edges of one curve point (top edges by |score|,
    pruned, written as a circuit file): the same faithfulness as the point, the same pairs."""
    from support.commands import CIRCUIT_PAIRS

    res = cli(
        "circuit", "--pairs", CIRCUIT_PAIRS, "--check", "2", "--bootstrap", "30", "--model", str(model_dir), "--json"
    )
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["schema"] == "attnscope.circuit/1" and doc["method"] == "eap-ig" and len(doc["edges"]) == doc["n_edges"]
    assert doc["curve"][-1]["faithfulness"] == 1.0 and len(doc["check"]) == 2
    graph = Graph("gqa", 3, 4, 2)
    assert doc["n_edges"] == graph.n_edges
    point = doc["curve"][7]  # 20% of the edges
    selected = np.zeros(graph.n_edges, dtype=bool)
    selected[derive.top_edges([e["score"] for e in doc["edges"]], point["chosen"])] = True
    from attnscope.results.graph import prune

    kept = np.flatnonzero(prune(graph, selected))
    assert len(kept) == point["edges"] > 0
    circuit_file = tmp_path / "circuit.json"
    circuit_file.write_text(json.dumps({"edges": [doc["edges"][int(e)] for e in kept]}), encoding="utf-8")
    res = cli(
        "circuit",
        "--pairs",
        CIRCUIT_PAIRS,
        "--evaluate",
        str(circuit_file),
        "--bootstrap",
        "30",
        "--model",
        str(model_dir),
        "--json",
    )
    assert res.exit_code == 0, res.stderr
    again = json.loads(res.stdout)
    assert again["method"] is None and again["edges"] == [] and again["evaluation"]["edges"] == point["edges"]
    assert again["evaluation"]["faithfulness"] == pytest.approx(point["faithfulness"], abs=1e-6)
    assert again["evaluation"]["pair_metric"] == pytest.approx(point["pair_metric"], abs=1e-6)
