"""Batch mode, the Python API and --device-map, against one-prompt-at-a-time and eager rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

from attnscope.capture import engine
from attnscope.cli.flags import cli_text
from attnscope.core.prompt.spec import QuerySpec, Selection, Text
from attnscope.core.weights import batch, weights
from attnscope.errors import AttnscopeError, ExitCode

from support import SEED

# Different lengths, so a batch pads; each with its own way of choosing the query.
RECORDS: list[dict[str, Any]] = [
    {"prompt": SEED, "query": "그것을"},
    {"prompt": "hello world"},
    {"prompt": "The cat sat on the mat. It was happy.", "pos": 3},
    {"prompt": "사과는 맛있다.", "query": "사과"},
    {"prompt": "지수는 책을 읽었다. 그녀는 그것을 좋아했다.", "query": "그것을", "occurrence": 1},
    {"prompt": "hello attention", "pos": -1},
    {"prompt": "Attention mixes earlier tokens by weights that sum to one."},
]


def _items() -> list[batch.Item]:
    return [batch.Item(line=i + 1, **r) for i, r in enumerate(RECORDS)]


def _single(loaded: Any, item: batch.Item) -> Any:
    query: QuerySpec = item.pos if item.query is None else Text(item.query, item.occurrence)
    return weights(loaded, item.prompt, query=query)


def _max_diff(a: list[Any], b: list[Any]) -> float:
    ta, tb = torch.tensor(a), torch.tensor(b)
    assert ta.shape == tb.shape
    return float((ta - tb).abs().max())


class _CountForwards:
    """Wraps engine.run to record each forward's batch size."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sizes: list[int] = []
        real = engine.run

        def run(model: Any, ids: torch.Tensor, mask: torch.Tensor, request: Any, **kw: Any) -> Any:
            self.sizes.append(int(ids.shape[0]))
            return real(model, ids, mask, request, **kw)

        monkeypatch.setattr(engine, "run", run)


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("batch_size", [3, 7])
def test_batched_rows_equal_one_at_a_time(loaded, monkeypatch, side, batch_size):
    singles = [_single(loaded, it) for it in _items()]
    counter = _CountForwards(monkeypatch)
    outcomes = list(batch.run_batch(loaded, _items(), batch_size=batch_size, padding_side=side))
    # 7 prompts of different lengths: padded together, batch_size per forward
    assert counter.sizes == ([3, 3, 1] if batch_size == 3 else [7])
    assert [o.line for o in outcomes] == list(range(1, len(RECORDS) + 1))
    for o, ref in zip(outcomes, singles, strict=True):
        assert o.error is None and o.result is not None
        assert o.result.query == ref.query
        assert o.result.tokens == ref.tokens
        assert _max_diff(o.result.weights, ref.weights) < 1e-5
        assert abs(o.result.chart.total - ref.chart.total) < 1e-5
        # each row still sums to 1 over its own tokens only: the padding left no trace
        rows = torch.tensor(o.result.weights)  # (L, H, q+1)
        assert rows.shape[-1] == ref.query.index + 1
        assert torch.allclose(rows.sum(-1), torch.ones(rows.shape[:2]), atol=1e-5)


def test_bad_line_flushes_earlier_good_lines_first(loaded, monkeypatch):
    entries: list[Any] = _items()[:2]
    entries.append(batch.Item(line=3, prompt="hello world", query="not there"))
    entries.append(_items()[3])
    counter = _CountForwards(monkeypatch)
    outcomes = batch.run_batch(loaded, entries, batch_size=4)
    first, second, third = next(outcomes), next(outcomes), next(outcomes)
    # lines 1 and 2 ran (as one forward) before line 3's error was handed out
    assert counter.sizes == [2]
    assert (first.line, second.line) == (1, 2) and first.result and second.result
    assert third.line == 3 and third.result is None and third.error is not None
    assert third.error.message.startswith("line 3: query 'not there' is not in the prompt")
    assert cli_text(third.error).startswith("line 3: --query 'not there' is not in the prompt")
    rest = list(outcomes)
    assert [o.line for o in rest] == [4] and rest[0].result is not None


