"""Shared fixtures: tiny GQA Qwen2 models and a tokenizer trained here, plus the real model.

The tiny models are random with a fixed seed; treat every fixture as read-only.
``real_model`` is the GGUF from shared/real-model/fetch.sh (or $ATTNSCOPE_REAL_MODEL);
``real_gemma`` the one from fetch-gemma3.sh (or $ATTNSCOPE_REAL_GEMMA); tests that use them are
marked ``slow`` and skip when they are absent.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from support import REAL_DEFAULT, REAL_GEMMA_DEFAULT


@pytest.fixture(scope="session")
def tokenizer() -> Any:
    from support import tiny

    return tiny.train_tokenizer()


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A saved HF folder: 3 layers, 4 query heads sharing 2 KV heads, head_dim 8."""
    from support import tiny

    return tiny.save_model_dir(tmp_path_factory.mktemp("tiny-qwen2"))


@pytest.fixture(scope="session")
def model_dir_gqa7(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """7 query heads sharing 1 KV head, 2 layers."""
    from support import tiny

    return tiny.save_model_dir(
        tmp_path_factory.mktemp("tiny-qwen2-gqa7"), num_hidden_layers=2, num_attention_heads=7, num_key_value_heads=1
    )


@pytest.fixture(scope="session")
def loaded(model_dir: Path) -> Any:
    from attnscope.capture.engine import load

    return load(str(model_dir), device="cpu", dtype="float32")


@pytest.fixture(scope="session")
def real_model() -> Path:
    path = Path(os.environ.get("ATTNSCOPE_REAL_MODEL", REAL_DEFAULT))
    if not path.is_file():
        pytest.skip(f"real model not present at {path} (run shared/real-model/fetch.sh)")
    return path


@pytest.fixture(scope="session")
def real_gemma() -> Path:
    """Gemma 3 270M from shared/real-model/fetch-gemma3.sh (or $ATTNSCOPE_REAL_GEMMA); its weights are
    under Gemma's terms, so it is fetched, never committed."""
    path = Path(os.environ.get("ATTNSCOPE_REAL_GEMMA", REAL_GEMMA_DEFAULT))
    if not path.is_file():
        pytest.skip(f"Gemma 3 checkpoint not present at {path} (run shared/real-model/fetch-gemma3.sh)")
    return path


@pytest.fixture(scope="session")
def real_loaded(real_model: Path) -> Any:
    from attnscope.capture.engine import load

    return load(str(real_model), device="cpu", dtype="float32")


@pytest.fixture()
def cli() -> Any:
    """Invoke the CLI in-process: cli(args...) -> click Result (stdout and stderr apart)."""
    from typer.testing import CliRunner

    from attnscope.cli import app

    runner = CliRunner()

    def invoke(*args: str, input: str | bytes | None = None) -> Any:
        return runner.invoke(app, list(args), input=input, catch_exceptions=False)

    return invoke


@pytest.fixture(scope="session")
def browser() -> Any:
    """Headless Debian Chromium driven by Playwright (tests/browser); see browserkit."""
    from support.browserkit import chromium_path, missing

    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("Playwright is not installed (pip install -e '.[dev]')")
    exe = chromium_path()
    if exe is None:
        missing("no Chromium found (apt-get install chromium, or set ATTNSCOPE_CHROMIUM)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe)
        yield b
        b.close()


# Hypothesis profiles for the property tests (tests/integration/test_properties.py): models run per example, so no deadline.
settings.register_profile(
    "default",
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


settings.register_profile(
    "thorough",
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
