"""Bad input to ``ablate``, ``knockout`` and ``patch``: one error line, a non-zero exit, nothing on
stdout, no traceback. What the tokenizer decides is answered before the weights load: these
runs get a model folder without its weights file, so reaching the weights would fail otherwise."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from support import SEED, one_error

CLEAN = "민수는 사과를 샀다. 그는 그것을"
CORRUPT = "지수는 사과를 샀다. 그는 그것을"


@pytest.fixture(scope="module")
def no_weights(model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model's folder less its weights: the config and the tokenizer load, the model does not."""
    out = tmp_path_factory.mktemp("no-weights")
    for item in model_dir.iterdir():
        if not item.name.endswith(".safetensors"):
            shutil.copy(item, out / item.name)
    return out


@pytest.mark.parametrize(
    ("args", "code", "fragments"),
    [
        (
            ["ablate", SEED, "--target", " 사"],
            2,
            ["--target ' 사' is 3 tokens, not one", "'사 1/3' (265)", "--target-id"],
        ),
        (["ablate", SEED, "--target-id", "99999"], 2, ["--target-id 99999 is out of range"]),
        (["ablate", SEED, "--target", ".", "--foil", " 사"], 2, ["--foil ' 사' is 3 tokens"]),
        (["ablate", "a", "--target", ".", "--mode", "mean"], 2, ["--mode mean needs a prompt of 2 or more tokens"]),
        (["ablate", SEED, "--target", ".", "--pos", "99"], 2, ["--pos 99: the prompt has 28 tokens"]),
        (["knockout", SEED, "--target", ".", "--key", "사과를", "--query", "99"], 2, ["--query 99 is out of range"]),
        (
            ["patch", "--clean", CLEAN, "--corrupt", "민수는 책을 샀다. 그는 그것을", "--target", "."],
            2,
            ["the clean prompt is 21 tokens and the corrupt prompt is 18 tokens", "--align"],
        ),
    ],
)
def test_answered_with_the_tokenizer_alone(
    cli: Any, no_weights: Path, args: list[str], code: int, fragments: list[str]
) -> None:
    one_error(cli(*args, "-m", str(no_weights)), code, *fragments)


def test_foil_same_token_by_id(cli: Any, no_weights: Path, loaded: Any) -> None:
    (tid,) = loaded.tokenizer(".", add_special_tokens=False)["input_ids"]
    one_error(
        cli("ablate", SEED, "--target", ".", "--foil-id", str(tid), "-m", str(no_weights)),
        2,
        "--foil is the same token as --target",
    )


def test_target_id_accepted(cli: Any, model_dir: Path) -> None:
    res = cli("ablate", SEED, "--target-id", "265", "--layer", "0", "--head", "0", "--json", "-m", str(model_dir))
    assert res.exit_code == 0, res.stderr
    assert '"target_id": 265' in res.stdout


def test_mean_over_problems(cli: Any, model_dir: Path, tmp_path: Path) -> None:
    missing = str(tmp_path / "none")
    one_error(
        cli("ablate", SEED, "--target", ".", "--mode", "mean", "--mean-over", missing, "-m", str(model_dir)),
        6,
        "--mean-over",
    )
    one_error(
        cli("ablate", SEED, "--target", ".", "--mean-over", missing, "-m", str(model_dir)),
        2,
        "--mean-over needs --mode mean",
    )


def test_knockout_key_after_query(cli: Any, model_dir: Path) -> None:
    res = cli("knockout", SEED, "--target", ".", "--key", "그것을", "--query", "사과를", "-m", str(model_dir))
    one_error(res, 2, "comes after the query")


def test_patch_same_metric(cli: Any, model_dir: Path) -> None:
    res = cli("patch", "--clean", CLEAN, "--corrupt", CLEAN, "--target", ".", "-m", str(model_dir))
    one_error(res, 2, "the clean and corrupt prompts give the same metric")


def test_approx_with_mean_is_supported(cli: Any, model_dir: Path) -> None:
    res = cli(
        "ablate", SEED, "--target", ".", "--mode", "mean", "--approx", "--check", "3", "--json", "-m", str(model_dir)
    )
    assert res.exit_code == 0, res.stderr
    assert '"estimated": true' in res.stdout
