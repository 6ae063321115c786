"""The memory guard (capture/memory.py): sizes, budgets, the refusal, and engine.run's estimate."""

from __future__ import annotations

import pytest
import torch

from attnscope.capture import memory
from attnscope.cli.flags import cli_text
from attnscope.errors import AttnscopeError, ExitCode


@pytest.mark.parametrize(
    "text,expected",
    [("1000", 1000), ("512M", 512 << 20), ("4G", 4 << 30), ("1.5GiB", int(1.5 * (1 << 30))), (" 2 k ", 2048)],
)
def test_parse_size(text: str, expected: int) -> None:
    assert memory.parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "lots", "-5M", "4X"])
def test_parse_size_rejects(text: str) -> None:
    with pytest.raises(AttnscopeError, match="is not a size"):
        memory.parse_size(text)


def test_fmt_bytes() -> None:
    assert [memory.fmt_bytes(n) for n in (512, 1536, 25.1 * 1024, 3 << 30, 5 << 40)] == [
        "512 B",
        "1.5 KiB",
        "25.1 KiB",
        "3 GiB",
        "5 TiB",
    ]


def test_budget_keeps_headroom_and_honours_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(memory.ENV_LIMIT, raising=False)
    monkeypatch.setattr(memory, "available_bytes", lambda device="cpu": 1000)
    assert memory.budget() == 800
    monkeypatch.setenv(memory.ENV_LIMIT, "500")
    assert memory.budget() == 500
    monkeypatch.setenv(memory.ENV_LIMIT, "5000")
    assert memory.budget() == 800  # the cap never raises what is free
    monkeypatch.setattr(memory, "available_bytes", lambda device="cpu": None)
    assert memory.budget() == 5000
    monkeypatch.delenv(memory.ENV_LIMIT)
    assert memory.budget() is None
    memory.guard(10**15, "memory_rows")  # unknown free memory: no refusal


def test_guard_message(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(memory.ENV_LIMIT, raising=False)
    monkeypatch.setattr(memory, "available_bytes", lambda device="cpu": 10 << 30)
    sizes = {"layers": 24, "heads": 14, "queries": 5, "keys": 5, "arg": "layer"}
    memory.guard(8 << 30, "memory_rows", **sizes)  # exactly 80% fits
    with pytest.raises(AttnscopeError) as err:
        memory.guard((8 << 30) + 1, "memory_rows", **sizes)
    assert err.value.code == ExitCode.RESOURCE
    assert err.value.message == (
        "attention rows for 24 layer(s) x 14 heads x 5 queries x 5 keys would need about 8 GiB, but only 8 GiB "
        "can be used; try a shorter prompt, or fewer layers with layer where the command has it"
    )
    assert cli_text(err.value).endswith(
        "can be used; try a shorter prompt, or fewer layers with --layer where the command has it"
    )
    with pytest.raises(AttnscopeError, match="can be used on cuda:0; try"):
        memory.guard(9 << 30, "memory_scores", device="cuda:0", **sizes)


def test_cuda_free_memory_is_read_from_the_device(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda index=None: (123 << 20, 80 << 30))
    assert memory.available_bytes("cuda:0") == 123 << 20
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert memory.available_bytes("cuda") is None
    assert memory.available_bytes("mps") is None


def test_cpu_free_memory_is_known_on_linux() -> None:
    free = memory.available_bytes("cpu")
    assert free is not None and free > 0


def test_capture_bytes_by_hand() -> None:
    kept, transient = memory.capture_bytes(layers=24, batch=2, heads=14, queries=1, keys=100, padded=True)
    assert kept == 24 * 2 * 14 * 1 * 100 * 4
    assert transient == 3 * 2 * 14 * 1 * 100 * 4 + 7 * 2 * 100 * 100  # three one-layer buffers + the T x T mask
    _, unpadded = memory.capture_bytes(layers=24, batch=2, heads=14, queries=1, keys=100, padded=False)
    assert unpadded == 3 * 2 * 14 * 1 * 100 * 4  # is_causal: no mask is built
