"""A tiny Gemma 3 as the real one is shaped for these views: its tokenizer prepends ``<bos>``, it has
no chat template, and its layers alternate a sliding window of ``families.WINDOW`` keys with full
attention. Checked here: position 0 is the BOS in every view and in ``--query``/``--key`` matching,
``--no-sink`` removes it, the sliding layers' rows are exactly 0 beyond the window (against eager),
the views say which layers slid, and the bad input of this family is one line each.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

from attnscope.capture import engine
from attnscope.core.prompt import tokens as tok_mod

from support import SEED, families, one_error, reference
from support.tiny import with_bos

W = families.WINDOW


@pytest.fixture(scope="module")
def gemma(tokenizer: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """The folder and its tokenizer: gemma3_text, layers 0 and 2 sliding (4 keys), 1 and 3 full."""
    tok, _ = with_bos(tokenizer)
    tok.chat_template = None
    folder = families.save(tmp_path_factory.mktemp("gemma-like"), "gemma3_text", tok)
    return folder, tok


def run(cli: Any, folder: Path, *args: str) -> Any:
    return cli(*args, "--model", str(folder))


def doc_of(cli: Any, folder: Path, *args: str) -> dict[str, Any]:
    res = run(cli, folder, *args, "--json")
    assert res.exit_code == 0, res.stderr
    return json.loads(res.stdout)


def test_the_bos_is_position_0_and_no_text_matches_it(gemma: tuple[Path, Any], cli: Any) -> None:
    folder, tok = gemma
    doc = doc_of(cli, folder, "weights", SEED, "--query", "그것을")
    assert doc["tokens"][0]["label"] == "<bos>" and doc["tokens"][0]["special"]
    assert 0 not in doc["query"]["span"]
    # a text that starts the prompt starts at position 1, never at the BOS
    first = SEED.split()[0]
    doc = doc_of(cli, folder, "weights", SEED, "--query", first)
    assert doc["query"]["span"][0] == 1
    # the BOS by its name: the query (it reads only itself) and the key of heads
    doc = doc_of(cli, folder, "weights", SEED, "--query", "<bos>")
    assert doc["query"]["index"] == 0 and doc["query"]["span"] == [0]
    assert torch.allclose(torch.tensor(doc["weights"]), torch.ones(1, 1, 1))
    doc = doc_of(cli, folder, "heads", SEED, "--query", "그것을", "--key", "<bos>", "--top", "2")
    assert doc["key"]["span"] == [0]
    ids = torch.tensor([tok(SEED)["input_ids"]])
    model = engine.load(str(folder), device="cpu", dtype="float32").model
    eager = reference.eager_attentions(model, ids)
    q = doc["query"]["index"]
    for score in doc["ranking"]:
        want = float(eager[score["layer"]][0, score["head"], q, 0])
        assert abs(score["score"] - want) < 1e-5


def test_views_name_the_bos(gemma: tuple[Path, Any], cli: Any) -> None:
    folder, _ = gemma
    for lang, mark, no_sink in (
        ("en", "BOS, added by the tokenizer", "the BOS token <bos>"),
        ("ko", "BOS, 토크나이저가 붙인 토큰", "BOS 토큰 <bos>를"),
    ):
        res = run(cli, folder, "weights", SEED, "--query", "그것을", "--lang", lang)
        assert res.exit_code == 0, res.stderr
        line = next(x for x in res.stdout.splitlines() if x.startswith("<bos>") and "0." in x)
        assert mark in line
        res = run(cli, folder, "weights", SEED, "--query", "그것을", "--no-sink", "--lang", lang)
        assert no_sink in res.stdout
        res = run(cli, folder, "heads", SEED, "--query", "그것을", "--key", "사과를", "--no-sink", "--lang", lang)
        assert no_sink in res.stdout
    res = run(cli, folder, "ablate", SEED, "--target", ".")
    assert "each head's top key is shown (position 0, the BOS token <bos>, left out)" in res.stdout
    res = run(cli, folder, "ablate", SEED, "--target", ".", "--lang", "ko")
    assert "(위치 0, 곧 BOS 토큰 <bos>는 뺀다)" in res.stdout


def test_no_sink_removes_the_bos(gemma: tuple[Path, Any], cli: Any) -> None:
    folder, tok = gemma
    doc = doc_of(cli, folder, "weights", SEED, "--query", "그것을", "--layer", "all", "--head", "all", "--no-sink")
    assert doc["chart"]["bars"][0]["tokens"] == [0] and doc["chart"]["bars"][0]["excluded"]
    model = engine.load(str(folder), device="cpu", dtype="float32").model
    eager = reference.eager_attentions(model, torch.tensor([tok(SEED)["input_ids"]]))
    q = doc["query"]["index"]
    row = torch.stack([e[0, :, q, 1 : q + 1] for e in eager])  # (L, H, q): the BOS left out
    want = (row / row.sum(-1, keepdim=True)).mean(dim=(0, 1))  # (q,): positions 1..q
    for bar in doc["chart"]["bars"][1:]:
        assert abs(bar["weight"] - float(sum(want[i - 1] for i in bar["tokens"]))) < 1e-5
    assert abs(doc["chart"]["total"] - 1.0) < 1e-5
    res = run(cli, folder, "heads", SEED, "--query", "그것을", "--key", "<bos>", "--no-sink")
    one_error(res, 2, "--key '<bos>' is position 0 alone", "--no-sink")


def test_qwen_position_0_is_the_first_word(model_dir: Path, cli: Any) -> None:
    res = cli("weights", SEED, "--query", "그것을", "--model", str(model_dir))
    assert "BOS" not in res.stdout
    doc = json.loads(cli("weights", SEED, "--query", SEED.split()[0], "--model", str(model_dir), "--json").stdout)
    assert doc["query"]["span"][0] == 0
    one_error(cli("weights", SEED, "--query", "<bos>", "--model", str(model_dir)), 2, "'<bos>' is not in the prompt")


def test_sliding_rows_are_exactly_zero_beyond_the_window(gemma: tuple[Path, Any], cli: Any) -> None:
    folder, tok = gemma
    loaded = engine.load(str(folder), device="cpu", dtype="float32")
    assert loaded.info.layer_kinds == ["sliding", "full", "sliding", "full"] and loaded.info.sliding_window == W
    doc = doc_of(cli, folder, "weights", SEED, "--query", "그것을", "--layer", "all", "--head", "all")
    q = doc["query"]["index"]
    assert q >= 2 * W  # the window hides keys here
    rows = torch.tensor(doc["weights"])  # (L, H, q + 1)
    eager = reference.eager_attentions(loaded.model, torch.tensor([tok(SEED)["input_ids"]]))
    want = torch.stack([e[0, :, q, : q + 1] for e in eager])
    assert float((rows - want).abs().max()) < 1e-5
    first = q - W + 1
    for layer in (0, 2):
        assert torch.all(rows[layer, :, :first] == 0)  # exactly, not nearly
        assert torch.all(rows[layer, :, first:] > 0)
    for layer in (1, 3):
        assert torch.all(rows[layer] > 0)


def test_weights_says_which_layers_slid(gemma: tuple[Path, Any], cli: Any) -> None:
    folder, _ = gemma
    q = doc_of(cli, folder, "weights", SEED, "--query", "그것을")["query"]["index"]
    first = q - W + 1
    for lang, words in (
        (
            "en",
            [
                f"layers 0,2 attend over a sliding window: each saw only the last {W} keys, positions {first}-{q}",
                "full-attention layers 1,3",
                "outside the window in 2 of 4 layers",
            ],
        ),
        (
            "ko",
            [
                f"레이어 0, 2는 슬라이딩 윈도로 참고한다. 레이어마다 마지막 K {W}개, 곧 위치 {first}~{q}만 봤다",
                "전체 어텐션 레이어 1, 3과",
                "레이어 4개 중 2개에서 윈도 밖",
            ],
        ),
    ):
        res = run(cli, folder, "weights", SEED, "--query", "그것을", "--lang", lang, "--width", "250")
        assert res.exit_code == 0, res.stderr
        for w in words:
            assert w in res.stdout, (w, res.stdout)
        strip = res.stdout.split("\n\n")[1].splitlines()
        bos_row = next(x for x in strip if x.startswith("<bos>"))
        assert bos_row.split()[-1].startswith("··") or "·" in bos_row
    # a short query (within the window) says nothing of windows
    res = run(cli, folder, "weights", SEED, "--query", "<bos>")
    assert res.exit_code == 0 and "sliding" not in res.stdout and "·" not in res.stdout


def test_heads_and_roles_say_they_mix_layer_kinds(
    gemma: tuple[Path, Any], cli: Any, model_dir: Path, tmp_path: Path
) -> None:
    folder, _ = gemma
    res = run(cli, folder, "heads", SEED, "--query", "그것을", "--key", "사과를", "--json")
    doc = json.loads(res.stdout)
    first = doc["query"]["index"] - W + 1
    assert {"code": "mixed_windows", "text": None, "count": first, "value": W} in doc["warnings"]
    res = run(cli, folder, "heads", SEED, "--query", "그것을", "--key", "사과를")
    assert f"the sliding-window layers read only the last {W} keys (from position {first} on)" in res.stderr
    res = run(cli, folder, "heads", SEED, "--query", "그것을", "--key", "사과를", "--lang", "ko")
    assert f"슬라이딩 윈도 레이어는 마지막 K {W}개(위치 {first}부터)만 참고하고" in res.stderr
    doc = doc_of(cli, folder, "roles", "--length", "8", "--seed", "2")
    assert doc["warnings"] == [
        {"code": "mixed_windows_length", "text": None, "count": 17, "value": W}
    ]  # the BOS and two copies of 8
    saved = tmp_path / "roles.json"
    saved.write_text(json.dumps(doc), encoding="utf-8")
    res = cli("render", str(saved))
    assert res.exit_code == 0 and "17 tokens are more than the 4 keys" in res.stderr, res.stderr
    # within the window, and on Qwen: no warning
    short = doc_of(cli, folder, "roles", "그는")
    assert len(short["tokens"]) <= W and short["warnings"] == []
    assert json.loads(cli("roles", "--length", "8", "--model", str(model_dir), "--json").stdout)["warnings"] == []


def _merged_token(enc: tok_mod.Encoded) -> tok_mod.Token:
    """A token of two or more characters that no neighbour shares a character with."""
    for t in enc.tokens[1:]:
        body = enc.text[t.start : t.end].strip()
        others = [o for o in enc.tokens if o.index != t.index and o.start < t.end and o.end > t.start]
        if len(body) >= 2 and not others:
            return t
    raise AssertionError("no such token in the prompt")


def test_a_query_that_cuts_a_token_is_one_line(gemma: tuple[Path, Any], cli: Any) -> None:
    folder, tok = gemma
    prompt = "The cat sat on the mat because it was tired"
    enc = tok_mod.encode(tok, prompt)
    t = _merged_token(enc)
    body = enc.text[t.start : t.end].strip()
    part = body[:-1]  # its first characters: the prompt holds them only merged with the last one
    assert prompt.find(part) == prompt.find(body)
    res = run(cli, folder, "weights", prompt, "--query", part)
    line = one_error(res, 2, f"--query {part!r} is only part of a token here", "the prompt's tokens there are")
    assert f"{t.label!r} ({t.index})" in line
    res = run(cli, folder, "heads", prompt, "--query", "tired", "--key", part)
    one_error(res, 2, f"--key {part!r} is only part of a token here")
    res = run(cli, folder, "heads", prompt, "--query", "tired", "--key", part, "--lang", "ko")
    assert res.exit_code == 2 and res.stdout == "" and len(res.stderr.splitlines()) == 1
    assert f"오류: --key {part!r}" in res.stderr and "토큰의 일부일 뿐이다" in res.stderr
    # the whole token is found as before
    assert doc_of(cli, folder, "weights", prompt, "--query", body)["query"]["span"] == [t.index]


def test_the_family_s_bad_input_is_one_line(gemma: tuple[Path, Any], cli: Any) -> None:
    folder, tok = gemma
    res = run(cli, folder, "ablate", SEED, "--target", " 사과를 샀다")
    line = one_error(res, 2, "--target ' 사과를 샀다' is", "tokens, not one", "--target-id")
    assert "<bos>" not in line
    one_error(run(cli, folder, "weights", SEED, "--chat"), 2, "--chat", "no chat template")
    # the BOS reads only itself: blocking it from itself leaves it nothing
    res = run(cli, folder, "knockout", SEED, "--query", "<bos>", "--key", "<bos>", "--target", ".")
    one_error(res, 2, "--key '<bos>' holds every key that position 0 reads in layer 0 (position(s) 0)")
    # the last word as its own key: from its W-th token on, a sliding layer reads nothing else
    enc = tok_mod.encode(tok, SEED)
    last = key = SEED.split()[-1]
    span = enc.words[-1].tokens
    assert len(span) >= W
    pos = span[0] + W - 1
    res = run(cli, folder, "knockout", SEED, "--query", last, "--key", key, "--target", ".")
    one_error(
        res,
        2,
        f"holds every key that position {pos} reads in layer 0, a sliding layer that reads only the last {W} keys"
        f" (position(s) {span[0]}-{pos})",
    )
    res = run(cli, folder, "knockout", SEED, "--query", last, "--key", key, "--target", ".", "--lang", "ko")
    assert res.exit_code == 2 and res.stdout == "" and "슬라이딩 윈도 레이어라 마지막 K" in res.stderr
    # in the full layers alone the same cut leaves the earlier keys: it runs
    res = run(cli, folder, "knockout", SEED, "--query", last, "--key", key, "--target", ".", "--layers", "1,3")
    assert res.exit_code == 0, res.stderr


def test_mask_checks_each_sliding_layer_against_its_band(gemma: tuple[Path, Any], cli: Any) -> None:
    folder, _ = gemma
    doc = doc_of(cli, folder, "mask", SEED, "그는 그것을")
    assert doc["agrees_with_model"] and doc["agrees_with_eager"] and doc["layers_checked"] == 4
    seq = doc["sequences"][0]
    n = len(seq["tokens"])
    # layer 0 slides: the eager mask it received is the grid with the band cut out, not the grid
    band = [[v if q - k < W else 0 for k, v in enumerate(row)] for q, row in enumerate(seq["combined"])]
    assert seq["eager_mask"] == band != seq["combined"]
    for lang, title in (
        ("en", f"in the sliding-window layers 0,2: a query reads only the last {W} keys"),
        ("ko", f"슬라이딩 윈도 레이어 0, 2에서는 Q가 마지막 K {W}개만 참고한다"),
    ):
        res = run(cli, folder, "mask", SEED, "그는 그것을", "--lang", lang, "--width", "300", "--max-size", "64")
        assert res.exit_code == 0, res.stderr
        assert title in res.stdout
        below = res.stdout.split(title)[1].splitlines()
        last = next(x for x in below if x.lstrip().startswith(f"{n - 1} "))
        assert last.split()[2 : 2 + n - W] == ["x"] * (n - W)  # the last row: every key W or more back


def test_stats_says_it_lists_both_kinds_past_the_window(
    gemma: tuple[Path, Any], cli: Any, tmp_path: Path, model_dir: Path
) -> None:
    folder, tok = gemma
    corpus = tmp_path / "prompts.txt"
    corpus.write_text(f"{SEED}\n그는 그것을\n", encoding="utf-8")
    longest = max(len(tok(p)["input_ids"]) for p in (SEED, "그는 그것을"))
    doc = doc_of(cli, folder, "stats", "--input", str(corpus))
    assert doc["warnings"] == [{"code": "mixed_windows_length", "text": None, "count": longest, "value": W}]
    res = run(cli, folder, "stats", "--input", str(corpus), "--lang", "ko")
    assert f"토큰 {longest}개는 슬라이딩 윈도 레이어가 참고하는 K {W}개보다 많아서" in res.stderr
    # with every prompt cut to the window: nothing mixes; Qwen never
    assert doc_of(cli, folder, "stats", "--input", str(corpus), "--max-tokens", str(W))["warnings"] == []
    qwen = cli("stats", "--input", str(corpus), "--model", str(model_dir), "--json")
    assert json.loads(qwen.stdout)["warnings"] == []
