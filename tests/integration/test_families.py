"""Every decoder family attnscope is tested on, each a tiny random config saved as an HF folder
(``support.families``), against eager ``output_attentions``: the rows of every layer and head
(left-padded batch), ``weights --layer all --head all --json`` through the CLI, the rows of
``generate`` through the KV cache, and the norm measure's completeness check. Then every
command once on the folder: it works, or refuses with one line saying why.

What is measured here is what ``docs/models.md`` says; ``test_models_doc_is_up_to_date`` (run last)
compares it, and ``ATTNSCOPE_WRITE_MODELS_DOC=1`` rewrites it from this run.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import torch

from attnscope.capture import anatomy, engine
from attnscope.core.generate import generate
from attnscope.devtools import models_doc
from attnscope.errors import ExitCode

from support import SEED, families, one_error, reference

CLEAN, CORRUPT = (
    "민수는 사과를 샀다. 그는 그것을",
    "민수는 사과를 샀다. 그것을 그는",
)  # 21 tokens each, differing at the end (within a 4-key window)
TOLERANCE = 1e-5  # fp32, every row against eager
RECORDS: dict[str, models_doc.Family] = {}

# Each command once, on the family's folder: (name, arguments after the command's name).
COMMANDS: list[tuple[str, list[str]]] = [
    ("weights", [SEED, "--query", "그것을", "--layer", "all", "--head", "all"]),
    ("weights --measure norm", [SEED, "--query", "그것을", "--measure", "norm"]),
    ("heads", [SEED, "--query", "그것을", "--key", "사과를", "--top", "2"]),
    ("matrix", [SEED, "--layer", "-1", "--head", "0"]),
    ("roles", ["--length", "8", "--seed", "2"]),
    ("generate", [SEED, "-n", "3"]),
    ("explore", [SEED, "--query", "그것을"]),
    ("explain", [SEED, "--query", "그것을", "--layer", "-1", "--head", "0"]),
    ("rope", ["--layer", "-1"]),
    ("trace", [SEED, "--top", "2", "--dims", "3"]),
    ("ablate", [SEED, "--target", "."]),
    ("knockout", [SEED, "--target", ".", "--key", "사과를"]),
    ("patch", ["--clean", CLEAN, "--corrupt", CORRUPT, "--target", "."]),
    ("flow", [SEED, "--threshold", "0.04"]),
]


def eager_rows(model: Any, ids: torch.Tensor, mask: torch.Tensor, layers: list[int]) -> dict[int, torch.Tensor]:
    """Eager attention per layer (B, H, T, T); eager returns the attention layers only, in order."""
    got = reference.eager_attentions(model, ids, mask)
    return dict(zip(layers, got, strict=True))


def attention_layers(model: Any) -> list[int]:
    kinds = getattr(model.config, "layer_types", None) or ["full_attention"] * model.config.num_hidden_layers
    return [i for i, kind in enumerate(kinds) if kind != "linear_attention"]


def worst(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).abs().max())


@pytest.mark.parametrize("model_type", list(families.FAMILIES))
def test_family(model_type: str, tokenizer: Any, cli: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = families.save(tmp_path_factory.mktemp(model_type), model_type, tokenizer)
    loaded = engine.load(str(folder), device="cpu", dtype="float32")
    model = loaded.model
    layers = attention_layers(model)
    assert [i for i, k in enumerate(loaded.info.layer_kinds) if k != "linear"] == layers

    # 1. Every row of every attention layer and head, a left-padded batch of two prompts.
    tokenizer.padding_side = "left"
    enc = tokenizer([SEED, "hello world"], padding=True, return_tensors="pt")
    ids, mask = enc["input_ids"], enc["attention_mask"]
    positions = torch.arange(ids.shape[1]).expand(ids.shape[0], -1)
    got = engine.run(model, ids, mask, engine.Request(positions=positions, layers=frozenset(layers)))
    ref = eager_rows(model, ids, mask, layers)
    real = mask.bool()[:, None, :, None]  # (B, 1, T, 1): real query rows
    rows_diff = max(worst(got.rows[i] * real, ref[i] * real) for i in layers)
    assert rows_diff < TOLERANCE

    # 2. weights --layer all --head all --json on the folder, against eager at the query.
    res = cli("weights", SEED, "--query", "그것을", "--layer", "all", "--head", "all", "--model", str(folder), "--json")
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["layers"] == layers and doc["model"]["layer_kinds"] == loaded.info.layer_kinds
    q = doc["query"]["index"]
    one = torch.tensor([tokenizer(SEED)["input_ids"]])
    ref_one = eager_rows(model, one, torch.ones_like(one), layers)
    cli_rows = torch.tensor(doc["weights"])  # (L, H, q + 1)
    want = torch.stack([ref_one[i][0, :, q, : q + 1] for i in layers])
    cli_diff = worst(cli_rows, want)
    assert cli_diff < TOLERANCE
    sink = loaded.info.sink_logits
    if sink:  # the learned sink's share is what the keys do not get
        assert torch.allclose(torch.tensor(doc["learned_sink"]), 1 - want.sum(-1), atol=TOLERANCE)
        assert float(torch.tensor(doc["learned_sink"]).max()) > 0.1  # the sink takes a real share
    else:
        assert doc["learned_sink"] == []

    # 3. generate's rows through the KV cache, against eager over prompt + answer.
    result = generate(loaded, SEED, max_new_tokens=4)
    full = torch.tensor([tokenizer(SEED)["input_ids"] + [s.id for s in result.steps]])
    ref_full = eager_rows(model, full, torch.ones_like(full), layers)
    gen_diff = 0.0
    for step in result.steps:
        for li, layer in enumerate(result.layers):
            want_row = ref_full[layer][0, :, step.index - 1, : step.index]
            gen_diff = max(gen_diff, worst(torch.tensor(step.weights[li]), want_row))
    assert gen_diff < TOLERANCE

    # 3b. The same rows with the model in bfloat16 (rows still softmaxed in fp32 from bf16 q/k).
    half = families.model(model_type, len(tokenizer)).to(torch.bfloat16)
    got16 = engine.run(half, ids, mask, engine.Request(positions=positions, layers=frozenset(layers)))
    bf16_diff = max(worst(got16.rows[i] * real, ref[i] * real) for i in layers)
    assert bf16_diff < 0.5

    # 4. Every command once: it works, or refuses in one line.
    support: dict[str, str] = {}
    completeness = None
    for name, args in COMMANDS:
        command = name.split()[0]
        extra = ["-o", str(folder / "explore.html")] if command == "explore" else []
        res = cli(command, *args, *extra, "--model", str(folder), *([] if extra else ["--json"]))
        if res.exit_code == 0:
            support[name] = ""
            if name == "ablate":
                check_ablate(model, tokenizer, json.loads(res.stdout))
            if name == "weights --measure norm":
                completeness = json.loads(res.stdout)["completeness_max_diff"]
                assert completeness is not None and completeness < 1e-4
            if name == "flow":  # every split sum adds back to the model's own
                checks = json.loads(res.stdout)["layers"]
                assert all(max(c["attention_error"], c["mlp_error"]) < 1e-4 * max(1.0, c["scale"]) for c in checks)
        else:
            support[name] = one_error(res, res.exit_code).removeprefix("attnscope: error: ")
    RECORDS[model_type] = models_doc.Family(
        model_type=model_type,
        layer_kinds=loaded.info.layer_kinds,
        sliding_window=loaded.info.sliding_window,
        sink_logits=sink,
        softcap=getattr(model.config, "attn_logit_softcapping", None) is not None,
        rows=max(rows_diff, cli_diff),
        generate=gen_diff,
        bf16=bf16_diff,
        completeness=completeness,
        commands=support,
    )


def check_ablate(model: Any, tokenizer: Any, doc: dict[str, Any]) -> None:
    """``ablate``'s baseline and the effect of its top head against the model's own forward, with
    that head's slice of o_proj's input zeroed by a hook: the layer-by-layer replay is exact."""
    ids = torch.tensor([tokenizer(SEED)["input_ids"]])
    target = doc["metric"]["target_id"]

    def logp() -> float:
        with torch.no_grad():
            logits = model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False).logits
        return float(torch.log_softmax(logits[0, -1].float(), dim=-1)[target])

    assert abs(logp() - doc["baseline"]) < 1e-4
    top = doc["ranking"][0]
    layers = [layer.block for layer in anatomy.of(model).layers]
    head_dim = doc["model"]["head_dim"]

    def zero(_module: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
        x = args[0].clone()
        x[..., top["head"] * head_dim : (top["head"] + 1) * head_dim] = 0
        return (x, *args[1:])

    handle = layers[top["layer"]].self_attn.o_proj.register_forward_pre_hook(zero)
    try:
        assert abs(logp() - doc["baseline"] - top["effect"]) < 1e-4
    finally:
        handle.remove()


def test_a_selection_of_linear_layers_only_is_one_error(tokenizer: Any, cli: Any, tmp_path: Path) -> None:
    folder = families.save(tmp_path / "qwen3_next", "qwen3_next", tokenizer)
    res = cli("weights", SEED, "--layer", "0,2", "--model", str(folder))
    one_error(res, 2, "layers 0, 2 of this qwen3_next model are linear-attention layers", "are 1, 3")
    res = cli("weights", SEED, "--layer", "0-1", "--model", str(folder), "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["layers"] == [1]
    shown = cli("weights", SEED, "--model", str(folder))
    assert "layers 0,2 are linear-attention layers (no attention weights): not captured" in shown.stdout


@pytest.mark.parametrize("model_type", ["qwen3_next", "qwen3_5_text"])
def test_norm_on_a_gated_family_is_refused_before_loading(
    model_type: str, tokenizer: Any, cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The config's model type tells that the heads' outputs are gated: one line, no model loaded."""
    folder = families.save(tmp_path / model_type, model_type, tokenizer)

    def no_load(*_: Any, **__: Any) -> Any:
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(engine, "load", no_load)
    res = cli("weights", SEED, "--measure", "norm", "--model", str(folder))
    one_error(res, ExitCode.MODEL, f"{model_type} attention gates each head's output", "norm measure does not apply")


