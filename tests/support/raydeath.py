"""Kill a Ray stats worker on purpose: a ``worker_process_setup_hook`` for the Ray fault tests.

The test starts Ray with ``runtime_env={"worker_process_setup_hook": "support.raydeath.install",
"env_vars": {"ATTNSCOPE_TEST_DEATH": FILE, ...}}``. In each worker process :func:`install` wraps
``StatsWorker.shard``: when a shard holds the input line named in FILE (JSON ``{"line": N,
"times": K}``) and fewer than K workers have died for it so far, the process records one more
death (a file in FILE's folder) and exits at once with ``os._exit``, as a worker killed by the
OOM killer or a lost node would, with no exception and no cleanup. Nothing here runs in attnscope
itself; the hook only exists in the test's Ray cluster.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

ENV = "ATTNSCOPE_TEST_DEATH"


def deaths(control: Path) -> int:
    return len(list(control.parent.glob("death-*")))


def install() -> None:
    from attnscope.core.stats import worker as stats_worker

    original = stats_worker.StatsWorker.shard

    def shard(self: Any, items: Any) -> Any:
        control = Path(os.environ[ENV])
        if control.exists():
            rule = json.loads(control.read_text())
            if any(item.line == rule["line"] for item in items) and deaths(control) < rule["times"]:
                (control.parent / f"death-{uuid.uuid4().hex}").write_text(str(os.getpid()))
                os._exit(1)
        return original(self, items)

    stats_worker.StatsWorker.shard = shard  # type: ignore[method-assign]
