"""A Ray worker that dies mid-run: restarted and its shard run again, or, past ``retries``, one
error line with the finished shards kept in the checkpoint. Skipped without Ray.

The workers of this module's cluster carry ``support.raydeath``'s hook, which makes a worker
process exit (``os._exit``, no exception) when it meets a chosen input line, a given number of
times in all; the numbers are then compared with the local engine's."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")

from attnscope.core.stats import driver as core_stats  # noqa: E402
from attnscope.core.stats.driver import ModelSpec  # noqa: E402
from attnscope.core.stats.options import StatsConfig  # noqa: E402

from support import raydeath, tiny  # noqa: E402
from support.statsref import assert_same_stats  # noqa: E402

PROMPTS = [*tiny.CORPUS, "hello hello hello world world", "사과는 사과를 샀다. 사과는 맛있다."] * 2
DIE_AT = 8  # an input line of the third shard (shards of 3 lines)


@pytest.fixture(scope="module")
def control(tmp_path_factory: pytest.TempPathFactory) -> Any:
    import logging

    folder = tmp_path_factory.mktemp("raydeath")
    path = folder / "rule.json"
    tests_dir = str(Path(__file__).resolve().parents[1])
    env = {
        raydeath.ENV: str(path),
        "PYTHONPATH": os.pathsep.join(filter(None, [tests_dir, os.environ.get("PYTHONPATH")])),
    }
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        logging_level=logging.ERROR,
        runtime_env={"env_vars": env, "worker_process_setup_hook": "support.raydeath.install"},
    )
    yield path
    ray.shutdown()


def _rule(path: Path, times: int) -> None:
    for old in path.parent.glob("death-*"):
        old.unlink()
    path.write_text(json.dumps({"line": DIE_AT, "times": times}))


def _corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(json.dumps({"prompt": p}, ensure_ascii=False) for p in PROMPTS) + "\n", encoding="utf-8")
    return path


def _same(a: Any, b: Any) -> None:
    assert_same_stats(a, b)
    assert a.corpus == b.corpus


def test_a_worker_that_dies_is_restarted_and_its_shard_counted_once(
    control: Path, model_dir: Path, loaded: Any, tmp_path: Path
) -> None:
    path = _corpus(tmp_path)
    local = core_stats.stats(loaded, str(path), StatsConfig(shard_size=3))
    _rule(control, times=1)
    spec = ModelSpec(model=str(model_dir), device="cpu", dtype="float32")
    remote = core_stats.stats(spec, str(path), StatsConfig(shard_size=3, engine="ray", workers=2, retries=2))
    assert raydeath.deaths(control) == 1  # the hook did kill a worker, once
    _same(local, remote)


def test_a_worker_that_keeps_dying_fails_the_run_and_the_checkpoint_keeps_the_rest(
    control: Path, cli: Any, model_dir: Path, loaded: Any, tmp_path: Path
) -> None:
    path = _corpus(tmp_path)
    _rule(control, times=1000)
    folder = tmp_path / "ck"
    args = ["stats", "--input", str(path), "--model", str(model_dir), "--shard-size", "3", "--checkpoint", str(folder)]
    res = cli(*args, "--engine", "ray", "--workers", "2", "--retries", "1")
    assert res.exit_code != 0 and res.stdout == ""
    lines = [line for line in res.stderr.splitlines() if line.startswith("attnscope: ")]
    assert len(lines) == 1 and "could not be retried after 1 restart(s)" in lines[0], res.stderr
    assert "Traceback" not in res.stderr
    assert raydeath.deaths(control) >= 2  # the first try and the one retry both died
    kept = sorted(folder.glob("shard-*.npz"))
    assert "shard-000002.npz" not in {p.name for p in kept}  # the shard that kills its worker never finished
    # the rest resumes on the local engine and matches an uninterrupted run
    _rule(control, times=0)
    again = core_stats.stats(loaded, str(path), StatsConfig(shard_size=3, checkpoint=str(folder), resume=True))
    _same(core_stats.stats(loaded, str(path), StatsConfig(shard_size=3)), again)
