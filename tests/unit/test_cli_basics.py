"""The CLI as a pipe and a terminal sees it: fast --help, quiet broken pipes, NO_COLOR, --width.

``--help`` and the pipe test run ``python -m attnscope`` in a subprocess (a real pipe, a
fresh interpreter); the rest go through ``CliRunner``, whose stdout is not a TTY.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from attnscope.cli.command import command
from attnscope.cli.options import Model, Output, Source
from attnscope.cli.terminal import Terminal

from support.notorch import imported

ROOT = Path(__file__).resolve().parents[2]


def test_help_does_not_import_torch_transformers_or_rich() -> None:
    code = (
        "from attnscope.cli import app\n"
        "for args in (['--help'], ['weights', '--help'], ['tokens', '--help']):\n"
        "    try:\n"
        "        app(args, prog_name='attnscope', standalone_mode=False)\n"
        "    except SystemExit:\n"
        "        pass\n"
    )
    heavy, res = imported(code, ("torch", "transformers", "rich", "tokenizers"))
    assert "Usage: attnscope weights" in res.stdout
    assert heavy == []


def test_option_groups_expand_into_the_signature_and_refuse_a_clash() -> None:
    def cmd(prompt: str, *, model: Model, out: Output, terminal: Terminal) -> tuple[Model, Output, Terminal]:
        return model, out, terminal

    wrapped = command(cmd)
    names = list(inspect.signature(wrapped).parameters)
    assert names == ["prompt", "model", "revision", "device", "dtype", "as_json", "svg", "html", "width", "lang"]
    model, out, terminal = wrapped(
        prompt="x",
        model="m",
        revision=None,
        device="cpu",
        dtype="auto",
        as_json=True,
        svg=None,
        html=None,
        width=80,
        lang=None,
    )
    assert model == Model(model="m", device="cpu") and out == Output(as_json=True, width=80)
    assert model.terminal is out.terminal is terminal  # one terminal for the whole run

    def twice(source: Source, model: Model) -> None: ...

    with pytest.raises(TypeError, match="model, revision"):
        command(twice)
