"""attnscope stats --engine ray on a local Ray cluster (2 workers, the tiny model saved as an HF
folder): the same numbers as the local engine. Skipped when Ray is not installed.

One module-scoped cluster: Ray's start-up takes seconds, so every test here shares it (the
engine joins a running Ray instead of starting its own, and leaves it running)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")

from attnscope.core.stats import driver as core_stats  # noqa: E402
from attnscope.core.stats.driver import ModelSpec  # noqa: E402
from attnscope.core.stats.options import StatsConfig  # noqa: E402

from support import tiny  # noqa: E402
from support.statsref import assert_same_stats  # noqa: E402

PROMPTS = [*tiny.CORPUS, "hello hello hello world world", "사과는 사과를 샀다. 사과는 맛있다."] * 2


@pytest.fixture(scope="module")
def cluster() -> Any:
    import logging

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
    yield ray
    ray.shutdown()


def _corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.jsonl"
    lines = [json.dumps({"prompt": p}, ensure_ascii=False) for p in PROMPTS]
    lines.insert(3, "{broken")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_ray_with_two_workers_equals_local(cluster: Any, model_dir: Path, loaded: Any, tmp_path: Path) -> None:
    path = _corpus(tmp_path)
    local = core_stats.stats(loaded, str(path), StatsConfig(shard_size=3))
    spec = ModelSpec(model=str(model_dir), device="cpu", dtype="float32")
    folder = tmp_path / "ck"
    remote = core_stats.stats(
        spec, str(path), StatsConfig(shard_size=3, engine="ray", workers=2, checkpoint=str(folder))
    )
    assert remote.corpus == local.corpus
    assert remote.options.engine == "ray" and remote.options.workers == 2
    assert_same_stats(local, remote)
    assert len(list(folder.glob("shard-*.npz"))) == 6  # every shard's aggregates came back and were kept
    # resumed on the local engine from the Ray run's checkpoint: nothing left to run, the same result
    again = core_stats.stats(loaded, str(path), StatsConfig(shard_size=3, checkpoint=str(folder), resume=True))
    assert again.stats["induction"].mean == remote.stats["induction"].mean


def test_a_bad_model_is_refused_before_ray_starts(cluster: Any, cli: Any, tmp_path: Path) -> None:
    """The model is checked on the driver first: one line, and no worker is started for it."""
    path = _corpus(tmp_path)
    folder = tmp_path / "not-a-model"
    folder.mkdir()
    res = cli("stats", "--input", str(path), "--engine", "ray", "--model", str(folder))
    assert res.exit_code == 3 and res.stdout == ""
    assert res.stderr.splitlines()[-1].startswith("attnscope: error: "), res.stderr
