"""Checks before loading: typos are answered before torch is imported.

The subprocess tests run ``python -m attnscope`` with an import hook that makes ``import
torch`` fail: if any check moved back behind the model load, the run would end in an
internal ImportError instead of the expected one-line error. The in-process tests compare
the early words with the words the core says after loading (the reference).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from attnscope.cli.flags import cli_text
from attnscope.core.prompt.precheck import check_query_text, check_selection
from attnscope.core.prompt.spec import Selection
from attnscope.errors import AttnscopeError, ExitCode

from support import SEED
from support.notorch import one_line, run_cli_without_torch


@pytest.mark.parametrize("command", ["weights", "heads", "matrix", "explain", "tokens", "info", "roles"])
def test_misspelt_model_path_is_reported_before_torch(tmp_path: Path, command: str) -> None:
    missing = tmp_path / "qwen2.5-0.5b-instruct-q4_k_m.ggu"
    extra = {
        "heads": ["-q", "그것을", "-k", "사과를"],
        "matrix": ["--layer", "0", "--head", "0"],
        "explain": ["--layer", "0", "--head", "0"],
    }.get(command, [])
    prompt = [] if command in ("info", "roles") else [SEED]
    line = one_line(run_cli_without_torch(command, *prompt, "--model", str(missing), *extra), ExitCode.MODEL)
    assert line == f"attnscope: error: {missing}: no such file or folder"


def test_folder_without_config_is_reported_before_torch(tmp_path: Path) -> None:
    line = one_line(run_cli_without_torch("weights", SEED, "--model", str(tmp_path)), ExitCode.MODEL)
    assert "folder has no config.json" in line


def test_offline_and_not_cached_before_torch(tmp_path: Path) -> None:
    res = run_cli_without_torch("weights", SEED, "--model", "nobody/absent", HF_HUB_OFFLINE="1", HF_HOME=str(tmp_path))
    line = one_line(res, ExitCode.MODEL)
    assert "ATTNSCOPE_MODEL" in line and "--model PATH" in line


def test_query_found_or_left_to_the_tokenizer() -> None:
    assert check_query_text([SEED], "그것을") is True
    assert check_query_text([SEED], None) is True
    assert check_query_text([SEED], "그것", chat=True) is True  # in the prompt: in the templated text too
    assert check_query_text([SEED], "assistant", chat=True) is False  # maybe in the template: undecided
    assert check_query_text([SEED], "친구", chat=True, system="너는 친구다") is True


def test_selection_against_counts() -> None:
    check_selection(Selection(layers=[0, 2], heads=[-1]), 3, 4)
    check_selection(Selection(layers=[99], heads=[99]), None, None)  # counts unknown (a hub id not cached)
    with pytest.raises(AttnscopeError, match="layer 3 is out of range") as bad:
        check_selection(Selection(layers=[3]), 3, 4)
    assert cli_text(bad.value).startswith("--layer 3 is out of range")


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["weights", SEED, "--layer", ""], "--layer"),
        (["weights", SEED, "--head", " "], "--head"),
        (["heads", SEED, "-q", "그것을", "-k", ""], "--key"),
        (["tokens", SEED, "--model", ""], "--model"),
        (["matrix", SEED, "-l", "0", "--head", "0", "--chat", "--system", ""], "--system"),
        (["info", "--lang", ""], "--lang"),
        (["mask", "--side", ""], "--side"),
        (["explore", SEED, "-o", "x.html", "--query", "사과를", "--query", ""], "--query"),
    ],
)
def test_an_empty_option_value_is_one_error_before_torch(args: list[str], flag: str) -> None:
    """An option given an empty value is refused as such, not read as its default."""
    assert one_line(run_cli_without_torch(*args), ExitCode.USAGE) == f"attnscope: error: {flag} is empty"