def test_softcap_and_sinks_change_the_rows(tokenizer: Any) -> None:
    """Without soft-capping or the sink column the rows would differ from eager: the checks above can fail."""
    q, k = torch.randn(1, 2, 5, 8) * 4, torch.randn(1, 1, 5, 8) * 4
    pos = torch.arange(5)[None]
    plain = engine.attention_rows(q, k, pos, 0.35, None)
    capped = engine.attention_rows(q, k, pos, 0.35, None, softcap=1.0)
    sunk = engine.attention_rows(q * 0.1, k, pos, 0.35, None, sinks=torch.tensor([2.0, 3.0]))
    assert worst(plain, capped) > 0.05 and worst(engine.attention_rows(q * 0.1, k, pos, 0.35, None), sunk) > 0.05
    assert float(sunk.sum(-1).max()) < 1.0  # the sink takes a share of every row


def test_models_doc_is_up_to_date() -> None:
    if set(RECORDS) != {m for m in families.FAMILIES if m in _available()}:
        pytest.skip("runs after every family's test (the whole module)")
    families_run = [RECORDS[m] for m in families.FAMILIES if m in RECORDS]
    path = Path(__file__).parents[2] / "docs" / "models.md"
    if os.environ.get("ATTNSCOPE_WRITE_MODELS_DOC") == "1":
        path.write_text(models_doc.render(families_run), encoding="utf-8")
    models_doc.check(path.read_text(encoding="utf-8"), families_run)


def _available() -> set[str]:
    from transformers import CONFIG_MAPPING

    return {m for m in families.FAMILIES if m in CONFIG_MAPPING}


@pytest.mark.parametrize("model_type", ["gemma2", "qwen3_next", "mistral"])
def test_info_reports_each_layers_attention(model_type: str, tokenizer: Any, cli: Any, tmp_path: Path) -> None:
    folder = families.save(tmp_path / model_type, model_type, tokenizer)
    doc = json.loads(cli("info", "--model", str(folder), "--json").stdout)
    loaded = engine.load(str(folder), device="cpu", dtype="float32")
    assert doc["layer_kinds"] == loaded.info.layer_kinds
    window = families.WINDOW if "sliding" in doc["layer_kinds"] else None
    assert doc["sliding_window"] == window
    shown = cli("info", "--model", str(folder)).stdout
    expected = {
        "gemma2": "full attention 1,3; sliding window of 4 keys 0,2",
        "qwen3_next": "full attention 1,3; linear attention 0,2 (no attention weights: not captured)",
        "mistral": "sliding window of 4 keys 0-3",
    }[model_type]
    assert expected in shown
