"""The sweep (``attnscope.devtools.sweep``): every command on both real checkpoints over Korean,
English, code, emoji, one character and 600 tokens; no run may end in an internal error.

The commands run in this process through the CLI, each model loaded once, with the sweep's
cheap settings (two layers for the causal sweeps, one generated token, ...). A refusal with its
reason is a fine outcome; an internal error or a crash fails the test with the whole table.
``ATTNSCOPE_WRITE_SWEEP_DOC=1`` rewrites ``docs/sweep.md`` from this run (both checkpoints).

CI's budget for the slow tier holds three prompts (Korean, emoji, one character: about 3 CPU
minutes for both checkpoints); ``ATTNSCOPE_SWEEP_PROMPTS=all`` (or a comma list) runs the whole
matrix, which ``python -m attnscope.devtools.sweep`` also runs and ``docs/sweep.md`` shows.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from attnscope.devtools import sweep

RESULTS: dict[str, sweep.Sweep] = {}
CI_PROMPTS = ("korean", "emoji", "char")
ALL_PROMPTS = {"-", "korean", "english", "code", "emoji", "char", "long"}


def chosen_prompts() -> tuple[str, ...]:
    """The prompts this run sweeps: CI's three unless ATTNSCOPE_SWEEP_PROMPTS says otherwise."""
    asked = os.environ.get("ATTNSCOPE_SWEEP_PROMPTS", ",".join(CI_PROMPTS))
    return () if asked == "all" else tuple(asked.split(","))


@pytest.fixture(scope="module", autouse=True)
def sweep_page() -> Iterator[None]:
    """With ATTNSCOPE_WRITE_SWEEP_DOC=1, docs/sweep.md is written from this module's runs at its end."""
    yield
    if (
        os.environ.get("ATTNSCOPE_WRITE_SWEEP_DOC") == "1"
        and not chosen_prompts()
        and set(RESULTS) == {"real_model", "real_gemma"}
    ):
        both = sweep.Sweep([o for name in ("real_gemma", "real_model") for o in RESULTS[name].outcomes])
        page = Path(__file__).parents[2] / "docs" / "sweep.md"
        page.write_text(sweep.page(both, cheap=True), encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("checkpoint", ["real_model", "real_gemma"])
def test_no_command_ends_in_an_internal_error(checkpoint: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    path: Path = request.getfixturevalue(checkpoint)
    with warnings.catch_warnings():
        warnings.simplefilter("default")  # as a user runs the CLI: Python's filters, not this suite's "error"
        prompts = chosen_prompts()
        result = sweep.sweep([str(path)], cheap=True, prompts=prompts, work=tmp_path)
    RESULTS[checkpoint] = result
    names = {o.command for o in result.outcomes}
    assert names >= {"info", "weights", "render", "tokens", "mask", "heads", "matrix", "trace", "explain", "rope"}
    assert names >= {"reuse", "roles", "generate", "explore", "ablate", "knockout", "patch", "flow", "stats"}
    assert {o.prompt for o in result.outcomes} == ({"-", *prompts} if prompts else ALL_PROMPTS)
    assert not result.bad(), sweep.table(result)
    ok = [o for o in result.outcomes if o.status == "ok"]
    assert len(ok) > len(result.outcomes) // 2  # most runs work: a sweep of refusals proves little
