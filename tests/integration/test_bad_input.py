"""Every bad input: one ``attnscope: error:`` line on stderr, a non-zero exit, nothing on stdout.

Each case here backs one row of the bad-input table in the README (Reliability section); each
must fail if its handling is removed (the message, the exit code and the empty stdout
are all checked). Most cases go through ``CliRunner``; a few run ``python -m
attnscope`` in a subprocess for real stdout/stderr separation and a real environment
(``HF_HUB_OFFLINE`` is read when huggingface_hub is imported).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from attnscope.cli.flags import cli_text
from attnscope.cli.parse import parse_indices
from attnscope.core.prompt.spec import resolve
from attnscope.errors import AttnscopeError, ExitCode

from support import SEED, WORDS, one_error, tiny
from support.commands import CIRCUIT_PAIRS

CIRCUIT = Path(__file__).resolve().parents[1] / "data" / "circuit"

ROOT = Path(__file__).resolve().parents[2]


def no_model_loaded(res: Any) -> None:
    assert "attnscope: loading" not in res.stderr  # refused before paying for the model


@pytest.mark.parametrize("prompt", ["", "   ", " \n\t "])
@pytest.mark.parametrize("command", ["weights", "tokens"])
def test_empty_prompt(cli: Any, model_dir: Path, command: str, prompt: str) -> None:
    res = cli(command, prompt, "--model", str(model_dir))
    one_error(res, ExitCode.USAGE, "the prompt is empty")
    no_model_loaded(res)


def test_empty_stdin(cli: Any, model_dir: Path) -> None:
    res = cli("weights", "-", "--model", str(model_dir), input="\n\n")
    one_error(res, ExitCode.USAGE, "the prompt read from stdin is empty")


def test_stdin_is_read_for_dash(cli: Any, model_dir: Path) -> None:
    res = cli("tokens", "-", "--model", str(model_dir), "--json", input=(SEED + "\n").encode())
    assert res.exit_code == 0, res.stderr
    assert json.loads(res.stdout)["text"] == SEED  # the trailing newline is dropped


def test_invalid_utf8_on_stdin(cli: Any, model_dir: Path) -> None:
    res = cli("weights", "-", "--model", str(model_dir), input="민수는".encode() + b"\xff\xfe")
    one_error(res, ExitCode.USAGE, "stdin is not valid UTF-8", "byte 9")


def test_query_not_in_prompt_lists_the_words(cli: Any, model_dir: Path) -> None:
    res = cli("weights", SEED, "--query", "바나나", "--model", str(model_dir))
    one_error(res, ExitCode.USAGE, "'바나나' is not in the prompt", f"its words are: {WORDS}")


def test_ambiguous_query_warns_and_takes_the_first(cli: Any, model_dir: Path) -> None:
    args = ("weights", SEED, "--model", str(model_dir), "--layer", "1", "--json")
    res = cli(*args, "--query", "그")
    assert res.exit_code == 0, res.stderr
    assert "warning: '그' occurs 2 times; using the first (pick one with --occurrence 1..2)" in res.stderr
    first = cli(*args, "--query", "그", "--occurrence", "1")
    second = cli(*args, "--query", "그", "--occurrence", "2")
    assert "warning" not in first.stderr
    got, one, two = (json.loads(r.stdout) for r in (res, first, second))
    assert got["query"] == one["query"] and got["weights"] == one["weights"]
    assert two["query"]["index"] > one["query"]["index"]
    first_token = one["tokens"][one["query"]["index"]]
    assert first_token["start"] <= SEED.index("그") < first_token["end"]  # the first 그, in 그는


@pytest.mark.parametrize("occurrence", ["3", "0", "-1"])
def test_occurrence_out_of_range(cli: Any, model_dir: Path, occurrence: str) -> None:
    res = cli("weights", SEED, "-q", "그", f"--occurrence={occurrence}", "--model", str(model_dir))
    one_error(res, ExitCode.USAGE, f"--occurrence {occurrence} is out of range", "occurs 2 time(s)")


@pytest.mark.parametrize("pos", ["28", "-29", "1000"])
def test_pos_out_of_range(cli: Any, model_dir: Path, pos: str) -> None:
    res = cli("weights", SEED, f"--pos={pos}", "--model", str(model_dir))
    one_error(res, ExitCode.USAGE, f"--pos {pos} is out of range", "28 tokens (0-27, or -1 to -28)")


@pytest.mark.parametrize(
    "command",
    [["weights", SEED], ["explain", SEED, "--layer", "0", "--head", "0"], ["trace", SEED], ["flow", SEED], ["rope"]],
)
def test_pos_takes_the_one_grammar_and_one_position_here(cli: Any, model_dir: Path, command: list[str]) -> None:
    m = ("--model", str(model_dir))
    for given, shown in ((["0,3"], "0,3"), (["all"], "all"), (["1", "--pos", "2"], "1,2")):
        one_error(cli(*command, "--pos", *given, *m), ExitCode.USAGE, f"--pos '{shown}': give one position here")
    one_error(cli(*command, "--pos", "x", *m), ExitCode.USAGE, "--pos 'x' is not a number")


def test_query_option_conflicts(cli: Any, model_dir: Path) -> None:
    m = ("--model", str(model_dir))
    one_error(cli("weights", SEED, "-q", "그", "--pos", "1", *m), ExitCode.USAGE, "give --query or --pos, not both")
    one_error(cli("weights", SEED, "--occurrence", "1", *m), ExitCode.USAGE, "--occurrence needs --query")
    one_error(cli("weights", SEED, "-q", "  ", *m), ExitCode.USAGE, "--query is empty")


@pytest.mark.parametrize(
    "option,value,fragments",
    [
        ("--layer", "3", ["--layer 3 is out of range", "3 layers (0-2, or -1 to -3)"]),
        ("--layer", "-4", ["--layer -4 is out of range", "(0-2, or -1 to -3)"]),
        ("--head", "4", ["--head 4 is out of range", "4 heads (0-3, or -1 to -4)"]),
        ("--layer", "0-7", ["--layer 7 is out of range"]),
        ("--layer", "3-", ["'3-' is not a range; write it as A-B"]),
        ("--layer", "a", ["--layer 'a' is not a number", "such as 0,3,20-23, or 'all'"]),
        ("--head", "2-1", ["'2-1' runs backwards"]),
        ("--head", "0,,1", ["has an empty item"]),
        ("--head", "1.5", ["--head '1.5' is not a number"]),
    ],
)
def test_layer_and_head_specs(cli: Any, model_dir: Path, option: str, value: str, fragments: list[str]) -> None:
    res = cli("weights", SEED, f"{option}={value}", "--model", str(model_dir))
    one_error(res, ExitCode.USAGE, *fragments)


def test_prompt_longer_than_max_position_embeddings(cli: Any, model_dir: Path) -> None:
    res = cli("weights", SEED * 10, "--model", str(model_dir))  # 280 tokens; the tiny model has 128
    one_error(res, ExitCode.USAGE, "the prompt has 280 tokens", "max_position_embeddings (128)")


@pytest.fixture(scope="session")
def bert_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from transformers import BertConfig, BertModel

    path = tmp_path_factory.mktemp("tiny-bert")
    tok = tiny.train_tokenizer()
    config = BertConfig(
        vocab_size=len(tok), hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32
    )
    BertModel(config).save_pretrained(path)
    tok.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def bloom_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from transformers import BloomConfig, BloomForCausalLM

    path = tmp_path_factory.mktemp("tiny-bloom")
    tok = tiny.train_tokenizer()
    config = BloomConfig(vocab_size=len(tok), hidden_size=16, n_layer=1, n_head=2, bos_token_id=0, eos_token_id=0)
    BloomForCausalLM(config).save_pretrained(path)
    tok.save_pretrained(path)
    return path


def test_info_refuses_an_uncapturable_model(cli: Any, bert_dir: Path) -> None:
    res = cli("info", "--model", str(bert_dir))
    one_error(res, ExitCode.MODEL, "a 'bert' model (BertModel) is not a causal language model")


def test_not_a_causal_lm(cli: Any, bert_dir: Path) -> None:
    res = cli("weights", SEED, "--model", str(bert_dir))
    one_error(res, ExitCode.MODEL, "a 'bert' model (BertModel) is not a causal language model")


@pytest.mark.parametrize("command", ["weights", "info"])
def test_attention_that_cannot_be_captured(cli: Any, bloom_dir: Path, command: str) -> None:
    # bloom computes its attention itself, never through transformers' attention interface
    res = cli(command, *([SEED] if command == "weights" else []), "--model", str(bloom_dir))
    one_error(
        res, ExitCode.MODEL, "a 'bloom' model does not run its attention through transformers' attention interface"
    )


@pytest.mark.parametrize("spec", ["./no-such-folder", "no-such-model.gguf", "/nowhere/at/all", "a/b/c"])
@pytest.mark.parametrize("command", ["weights", "tokens"])
def test_missing_folder_or_file(cli: Any, command: str, spec: str) -> None:
    one_error(cli(command, SEED, "--model", spec), ExitCode.MODEL, f"{spec}: no such file or folder")


def test_folder_without_config(cli: Any, tmp_path: Path) -> None:
    one_error(cli("weights", SEED, "--model", str(tmp_path)), ExitCode.MODEL, "folder has no config.json")


def test_file_that_is_not_gguf(cli: Any, tmp_path: Path) -> None:
    f = tmp_path / "model.bin"
    f.write_bytes(b"\x00" * 16)
    one_error(cli("weights", SEED, "--model", str(f)), ExitCode.MODEL, "a model file must be a .gguf file")


def _hub_fails(monkeypatch: pytest.MonkeyPatch, error: str) -> None:
    """Make every hub download fail the way the hub answers an unknown repo id or revision."""
    import transformers.utils.hub as hf_hub
    from huggingface_hub import errors as hub_errors

    cls = getattr(hub_errors, error)

    def fail(*_a: Any, **_k: Any) -> Any:
        exc = cls.__new__(cls)
        Exception.__init__(exc, "404 Client Error")
        raise exc

    for name in ("hf_hub_download", "snapshot_download"):
        if hasattr(hf_hub, name):
            monkeypatch.setattr(hf_hub, name, fail)
    from attnscope.model import hub

    monkeypatch.setattr(hub, "hub_local_only", lambda: False)  # a hub that answers (with that error)


@pytest.mark.parametrize("command", ["weights", "tokens"])
def test_unknown_hub_id(cli: Any, monkeypatch: pytest.MonkeyPatch, command: str) -> None:
    _hub_fails(monkeypatch, "RepositoryNotFoundError")
    res = cli(command, SEED, "--model", "nobody-at-all/no-such-model-xyz")
    one_error(res, ExitCode.MODEL, "no model 'nobody-at-all/no-such-model-xyz' on the Hugging Face hub")


def test_unknown_hub_revision(cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _hub_fails(monkeypatch, "RevisionNotFoundError")
    res = cli("weights", SEED, "--model", "Qwen/Qwen2.5-0.5B-Instruct", "--revision", "no-such-branch")
    one_error(res, ExitCode.MODEL, "model 'Qwen/Qwen2.5-0.5B-Instruct': that --revision does not exist on the hub")


def run_cli(*args: str, stdin: bytes | None = None, **env: str) -> subprocess.CompletedProcess[bytes]:
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    full_env.pop("ATTNSCOPE_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "attnscope", *args],
        input=stdin if stdin is not None else b"",
        capture_output=True,
        env=full_env,
        cwd=ROOT,
        timeout=300,
    )


def _refused_endpoint() -> str:
    """An http endpoint on this machine where nothing listens: connecting fails at once."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_cached_hub_model_loads_when_the_hub_cannot_be_reached(model_dir: Path, tmp_path: Path) -> None:
    # A hub id in huggingface_hub's cache layout; the endpoint refuses connections.
    import shutil

    repo = tmp_path / "hub" / "models--attnscope-test--tiny"
    commit = "0" * 40
    shutil.copytree(model_dir, repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    env = {"HF_HUB_CACHE": str(tmp_path / "hub"), "HF_ENDPOINT": _refused_endpoint()}
    for name in ("HF_HUB_OFFLINE", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        env[name] = ""
    res = run_cli("weights", SEED, "--model", "attnscope-test/tiny", "--layer", "0", "--json", **env)
    assert res.returncode == 0, res.stderr.decode()
    assert json.loads(res.stdout)["model"]["id"] == "attnscope-test/tiny"
    res = run_cli("info", "--model", "attnscope-test/tiny", "--json", **env)
    assert res.returncode == 0, res.stderr.decode()
    assert json.loads(res.stdout)["num_hidden_layers"] == 3
    res = run_cli("tokens", SEED, "--model", "attnscope-test/absent", **env)
    assert res.returncode == ExitCode.MODEL and res.stdout == b""
    assert res.stderr.decode().splitlines() == [
        "attnscope: error: the Hugging Face hub cannot be reached and 'attnscope-test/absent' is not in the local "
        "cache; use a model on disk instead: --model PATH, where PATH is an HF model folder (with config.json) "
        "or a .gguf file, or export ATTNSCOPE_MODEL=PATH once for every command"
    ]


def test_invalid_utf8_stdin_in_a_real_process(model_dir: Path) -> None:
    res = run_cli("tokens", "-", "--model", str(model_dir), stdin=b"abc\xc3(")
    assert res.returncode == ExitCode.USAGE
    assert res.stdout == b""
    assert res.stderr.decode().splitlines() == ["attnscope: error: stdin is not valid UTF-8 (byte 3)"]


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_cuda_without_a_gpu(cli: Any, model_dir: Path) -> None:
    res = cli("weights", SEED, "--device", "cuda", "--model", str(model_dir))
    one_error(res, ExitCode.RESOURCE, "--device cuda: no CUDA GPU is available here; use --device cpu")


@pytest.mark.parametrize(
    "option,value,fragment",
    [
        ("--device", "tpu", "unknown --device 'tpu'; use one of auto, cpu, cuda, mps"),
        ("--dtype", "int8", "unknown --dtype 'int8'; use one of auto, float32, bfloat16, float16"),
    ],
)
def test_unknown_device_or_dtype(cli: Any, model_dir: Path, option: str, value: str, fragment: str) -> None:
    one_error(cli("weights", SEED, option, value, "--model", str(model_dir)), ExitCode.USAGE, fragment)


def test_model_errors_name_arguments_in_python_and_flags_on_the_cli(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Python caller reads the argument's name, the CLI the flag: the same error, two wordings."""
    from attnscope.model import hub, pick_device, pick_dtype

    with pytest.raises(AttnscopeError) as err:
        pick_device("tpu")
    assert err.value.message == "unknown device 'tpu'; use one of auto, cpu, cuda, mps"
    assert cli_text(err.value) == "unknown --device 'tpu'; use one of auto, cpu, cuda, mps"
    with pytest.raises(AttnscopeError) as err:
        pick_dtype("int8", "cpu")
    assert err.value.message == "unknown dtype 'int8'; use one of auto, float32, bfloat16, float16"
    assert cli_text(err.value) == "unknown --dtype 'int8'; use one of auto, float32, bfloat16, float16"
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    offline = hub.offline_error("org/name")
    assert "--" not in offline.message and "ATTNSCOPE_MODEL" in offline.message
    assert "--model PATH" in cli_text(offline)


def test_float16_on_cpu_warns_and_keeps_rows_fp32(cli: Any, model_dir: Path) -> None:
    res = cli(
        "weights", SEED, "--dtype", "float16", "--device", "cpu", "--layer", "2", "--model", str(model_dir), "--json"
    )
    assert res.exit_code == 0, res.stderr
    assert (
        "warning: float16 on CPU is slow and loses precision; attention rows are still computed in fp32" in res.stderr
    )
    doc = json.loads(res.stdout)
    assert doc["model"]["dtype"] == "float16"
    sums = torch.tensor(doc["weights"], dtype=torch.float64).sum(-1)  # (L, H)
    assert torch.allclose(sums, torch.ones_like(sums), atol=1e-6)  # an fp16 softmax would be off by ~1e-3


def test_other_bad_options(cli: Any, model_dir: Path) -> None:
    m = ("--model", str(model_dir))
    one_error(cli("weights", SEED, "--by", "letter", *m), ExitCode.USAGE, "--by 'letter': use token, word or segment")
    one_error(cli("weights", SEED, "--agg", "sum", *m), ExitCode.USAGE, "--agg 'sum': use mean or max")
    one_error(cli("weights", SEED, "--system", "hi", *m), ExitCode.USAGE, "--system needs --chat")
    one_error(
        cli("weights", SEED, "--pos", "0", "--no-sink", *m), ExitCode.USAGE, "the query is position 0, so nothing"
    )
    one_error(
        cli("weights", SEED, "--layer", "0", "--svg", "/no/such/dir/x.svg", *m),
        ExitCode.USAGE,
        "cannot write /no/such/dir/x.svg",
    )


def test_typer_usage_errors_exit_2_with_nothing_on_stdout(cli: Any, model_dir: Path) -> None:
    # Click formats these itself (a usage line, then the error); still exit 2 and an empty stdout.
    for args in (
        ("weights", SEED, "--width", "10"),
        ("weights", SEED, "--occurrence", "x"),
        ("weights", SEED, "--bogus"),
    ):
        res = cli(*args, "--model", str(model_dir))
        assert res.exit_code == 2 and res.stdout == ""
        assert "Error" in res.stderr and "Traceback" not in res.stderr


@pytest.fixture(scope="session")
def nan_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model with head 1's query weights in layer 1 set to NaN."""
    from transformers import AutoModelForCausalLM

    path = tiny.save_model_dir(tmp_path_factory.mktemp("tiny-nan"))
    model = AutoModelForCausalLM.from_pretrained(path)
    head_dim = model.config.hidden_size // model.config.num_attention_heads
    with torch.no_grad():
        model.model.layers[1].self_attn.q_proj.weight[head_dim : 2 * head_dim] = float("nan")  # (H*D, hidden)
    model.save_pretrained(path)
    return path


@pytest.mark.parametrize("as_json", [True, False])
def test_nan_in_rows_names_layer_and_head_and_prints_no_chart(cli: Any, nan_model_dir: Path, as_json: bool) -> None:
    res = cli("weights", SEED, "--model", str(nan_model_dir), *(["--json"] if as_json else []))
    one_error(res, ExitCode.NUMERIC, "NaN or inf in the attention weights at layer 1, head 1")
    ok = cli("weights", SEED, "--model", str(nan_model_dir), "--layer", "0", "--json")  # layer 0 is untouched
    assert ok.exit_code == 0


def test_memory_guard_refuses_with_the_estimate(cli: Any, model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTNSCOPE_MEMORY_LIMIT", "1K")
    res = cli("weights", SEED, "--model", str(model_dir), "--json")
    # 3 layers x 4 heads x 1 query x 28 keys x 4 bytes kept, plus three one-layer buffers: 2688 bytes.
    one_error(
        res,
        ExitCode.RESOURCE,
        "attention rows for 3 layer(s) x 4 heads x 1 queries x 28 keys would need about 2.62 KiB",
        "only 1 KiB can be used; try a shorter prompt, or fewer layers with --layer",
    )
    monkeypatch.setenv("ATTNSCOPE_MEMORY_LIMIT", "3K")
    assert cli("weights", SEED, "--model", str(model_dir), "--json").exit_code == 0


def test_bad_memory_limit_value(cli: Any, model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTNSCOPE_MEMORY_LIMIT", "lots")
    one_error(cli("weights", SEED, "--model", str(model_dir)), ExitCode.USAGE, "ATTNSCOPE_MEMORY_LIMIT='lots'")


# (args after the command, with {m} for the tiny model folder; exit code; a fragment of the error line)
OTHER_COMMANDS = [
    (["mask", "", "--model", "{m}"], ExitCode.USAGE, "the prompt is empty"),
    (["mask", SEED, "-", "-", "--model", "{m}"], ExitCode.USAGE, "only one prompt can be - (stdin)"),
    (["mask", "--size", "0"], ExitCode.USAGE, "--size 0"),
    (["mask", "--pad", "9", "--size", "4"], ExitCode.USAGE, "--pad 9 must be smaller than --size 4"),
    (["mask", "--side", "up"], ExitCode.USAGE, "--side 'up': use left or right"),
    (["mask", SEED, "--padding-side", "up", "--model", "{m}"], ExitCode.USAGE, "--padding-side 'up'"),
    (["mask", SEED * 10, "--model", "{m}"], ExitCode.USAGE, "max_position_embeddings (128)"),
    (["mask", SEED, "hi", "--model", "./no-such-folder"], ExitCode.MODEL, "no such file or folder"),
    (
        ["heads", SEED, "-q", "바나나", "-k", "사과를", "--model", "{m}"],
        ExitCode.USAGE,
        "'바나나' is not in the prompt",
    ),
    (
        ["heads", SEED, "-q", "그것을", "-k", "바나나", "--model", "{m}"],
        ExitCode.USAGE,
        "--key '바나나' is not in the prompt",
    ),
    (["heads", SEED, "-q", "사과를", "-k", "그것을", "--model", "{m}"], ExitCode.USAGE, "ends after the query"),
    (["heads", SEED, "-q", "그것을", "-k", "사과를", "--top", "0", "--model", "{m}"], ExitCode.USAGE, "--top 0"),
    (
        ["heads", SEED, "-q", "그것을", "-k", "사과를", "--occurrence", "3", "--model", "{m}"],
        ExitCode.USAGE,
        "out of range",
    ),
    (["heads", "", "-q", "그것을", "-k", "사과를", "--model", "{m}"], ExitCode.USAGE, "the prompt is empty"),
    (["matrix", SEED, "--layer", "9", "--head", "0", "--model", "{m}"], ExitCode.USAGE, "--layer 9 is out of range"),
    (["matrix", SEED, "--layer", "0", "--head", "a", "--model", "{m}"], ExitCode.USAGE, "--head 'a' is not a number"),
    (
        ["matrix", SEED, "--layer", "all", "--head", "0", "--model", "{m}"],
        ExitCode.USAGE,
        "--layer 'all': give one layer here",
    ),
    (["matrix", SEED, "--layer", "0", "--head", "0", "--window", "5:2", "--model", "{m}"], ExitCode.USAGE, "--window"),
    (
        ["matrix", SEED, "--layer", "0", "--head", "0", "--window", "x", "--model", "{m}"],
        ExitCode.USAGE,
        "write it as A:B",
    ),
    (["matrix", SEED * 10, "--layer", "0", "--head", "0", "--model", "{m}"], ExitCode.USAGE, "max_position_embeddings"),
    (["info", "--model", "./no-such-folder"], ExitCode.MODEL, "no such file or folder"),
    (["trace", SEED, "--pos", "99", "--model", "{m}"], ExitCode.USAGE, "--pos 99 is out of range"),
    (["trace", SEED, "--compare-pos", "-1", "--model", "{m}"], ExitCode.USAGE, "--compare-pos -1"),
    (["trace", SEED, "--lang", "fr", "--model", "{m}"], ExitCode.USAGE, "--lang 'fr': use en or ko"),
    (["trace", "", "--model", "{m}"], ExitCode.USAGE, "the prompt is empty"),
    (["explain", SEED, "--layer", "0", "--head", "9", "--model", "{m}"], ExitCode.USAGE, "--head 9 is out of range"),
    (
        ["explain", SEED, "--layer", "0", "--head", "0,1", "--model", "{m}"],
        ExitCode.USAGE,
        "--head '0,1': give one head here",
    ),
    (
        ["explain", SEED, "--layer", "0", "--head", "0", "-q", "바나나", "--model", "{m}"],
        ExitCode.USAGE,
        "not in the prompt",
    ),
    (["explain", SEED, "--layer", "0", "--head", "0", "--pos", "99", "--model", "{m}"], ExitCode.USAGE, "--pos 99"),
    (["rope", "--layer", "9", "--model", "{m}"], ExitCode.USAGE, "--layer 9 is out of range"),
    (["rope", "--deltas", "x", "--model", "{m}"], ExitCode.USAGE, "--deltas 'x'"),
    (["rope", "--pos", "-1", "--model", "{m}"], ExitCode.USAGE, "--pos -1"),
    (["rope", "--deltas", "100000", "--model", "{m}"], ExitCode.USAGE, "passes max_position_embeddings (128)"),
    (["rope", "--prompt", "", "--model", "{m}"], ExitCode.USAGE, "--prompt is empty"),
    (["reuse", "", "x", "--model", "{m}"], ExitCode.USAGE, "the prompt is empty"),
    (["reuse", SEED, "", "--model", "{m}"], ExitCode.USAGE, "the suffix is empty"),
    (["reuse", SEED, "x", "--repeat", "50", "--model", "{m}"], ExitCode.USAGE, "max_position_embeddings (128)"),
    (["tui", "", "--model", "{m}"], ExitCode.USAGE, "the prompt is empty"),
    (["tui", SEED, "-q", "바나나", "--model", "{m}"], ExitCode.USAGE, "'바나나' is not in the prompt"),
    (["tui", SEED, "--key", "먹었다", "-q", "그것을", "--model", "{m}"], ExitCode.USAGE, "--key"),
    (["tui", SEED, "--max-new-tokens", "0", "--model", "{m}"], ExitCode.USAGE, "--max-new-tokens"),
    (["tui", "--model", "{m}"], ExitCode.USAGE, "give a PROMPT, --messages FILE or --resume FILE"),
    (["tui", SEED, "--resume", "x.npz"], ExitCode.USAGE, "--resume reopens a saved session"),
    (["tui", "--resume", "./no-such-session.npz"], ExitCode.INPUT_FILE, "cannot read ./no-such-session.npz"),
    (["tui", SEED, "--model", "./no-such-folder"], ExitCode.MODEL, "no such file or folder"),
    (["circuit", "--pairs", "/no/such.jsonl", "--model", "{m}"], ExitCode.INPUT_FILE, "--pairs /no/such.jsonl"),
    (
        ["circuit", "--pairs", str(CIRCUIT / "no-usable-pair.jsonl"), "--model", "{m}"],
        ExitCode.INPUT_FILE,
        "no usable pair (2 lines skipped; line 1: clean and corrupt are the same text)",
    ),
    (["circuit", "--pairs", CIRCUIT_PAIRS, "--method", "eapx", "--model", "{m}"], ExitCode.USAGE, "--method 'eapx'"),
    (
        ["circuit", "--pairs", CIRCUIT_PAIRS, "--compare", ",", "--model", "{m}"],
        ExitCode.USAGE,
        "--method: name at least",
    ),
    (["circuit", "--pairs", CIRCUIT_PAIRS, "--steps", "0", "--model", "{m}"], ExitCode.USAGE, "--steps 0"),
    (["circuit", "--pairs", CIRCUIT_PAIRS, "--graph", "mib", "--model", "{m}"], ExitCode.MODEL, "the mib graph"),
    (
        ["circuit", "--pairs", CIRCUIT_PAIRS, "--evaluate", str(CIRCUIT / "empty.json"), "--model", "{m}"],
        ExitCode.INPUT_FILE,
        "the circuit has no edge",
    ),
    (
        ["circuit", "--pairs", CIRCUIT_PAIRS, "--evaluate", str(CIRCUIT / "unknown-edge.json"), "--model", "{m}"],
        ExitCode.INPUT_FILE,
        "the edge a9.h0 -> logits <logits> is not in this model's gqa graph",
    ),
    (
        ["circuit", "--pairs", CIRCUIT_PAIRS, "--evaluate", str(CIRCUIT / "edge-no-input.json"), "--model", "{m}"],
        ExitCode.INPUT_FILE,
        "edge 0 (from 0) is not",
    ),
    (
        ["circuit", "--pairs", CIRCUIT_PAIRS, "--evaluate", "/no/such.json", "--model", "{m}"],
        ExitCode.INPUT_FILE,
        "--evaluate",
    ),
    (["pairs", "nope"], ExitCode.USAGE, "TASK 'nope': use ioi, ko-fruit"),
    (["pairs", "ioi", "--n", "0"], ExitCode.USAGE, "--n 0"),
]


@pytest.mark.parametrize(
    "args,code,fragment", OTHER_COMMANDS, ids=[f"{a[0]}-{i}" for i, (a, _, _) in enumerate(OTHER_COMMANDS)]
)
def test_other_commands(cli: Any, model_dir: Path, args: list[str], code: int, fragment: str) -> None:
    res = cli(*[a.replace("{m}", str(model_dir)) for a in args])
    one_error(res, code, fragment)


def test_corrupt_gguf_for_info(cli: Any, tmp_path: Path) -> None:
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF" + b"\x00\x17" * 100)
    one_error(cli("info", "--model", str(bad)), ExitCode.MODEL, str(bad), "GGUF")


@pytest.fixture(scope="session")
def weights_json(model_dir: Path) -> str:
    from typer.testing import CliRunner

    from attnscope.cli import app

    res = CliRunner().invoke(app, ["weights", SEED, "--model", str(model_dir), "--layer", "0", "--json"])
    assert res.exit_code == 0
    return str(res.stdout)


def _edited(text: str, **changes: Any) -> str:
    doc = json.loads(text)
    for key, value in changes.items():
        if value is None:
            del doc[key]
        else:
            doc[key] = value
    return json.dumps(doc, ensure_ascii=False)


@pytest.mark.parametrize(
    "name,make,fragment",
    [
        ("truncated", lambda good: good[:300], "the file looks truncated"),
        ("malformed", lambda good: "not json at all", "not valid JSON at line 1 column 1"),
        ("wrong-schema", lambda good: _edited(good, schema="attnscope.nope/1"), "unknown schema 'attnscope.nope/1'"),
        ("no-schema", lambda good: "[1, 2]", "not an attnscope result: no 'schema' field"),
        ("missing-field", lambda good: _edited(good, query=None), "missing field 'query'"),
        ("wrong-type", lambda good: _edited(good, weights="x"), "attnscope.weights/3.weights: expected a list"),
        ("empty", lambda good: "", "empty file"),
    ],
)
def test_render_bad_files(cli: Any, tmp_path: Path, weights_json: str, name: str, make: Any, fragment: str) -> None:
    f = tmp_path / f"{name}.json"
    f.write_text(make(weights_json), encoding="utf-8")
    one_error(cli("render", str(f)), ExitCode.INPUT_FILE, fragment)
    assert cli("render", "-", input=make(weights_json)).exit_code == ExitCode.INPUT_FILE


def test_render_missing_file_and_binary(cli: Any, tmp_path: Path) -> None:
    one_error(cli("render", str(tmp_path / "nope.json")), ExitCode.INPUT_FILE, "no such file")
    one_error(cli("render", str(tmp_path)), ExitCode.INPUT_FILE, "is a folder")
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe{")
    one_error(cli("render", str(tmp_path / "bin.json")), ExitCode.INPUT_FILE, "not UTF-8")


def test_render_good_file_round_trips(cli: Any, tmp_path: Path, weights_json: str) -> None:
    f = tmp_path / "w.json"
    f.write_text(weights_json, encoding="utf-8")
    assert json.loads(cli("render", str(f), "--json").stdout) == json.loads(weights_json)


@pytest.mark.parametrize(
    "lines,code,fragment",
    [
        (
            ['{"prompt": "민수는 사과를", "query": "바나나"}'],
            ExitCode.USAGE,
            "line 1: --query '바나나' is not in the prompt",
        ),
        (['{"prompt": 3}'], ExitCode.INPUT_FILE, "line 1: 'prompt' is missing or not a string"),
        (["{garbage"], ExitCode.INPUT_FILE, "line 1: not valid JSON"),
        (["", "  "], ExitCode.INPUT_FILE, "no prompts in it"),
    ],
)
def test_batch_input_bad_line(
    cli: Any, model_dir: Path, tmp_path: Path, lines: list[str], code: int, fragment: str
) -> None:
    f = tmp_path / "in.jsonl"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    res = cli("weights", "--input", str(f), "--model", str(model_dir), "--layer", "0", "--json")
    assert res.exit_code == code and res.stdout == ""
    errors = [line for line in res.stderr.splitlines() if line.startswith("attnscope: error: ")]
    assert len(errors) == 1 and fragment in errors[0], res.stderr
    assert "Traceback" not in res.stderr


def test_batch_input_invalid_utf8_and_missing_file(cli: Any, model_dir: Path, tmp_path: Path) -> None:
    f = tmp_path / "in.txt"
    f.write_bytes(b"ab\xff\n")
    res = cli("weights", "--input", str(f), "--model", str(model_dir))
    assert res.exit_code == ExitCode.INPUT_FILE and res.stdout == ""
    assert "line 1: not valid UTF-8" in res.stderr.splitlines()[-1]
    one_error(
        cli("weights", "--input", str(tmp_path / "nope.txt"), "--model", str(model_dir)),
        ExitCode.INPUT_FILE,
        "No such file or directory",
    )
    one_error(
        cli("weights", SEED, "--input", str(f), "--model", str(model_dir)),
        ExitCode.USAGE,
        "give a PROMPT or --input FILE, not both",
    )


NAN_RUNS = [
    ["mask", SEED, "hello"],
    ["heads", SEED, "-q", "그것을", "-k", "사과를"],
    ["explain", SEED, "--layer", "1", "--head", "1"],
    ["rope", "--layer", "1", "--head", "1"],
    ["reuse", SEED, " 그리고"],
    ["matrix", SEED, "--layer", "1", "--head", "1"],
    ["trace", SEED],
]


@pytest.mark.parametrize("args", NAN_RUNS)
def test_nan_stops_every_command(cli: Any, nan_model_dir: Path, args: list[str]) -> None:
    res = cli(*args, "--model", str(nan_model_dir), "--json")
    one_error(res, ExitCode.NUMERIC, "NaN or inf in the attention weights at layer 1, head 1")


def test_chat_without_a_chat_template(cli: Any, model_dir: Path, tmp_path: Path) -> None:
    import shutil

    tok = tiny.train_tokenizer()
    tok.chat_template = None
    tok.save_pretrained(tmp_path)
    (tmp_path / "chat_template.jinja").unlink(missing_ok=True)
    shutil.copy(model_dir / "config.json", tmp_path / "config.json")
    one_error(
        cli("tokens", SEED, "--chat", "--model", str(tmp_path)),
        ExitCode.USAGE,
        "--chat: this tokenizer has no chat template",
    )


def test_truncated_weights_in_a_folder(cli: Any, model_dir: Path, tmp_path: Path) -> None:
    import shutil

    folder = tmp_path / "model"
    shutil.copytree(model_dir, folder)
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:50_000])
    one_error(cli("weights", SEED, "--model", str(folder)), ExitCode.MODEL, "cannot load the model (SafetensorError:")


def _copy_model(model_dir: Path, to: Path) -> Path:
    import shutil

    shutil.copytree(model_dir, to)
    return to


@pytest.mark.parametrize("command", ["weights", "tokens"])
def test_folder_without_tokenizer_files(cli: Any, model_dir: Path, tmp_path: Path, command: str) -> None:
    folder = _copy_model(model_dir, tmp_path / "model")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (folder / name).unlink()
    one_error(cli(command, SEED, "--model", str(folder)), ExitCode.MODEL, "no tokenizer files (tokenizer.json")


def test_config_that_does_not_fit_the_weights(cli: Any, model_dir: Path, tmp_path: Path) -> None:
    folder = _copy_model(model_dir, tmp_path / "model")
    config = json.loads((folder / "config.json").read_text())
    config["num_key_value_heads"] = 4  # the saved k_proj/v_proj are for 2 KV heads
    (folder / "config.json").write_text(json.dumps(config))
    one_error(
        cli("weights", SEED, "--model", str(folder)),
        ExitCode.MODEL,
        "cannot load the model (its weights do not have the shapes its config.json describes)",
    )


def test_memory_guard_for_matrix(cli: Any, model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTNSCOPE_MEMORY_LIMIT", "1K")
    res = cli("matrix", SEED, "--layer", "0", "--head", "0", "--model", str(model_dir), "--json")
    one_error(res, ExitCode.RESOURCE, "matrix: 28 x 28", "use --window A:B")


@pytest.mark.parametrize("spec", ["3-", "a", "5-2", "24", "-25", "-", "1-2-3", ","])
def test_parse_indices_rejects(spec: str) -> None:
    with pytest.raises(AttnscopeError) as err:
        resolve(parse_indices(spec, "layer"), 24, "layer")
    assert err.value.code == ExitCode.USAGE
    assert cli_text(err.value).startswith("--layer ")


def test_parse_indices_accepts() -> None:
    assert resolve(parse_indices("0,3,20-23", "layer"), 24, "layer") == [0, 3, 20, 21, 22, 23]
    assert resolve(parse_indices("-3--1", "layer"), 24, "layer") == [21, 22, 23]
    assert resolve(parse_indices(" all ", "head"), 4, "head") == [0, 1, 2, 3]


def test_hub_unreachable_offline_in_a_real_process() -> None:
    res = run_cli("weights", SEED, "--model", "nobody-at-all/no-such-model-xyz", HF_HUB_OFFLINE="1")
    err = res.stderr.decode()
    assert res.returncode == ExitCode.MODEL, err
    assert res.stdout == b""
    assert "Traceback" not in err
    lines = err.splitlines()
    assert lines[-1].startswith("attnscope: error: HF_HUB_OFFLINE is set and 'nobody-at-all/no-such-model-xyz'")
    assert "--model PATH, where PATH is an HF model folder" in lines[-1] and "ATTNSCOPE_MODEL" in lines[-1]
    assert "qwen2.5" not in lines[-1]  # no file name the user may not have
    assert sum("error" in line for line in lines) == 1


def _refused_endpoint() -> str:
    """An http endpoint on this machine where nothing listens: connecting fails at once."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_hub_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    from attnscope.model import hub

    for name in ("HF_HUB_OFFLINE", *hub.PROXY_VARS):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(constants, "ENDPOINT", _refused_endpoint())
    hub.hub_local_only.cache_clear()
    try:
        assert hub.hub_local_only() is True  # nothing listens: cache only
        hub.hub_local_only.cache_clear()
        monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
        assert hub.hub_local_only() is False  # behind a proxy the probe cannot tell
        hub.hub_local_only.cache_clear()
        monkeypatch.delenv("HTTPS_PROXY")
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
        assert hub.hub_local_only() is True
    finally:
        hub.hub_local_only.cache_clear()


def test_unreachable_hub_reads_only_the_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    from attnscope.model import hub, load_tokenizer

    seen: dict[str, Any] = {}

    def fake(name: str, **kwargs: Any) -> Any:
        seen.update(kwargs)
        raise OSError("We couldn't connect to the hub")

    monkeypatch.setattr(hub, "hub_local_only", lambda: True)
    monkeypatch.setattr(hub, "cached_config", lambda *_: None)
    with pytest.raises(AttnscopeError, match="the Hugging Face hub cannot be reached and 'org/name'"):
        load_tokenizer("org/name")  # not cached: refused before transformers is asked
    config = tmp_path / "config.json"
    config.write_text('{"num_hidden_layers": 2}')
    monkeypatch.setattr(hub, "cached_config", lambda *_: config)  # cached: read from the cache only
    monkeypatch.setattr(AutoTokenizer, "from_pretrained", fake)
    with pytest.raises(AttnscopeError, match="the Hugging Face hub cannot be reached and 'org/name'"):
        load_tokenizer("org/name")
    assert seen["local_files_only"] is True


def test_check_finite_names_the_model_head_when_heads_were_selected() -> None:
    from attnscope.capture import engine

    rows = {2: torch.zeros(1, 2, 1, 3), 4: torch.zeros(1, 2, 1, 3)}  # (B, h, P, T) for heads [3, 9]
    rows[4][0, 1, 0, 2] = float("inf")
    with pytest.raises(AttnscopeError, match="layer 4, head 9;"):
        engine.check_finite(rows, heads=[3, 9])
    with pytest.raises(AttnscopeError, match="layer 4, head 1;"):
        engine.check_finite(rows)