def test_line_defaults_and_overrides(loaded):
    items = [batch.Item(1, SEED), batch.Item(2, SEED, pos=0), batch.Item(3, SEED, occurrence=2)]
    out = list(batch.run_batch(loaded, items, batch_size=2, query="그는"))
    assert out[0].result is not None and out[0].result.query.text == "그는"
    assert out[1].result is not None and out[1].result.query.index == 0
    assert out[2].error is not None and "'occurrence' needs 'query'" in out[2].error.message


def test_bad_options_raise_before_running(loaded):
    with pytest.raises(AttnscopeError, match="batch_size 0: must be at least 1"):
        list(batch.run_batch(loaded, _items(), batch_size=0))
    with pytest.raises(AttnscopeError):
        list(batch.run_batch(loaded, _items(), selection=Selection(layers=[99])))


def _jsonl(tmp_path: Path, records: list[Any], name: str = "in.jsonl") -> Path:
    path = tmp_path / name
    lines = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_cli_batch_json_lines_match_single_runs(cli, model_dir, tmp_path):
    from attnscope.results import from_json

    path = _jsonl(tmp_path, RECORDS)
    res = cli("weights", "--input", str(path), "--batch-size", "3", "--model", str(model_dir), "--json")
    assert res.exit_code == 0, res.stderr
    docs = _lines(res.stdout)
    assert [d["input_line"] for d in docs] == list(range(1, len(RECORDS) + 1))
    assert "7 written, 0 failed" in res.stderr
    for doc, rec in zip(docs, RECORDS, strict=True):
        args = ["weights", rec["prompt"], "--model", str(model_dir), "--json"]
        for key in ("query", "pos", "occurrence"):
            if key in rec:
                args.append(f"--{key}={rec[key]}")
        single = json.loads(cli(*args).stdout)
        assert doc["schema"] == single["schema"] == "attnscope.weights/3"
        assert doc["query"] == single["query"] and doc["tokens"] == single["tokens"]
        assert _max_diff(doc["weights"], single["weights"]) < 1e-5
        assert from_json(doc).to_json() == {k: v for k, v in doc.items() if k != "input_line"}


def test_cli_plain_lines_from_stdin(cli, model_dir):
    res = cli("weights", "--input", "-", "--model", str(model_dir), "--json", input=f"{SEED}\n\nhello world\n")
    assert res.exit_code == 0, res.stderr
    docs = _lines(res.stdout)
    assert [(d["input_line"], d["text"]) for d in docs] == [(1, SEED), (3, "hello world")]


def test_cli_bad_line_stops_and_keeps_what_was_written(cli, model_dir, tmp_path):
    records = [RECORDS[0], RECORDS[1], {"prompt": "hello world", "query": "zebra"}, RECORDS[2]]
    path = _jsonl(tmp_path, records)
    res = cli("weights", "--input", str(path), "--batch-size", "4", "--model", str(model_dir), "--json")
    assert res.exit_code == int(ExitCode.USAGE)
    assert [d["input_line"] for d in _lines(res.stdout)] == [1, 2]  # complete lines, nothing after the bad one
    assert res.stdout.endswith("\n")
    assert "attnscope: error: line 3: --query 'zebra' is not in the prompt" in res.stderr
    assert "--keep-going" in res.stderr


def test_cli_keep_going_reports_and_continues(cli, model_dir, tmp_path):
    records = [RECORDS[0], "{oops", RECORDS[1], {"prompt": "hello world", "query": "zebra"}, RECORDS[2]]
    path = _jsonl(tmp_path, records)
    res = cli("weights", "--input", str(path), "--keep-going", "--batch-size", "2", "--model", str(model_dir), "--json")
    assert res.exit_code != 0
    assert [d["input_line"] for d in _lines(res.stdout)] == [1, 3, 5]
    assert "line 2: not valid JSON" in res.stderr
    assert "line 4: --query 'zebra'" in res.stderr
    assert "3 written, 2 failed" in res.stderr
    assert "2 line(s) failed, the first at line 2" in res.stderr


def test_cli_batch_views_in_turn(cli, model_dir, tmp_path):
    path = tmp_path / "prompts.txt"
    path.write_text(f"{SEED}\nhello world\n", encoding="utf-8")
    res = cli("weights", "--input", str(path), "--model", str(model_dir), "--width", "100")
    assert res.exit_code == 0, res.stderr
    assert res.stdout.index("── line 1 ──") < res.stdout.index("── line 2 ──")
    assert "query d  (token 5 'd')" in res.stdout.split("── line 2 ──")[1]  # the last token of 'hello world'


