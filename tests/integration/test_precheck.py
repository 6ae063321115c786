"""Checks before loading: typos are answered before torch is imported.

The subprocess tests run ``python -m attnscope`` with an import hook that makes ``import
torch`` fail: if any check moved back behind the model load, the run would end in an
internal ImportError instead of the expected one-line error. The in-process tests compare
the early words with the words the core says after loading (the reference).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from attnscope.cli.flags import cli_text
from attnscope.core.prompt.precheck import check_query_text
from attnscope.core.prompt.tokens import encode, find_query
from attnscope.errors import AttnscopeError, ExitCode
from attnscope.model import model_shape

from support import SEED
from support.gguf import write_tiny_gguf
from support.notorch import MESSAGE, one_line, run_cli_without_torch


@pytest.fixture(scope="module")
def tiny_gguf(model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_gguf(model_dir, tmp_path_factory.mktemp("gguf") / "tiny-qwen2-f32.gguf")


def test_the_hook_does_block_torch(model_dir: Path) -> None:
    # A good run needs torch: under the hook it must fail, or the tests below prove nothing.
    res = run_cli_without_torch("weights", SEED, "--model", str(model_dir))
    assert res.returncode != 0 and MESSAGE in res.stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--layer", "99"], "--layer 99 is out of range: the model has 3 layers (0-2, or -1 to -3)"),
        (["--head", "4"], "--head 4 is out of range: the model has 4 heads (0-3, or -1 to -4)"),
        (["--head", "-5"], "--head -5 is out of range: the model has 4 heads (0-3, or -1 to -4)"),
        (
            ["-q", "바나나"],
            "--query '바나나' is not in the prompt; its words are: 민수는, 사과를, 샀다., 그는, 그것을, 먹었다.",
        ),
        (["-q", "그", "--occurrence", "3"], "--occurrence 3 is out of range: '그' occurs 2 time(s)"),
    ],
)
def test_weights_typos_are_reported_before_torch(model_dir: Path, args: list[str], expected: str) -> None:
    line = one_line(run_cli_without_torch("weights", SEED, "--model", str(model_dir), *args), ExitCode.USAGE)
    assert line == f"attnscope: error: {expected}"


def test_layer_range_from_a_gguf_header_before_torch(tiny_gguf: Path) -> None:
    line = one_line(run_cli_without_torch("weights", SEED, "--model", str(tiny_gguf), "--layer", "3"), ExitCode.USAGE)
    assert "the model has 3 layers" in line


def test_heads_key_and_matrix_head_before_torch(model_dir: Path) -> None:
    line = one_line(
        run_cli_without_torch("heads", SEED, "--model", str(model_dir), "-q", "그것을", "-k", "바나나"), ExitCode.USAGE
    )
    assert line.startswith("attnscope: error: --key '바나나' is not in the prompt")
    line = one_line(
        run_cli_without_torch("matrix", SEED, "--model", str(model_dir), "--layer", "0", "--head", "9"), ExitCode.USAGE
    )
    assert "--head 9 is out of range" in line


def test_empty_prompt_before_torch(model_dir: Path) -> None:
    line = one_line(run_cli_without_torch("weights", "", "--model", str(model_dir)), ExitCode.USAGE)
    assert line == "attnscope: error: the prompt is empty"


def test_query_error_matches_the_core(tokenizer: Any) -> None:
    enc = encode(tokenizer, SEED)
    for query, occurrence in (("바나나", None), ("그", 3), ("그", 0)):
        with pytest.raises(AttnscopeError) as core:
            find_query(enc, query, occurrence)
        with pytest.raises(AttnscopeError) as early:
            check_query_text([SEED], query, occurrence)
        assert cli_text(early.value) == cli_text(core.value)  # the same line on stderr


def test_chat_query_checked_after_the_tokenizer_alone(cli: Any, model_dir: Path) -> None:
    res = cli("weights", SEED, "--model", str(model_dir), "--chat", "-q", "바나나")
    assert res.exit_code == ExitCode.USAGE and res.stdout == ""
    assert res.stderr.splitlines()[-1].startswith("attnscope: error: --query '바나나' is not in the prompt")
    assert "attnscope: loading" not in res.stderr
    res = cli("weights", SEED, "--model", str(model_dir), "--chat", "-q", "assistant", "--json")
    assert res.exit_code == 0, res.stderr  # the template's own text is a valid query


def test_model_shape_of_folder_and_gguf(model_dir: Path, tiny_gguf: Path) -> None:
    for path in (model_dir, tiny_gguf):
        shape = model_shape(str(path))
        assert (shape.num_hidden_layers, shape.num_attention_heads) == (3, 4)


def test_generate_checks_everything_before_torch(model_dir: Path, tmp_path: Path) -> None:
    """generate: a bad --model path, decoding settings, --steps, a --messages file's shape and
    --layer/--head (read from the config) are all answered with torch unimportable."""
    line = one_line(run_cli_without_torch("generate", SEED, "--model", str(tmp_path / "no-such-model")), ExitCode.MODEL)
    assert "no-such-model" in line
    bad_messages = tmp_path / "messages.json"
    bad_messages.write_text('[{"role": "tool", "content": "hi"}]', encoding="utf-8")
    cases = [
        (["-n", "0"], ExitCode.USAGE, "--max-new-tokens must be at least 1 (got 0)"),
        (["--temperature", "0"], ExitCode.USAGE, "--temperature must be above 0"),
        (["--seed", "3"], ExitCode.USAGE, "--seed needs a temperature"),
        (["--steps", "2-x"], ExitCode.USAGE, "--steps '2-x'"),
        (["--messages", str(bad_messages)], ExitCode.INPUT_FILE, "unknown role 'tool'"),
        (["--layer", "9"], ExitCode.USAGE, "--layer 9 is out of range: the model has 3 layers"),
        (["--head", "0,7"], ExitCode.USAGE, "--head 7 is out of range: the model has 4 heads"),
    ]
    for args, code, fragment in cases:
        line = one_line(run_cli_without_torch("generate", SEED, "--model", str(model_dir), *args), code)
        assert fragment in line, (args, line)


CAUSAL_CLEAN = "민수는 사과를 샀다. 그는 그것을"
CAUSAL_CORRUPT = "지수는 사과를 샀다. 그는 그것을"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["ablate", SEED, "--target", " 그", "--foil", " 그"], "--foil ' 그' is the same as --target"),
        (["ablate", SEED, "--target", ".", "--key", "바나나"], "--key '바나나' is not in the prompt"),
        (["ablate", SEED], "give --target TOKEN or --target-id ID"),
        (["ablate", SEED, "--target", ".", "--mode", "max"], "--mode 'max'"),
        (["ablate", SEED, "--target", ".", "--layer", "9"], "--layer 9 is out of range"),
        (["ablate", SEED, "--target", ".", "--pos", "1-x"], "--pos 'x' is not a number"),
        (
            ["knockout", SEED, "--target", ".", "--key", "사과를", "--window", "4"],
            "--window 4 is larger than the model: it has 3 layers",
        ),
        (["knockout", SEED, "--target", ".", "--key", "바나나"], "--key '바나나' is not in the prompt"),
        (["knockout", SEED, "--target", ".", "--key", "사과를", "--window", "2", "--layers", "0"], "not both"),
        (["patch", "--clean", CAUSAL_CLEAN, "--corrupt", CAUSAL_CORRUPT, "--target", ".", "--site", "q"], "--site 'q'"),
        (
            ["patch", "--clean", CAUSAL_CLEAN, "--corrupt", CAUSAL_CORRUPT, "--target", ".", "--direction", "up"],
            "--direction 'up'",
        ),
    ],
)
def test_causal_commands_before_torch(model_dir: Path, args: list[str], fragment: str) -> None:
    assert fragment in one_line(run_cli_without_torch(*args, "-m", str(model_dir)), 2)
