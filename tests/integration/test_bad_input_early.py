"""Every bad input: one ``attnscope: error:`` line on stderr, a non-zero exit, nothing on stdout.

Each case here backs one row of the bad-input table in the README (Reliability section); each
must fail if its handling is removed (the message, the exit code and the empty stdout
are all checked). Most cases go through ``CliRunner``; a few run ``python -m
attnscope`` in a subprocess for real stdout/stderr separation and a real environment
(``HF_HUB_OFFLINE`` is read when huggingface_hub is imported).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from attnscope.cli.parse import parse_indices
from attnscope.core.spec import resolve
from attnscope.errors import AttnscopeError, ExitCode

from support import SEED

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("spec", ["3-", "a", "5-2", "24", "-25", "-", "1-2-3", ","])
def test_parse_indices_rejects(spec: str) -> None:
    with pytest.raises(AttnscopeError) as err:
        resolve(parse_indices(spec, "layer"), 24, "layer")
    assert err.value.code == ExitCode.USAGE
    assert err.value.cli_message().startswith("--layer ")


def test_parse_indices_accepts() -> None:
    assert resolve(parse_indices("0,3,20-23", "layer"), 24, "layer") == [0, 3, 20, 21, 22, 23]
    assert resolve(parse_indices("-3--1", "layer"), 24, "layer") == [21, 22, 23]
    assert resolve(parse_indices(" all ", "head"), 4, "head") == [0, 1, 2, 3]


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
