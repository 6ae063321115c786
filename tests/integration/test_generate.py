"""``attnscope generate``: rows captured in the cached decode steps, checked against one full
forward over prompt + answer (eager-free reference: ``engine.run`` on the whole sequence,
itself checked against eager attention in test_capture), and generated ids checked
against transformers' own ``generate``; then the result, the view, bad input and Ctrl-C."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

from attnscope.capture import engine
from attnscope.core.generate import decode, generate
from attnscope.core.prompt.spec import ChatSpec, Selection
from attnscope.core.prompt.tokens import encode
from attnscope.errors import ExitCode
from attnscope.results import from_json

from support import one_error
from support.reference import hf_generate

PROMPT = "민수는 사과를 샀다."


def full_rows(loaded: Any, ids: list[int]) -> dict[int, torch.Tensor]:
    """Every row of one uncached forward over ``ids``: rows[layer] is (head, T, T)."""
    seq = torch.tensor([ids])  # (1, T)
    n = int(loaded.model.config.num_hidden_layers)
    got = engine.run(
        loaded.model,
        seq,
        torch.ones_like(seq),
        engine.Request(positions=torch.arange(len(ids))[None], layers=frozenset(range(n))),
    )
    return {layer: rows[0] for layer, rows in got.rows.items()}


@pytest.mark.parametrize("chat", [False, True])
def test_cached_rows_equal_one_full_forward(loaded: Any, chat: bool) -> None:
    enc = encode(loaded.tokenizer, PROMPT, chat=chat)
    result = generate(loaded, PROMPT, chat=ChatSpec() if chat else None, max_new_tokens=12)
    assert len(result.steps) == 12 and result.stop == "max_new_tokens"
    ids = enc.ids + [s.id for s in result.steps]
    reference = full_rows(loaded, ids)
    worst = 0.0
    for step in result.steps:
        assert step.index == result.prompt_len + result.steps.index(step)
        for li, layer in enumerate(result.layers):
            got = torch.tensor(step.weights[li])  # (H, keys)
            assert got.shape == (4, step.index)  # query index - 1 sees keys 0..index-1
            want = reference[layer][:, step.index - 1, : step.index]
            worst = max(worst, float((got - want).abs().max()))
    assert worst < 1e-4


def test_selected_layers_and_heads(loaded: Any) -> None:
    enc = encode(loaded.tokenizer, PROMPT)
    result = generate(loaded, PROMPT, max_new_tokens=5, selection=Selection(layers=[1, 2], heads=[0, 3]))
    assert result.layers == [1, 2] and result.heads == [0, 3] and result.kv_heads == [0, 1]
    reference = full_rows(loaded, enc.ids + [s.id for s in result.steps])
    for step in result.steps:
        for li, layer in enumerate(result.layers):
            for hi, head in enumerate(result.heads):
                want = reference[layer][head, step.index - 1, : step.index]
                assert torch.allclose(torch.tensor(step.weights[li][hi]), want, atol=1e-4)


def test_greedy_ids_equal_transformers_generate(loaded: Any) -> None:
    enc = encode(loaded.tokenizer, PROMPT, chat=True)
    got = generate(loaded, PROMPT, chat=ChatSpec(), max_new_tokens=15)
    assert [s.id for s in got.steps] == hf_generate(loaded, enc.ids, 15, do_sample=False)


@pytest.mark.parametrize(("temperature", "seed"), [(0.7, 0), (1.3, 1234)])
def test_sampled_ids_equal_transformers_generate(loaded: Any, temperature: float, seed: int) -> None:
    enc = encode(loaded.tokenizer, PROMPT, chat=True)
    got = generate(loaded, PROMPT, chat=ChatSpec(), max_new_tokens=15, temperature=temperature, seed=seed)
    torch.manual_seed(seed)
    want = hf_generate(loaded, enc.ids, 15, do_sample=True, temperature=temperature, top_k=0, top_p=1.0)
    assert [s.id for s in got.steps] == want
    again = generate(loaded, PROMPT, chat=ChatSpec(), max_new_tokens=15, temperature=temperature, seed=seed)
    assert [s.id for s in again.steps] == want  # the seed, not the global RNG, decides


def test_stops_at_eos_and_keeps_its_row(loaded: Any) -> None:
    enc = encode(loaded.tokenizer, PROMPT, chat=True)
    first = generate(loaded, PROMPT, chat=ChatSpec(), max_new_tokens=3).steps
    # Make the second token the stop token: stop on whatever id it is.
    decoded = decode(loaded.model, enc.ids, max_new_tokens=10, stop=[first[1].id])
    assert decoded.stop == "eos" and decoded.ids == [first[0].id, first[1].id]
    assert len(decoded.rows) == 2


def test_segment_shares_words_and_heads_add_up(loaded: Any) -> None:
    r = generate(loaded, PROMPT, chat=ChatSpec(system="짧게."), max_new_tokens=6)
    assert [s.kind for s in r.segments] == ["template", "system", "user", "answer"]
    assert r.segments[-1].tokens == list(range(r.prompt_len, r.prompt_len + 6))
    assert [t.segment for t in r.tokens[r.prompt_len :]] == [3] * 6
    for step in r.steps:
        row = torch.tensor(step.weights)  # (L, H, keys)
        shares = torch.tensor(step.segments)  # (L, H, S)
        assert torch.allclose(shares.sum(-1), torch.ones(3, 4), atol=1e-5)
        user = r.segments[2].tokens
        assert torch.allclose(shares[..., 2], row[..., user].sum(-1), atol=1e-6)
        assert len(step.group_segments) == len(r.layer_groups) == 3
        mean_row = row.mean(dim=(0, 1))
        best = step.top_words[0]
        assert best.weight == pytest.approx(
            float(mean_row[[i for i in r.words[best.word].tokens if i < step.index]].sum())
        )
        content = [i for i in range(1, r.prompt_len) if r.tokens[i].segment in (1, 2)]
        top = step.prompt_heads[0]
        on_prompt = row[r.layers.index(top.layer), r.heads.index(top.head), content].sum()
        assert top.weight == pytest.approx(float(on_prompt), abs=1e-6)
        assert top.weight == pytest.approx(float(row[:, :, content].sum(-1).max()), abs=1e-6)


def test_json_round_trip_and_views(cli: Any, model_dir: Path) -> None:
    res = cli("generate", PROMPT, "--chat", "-n", "4", "--model", str(model_dir), "--json")
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["schema"] == "attnscope.generate/1"
    assert [len(s["weights"][0][0]) for s in doc["steps"]] == [s["index"] for s in doc["steps"]]
    assert doc["template"] == {"inserted_system": None, "reencode_matches": True, "generation_prompt": True}
    result = from_json(doc)
    from attnscope.render import Ctx, console, view

    for lang, words in (("en", "Where each answer token looked"), ("ko", "응답의 토큰마다 어디를 봤는가")):
        buf = console(width=120, file=__import__("io").StringIO())
        buf.print(view(result, Ctx(lang=lang)))
        text = buf.file.getvalue()
        assert words in text
    shown = cli("generate", PROMPT, "-n", "4", "--steps", "1,3", "--model", str(model_dir), "--lang", "ko")
    assert shown.exit_code == 0, shown.stderr
    assert "응답 토큰 4개 중 2개를 자세히 보였다" in shown.stdout


@pytest.mark.parametrize(
    ("args", "code", "fragment"),
    [
        (["-n", "0"], ExitCode.USAGE, "--max-new-tokens must be at least 1 (got 0)"),
        (["--max-new-tokens", "-5"], ExitCode.USAGE, "--max-new-tokens must be at least 1 (got -5)"),
        (["--temperature", "0"], ExitCode.USAGE, "--temperature must be above 0"),
        (["--seed", "3"], ExitCode.USAGE, "--seed needs a temperature"),
        (["--steps", "2-x"], ExitCode.USAGE, "--steps '2-x'"),
        (["-n", "120"], ExitCode.USAGE, "more than this model's max_position_embeddings (128)"),
        (["--layer", "9"], ExitCode.USAGE, "layer 9 is out of range"),
    ],
)
def test_bad_input(cli: Any, model_dir: Path, args: list[str], code: int, fragment: str) -> None:
    one_error(cli("generate", PROMPT, "--model", str(model_dir), *args), code, fragment)


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ('{"role": "user", "content": "hi"}', "expected a non-empty JSON list of {role, content} objects"),
        ('[{"role": "user", "text": "hi"}]', "[0]: expected an object with 'role' and 'content'"),
        ('[{"role": "tool", "content": "hi"}]', "[0]: unknown role 'tool'; use system, user, assistant"),
        ('[{"role": "user", "content": "hi"', "not JSON"),
    ],
)
def test_bad_messages_file(cli: Any, model_dir: Path, tmp_path: Path, content: str, fragment: str) -> None:
    path = tmp_path / "messages.json"
    path.write_text(content, encoding="utf-8")
    one_error(cli("generate", "--messages", str(path), "--model", str(model_dir)), ExitCode.INPUT_FILE, fragment)


def test_missing_messages_file_and_no_prompt(cli: Any, model_dir: Path, tmp_path: Path) -> None:
    one_error(
        cli("generate", "--messages", str(tmp_path / "none.json"), "--model", str(model_dir)),
        ExitCode.INPUT_FILE,
        "No such file",
    )
    one_error(cli("generate", "--model", str(model_dir)), ExitCode.USAGE, "give a PROMPT")


def test_messages_file_runs_multi_turn(cli: Any, model_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "messages.json"
    turns = [{"role": "user", "content": "hello world"}, {"role": "assistant", "content": "hello attention"}]
    path.write_text(json.dumps(turns), encoding="utf-8")
    res = cli(
        "generate",
        "The cat sat.",
        "--messages",
        str(path),
        "--system",
        "짧게.",
        "-n",
        "2",
        "--model",
        str(model_dir),
        "--json",
    )
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    got = [(s["kind"], s["message"], s["turn"]) for s in doc["segments"]]
    assert got == [
        ("template", None, None),
        ("system", 0, 1),
        ("user", 1, 1),
        ("assistant", 2, 1),
        ("user", 3, 2),
        ("answer", None, None),
    ]


def test_render_redraws_and_refuses_an_edited_document(cli: Any, model_dir: Path, tmp_path: Path) -> None:
    res = cli("generate", PROMPT, "--chat", "-n", "3", "--model", str(model_dir), "--json")
    assert res.exit_code == 0, res.stderr
    path = tmp_path / "gen.json"
    path.write_text(res.stdout, encoding="utf-8")
    again = cli("render", str(path))
    assert again.exit_code == 0, again.stderr
    assert "Where each answer token looked" in again.stdout
    doc = json.loads(res.stdout)
    doc["steps"][1]["segments"][0][0][0] += 0.25  # a share that no longer sums its row
    path.write_text(json.dumps(doc), encoding="utf-8")
    one_error(cli("render", str(path)), ExitCode.INPUT_FILE, "step 1")