@pytest.mark.parametrize(
    "args,message",
    [
        (["weights", "x", "--input", "f"], "not both"),
        (["weights"], "give a PROMPT"),
        (["weights", "x", "--batch-size", "2"], "need --input"),
        (["weights", "--input", "f", "--svg", "a.svg"], "cannot be used with --input"),
        (["weights", "--input", "/nonexistent/prompts.txt"], "--input /nonexistent/prompts.txt"),
        (["weights", "x", "--device", "cpu", "--device-map", "auto"], "--device or --device-map"),
    ],
)
def test_cli_batch_usage_errors(cli, model_dir, args, message):
    res = cli(*args, "--model", str(model_dir))
    assert res.exit_code != 0
    assert res.stdout == ""
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1


def _eager_rows(model_dir: Path, text: str, tokenizer: Any) -> tuple[Any, ...]:
    from transformers import AutoModelForCausalLM

    ref = AutoModelForCausalLM.from_pretrained(str(model_dir), attn_implementation="eager", dtype=torch.float32)
    ids = torch.tensor([tokenizer(text)["input_ids"]])
    with torch.no_grad():
        attentions: tuple[Any, ...] = ref(input_ids=ids, output_attentions=True).attentions
    return attentions


def test_python_api_load_once_many_prompts(model_dir):
    import attnscope

    model = attnscope.load(str(model_dir), device="cpu", dtype="float32")
    first = attnscope.weights(model, SEED, query="그것을", selection=attnscope.Selection())
    second = attnscope.weights(model, "hello world", query=1)
    assert isinstance(first, attnscope.from_json(first.to_json()).__class__)
    for result, text in ((first, SEED), (second, "hello world")):
        ref = _eager_rows(model_dir, text, model.tokenizer)
        q = result.query.index
        expected = torch.stack([ref[layer][0, :, q, : q + 1] for layer in result.layers])  # (L, H, q+1)
        assert _max_diff(result.weights, expected.tolist()) < 1e-5
    with pytest.raises(attnscope.AttnscopeError, match="not in the prompt"):
        attnscope.weights(model, SEED, query="zebra")


def test_device_map_loads_and_captures_the_same_rows(model_dir, loaded):
    from attnscope.capture.engine import load

    sharded = load(str(model_dir), device_map="auto", dtype="float32")
    assert sharded.info.device == "device_map=auto"
    got = weights(sharded, SEED, query="그것을")
    ref = weights(loaded, SEED, query="그것을")
    assert _max_diff(got.weights, ref.weights) < 1e-6


def test_capture_through_accelerate_offload_hooks(model_dir, loaded, tmp_path):
    """Layers 1-2 live on disk (meta tensors until accelerate's hooks load them): rows still match."""
    from transformers import AutoModelForCausalLM

    placement = {"model.embed_tokens": "cpu", "model.layers.0": "cpu", "model.layers.1": "disk"}
    placement |= {"model.layers.2": "disk", "model.norm": "cpu", "model.rotary_emb": "cpu", "lm_head": "cpu"}
    offloaded = AutoModelForCausalLM.from_pretrained(
        str(model_dir), device_map=placement, offload_folder=str(tmp_path), dtype=torch.float32
    )
    assert offloaded.model.layers[2].self_attn.q_proj.weight.device.type == "meta"
    ids = torch.tensor([loaded.tokenizer(SEED)["input_ids"]])
    request = engine.Request(positions=torch.tensor([[ids.shape[1] - 1]]), layers=frozenset({0, 1, 2}))
    got = engine.run(offloaded, ids, torch.ones_like(ids), request)
    ref = engine.run(loaded.model, ids, torch.ones_like(ids), request)
    for layer in (0, 1, 2):
        assert got.rows[layer].device.type == "cpu"
        assert float((got.rows[layer] - ref.rows[layer]).abs().max()) < 1e-6


def test_cli_device_map(cli, model_dir):
    res = cli("weights", SEED, "--device-map", "auto", "--model", str(model_dir), "--json")
    assert res.exit_code == 0, res.stderr
    assert json.loads(res.stdout)["model"]["device"] == "device_map=auto"
