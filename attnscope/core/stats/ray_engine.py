"""The Ray engine of ``attnscope stats``: the same worker code on Ray Data actors.

The driver has already read the file and cut it into shards (``core.stats.driver``), so line
numbers, bad lines and the checkpoint stay the driver's. Each shard becomes one row of a
Ray Dataset (``ray.data.from_items``); ``map_batches`` runs :class:`ShardActor`, a callable
class that loads the model once per actor and turns a shard into a
:class:`~attnscope.core.stats.aggregates.Partial` with ``StatsWorker.shard``, exactly as the local
engine does, with ``concurrency`` actors, one shard per batch, and one GPU per actor when the
cluster has GPUs. The driver receives each shard's aggregates as bytes as soon as it is done,
checkpoints it and merges them all at the end.

Without ``address`` a local Ray with ``workers`` CPUs starts here and stops at the end;
``address`` joins a running cluster (probed first, so an unreachable one fails within a few
seconds). Ray is optional (``pip install 'attnscope[ray]'``); without it :func:`check_ray`
says how to install it. This module does not print (Ray's own logs and progress bars are off).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from attnscope.core.prompt.spec import ChatSpec
from attnscope.core.stats.aggregates import Partial
from attnscope.core.stats.options import StatsConfig
from attnscope.core.stats.worker import Item, StatsWorker
from attnscope.errors import AttnscopeError
from attnscope.results.common import ModelInfo
from attnscope.results.segments import Message

INSTALL = "pip install 'attnscope[ray]'"
PROBE_SECONDS = 5.0  # a TCP connection to the head's port
HANDSHAKE_SECONDS = 45.0  # Ray's own connection, which gives up after about 20 s


def check_ray(address: str | None, workers: int) -> None:
    """Ray importable, and the cluster at ``address`` reachable; one error line otherwise."""
    try:
        import ray  # noqa: F401
        import ray.data  # noqa: F401
    except ImportError:
        raise AttnscopeError("stats_no_ray", arg="engine", command=INSTALL) from None
    if address is not None and address != "auto":
        _probe(address)


def _probe(address: str) -> None:
    """Connect to the head's port once, within PROBE_SECONDS: Ray itself would retry for a minute."""
    target = address.removeprefix("ray://")
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit():
        raise AttnscopeError("stats_address_form", arg="address", address=address)
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=PROBE_SECONDS):
            pass
    except OSError as exc:
        why = "timed out" if isinstance(exc, TimeoutError) else (exc.strerror or str(exc))
        raise AttnscopeError(
            "stats_address_unreachable", arg="address", address=address, why=why, s=f"{PROBE_SECONDS:.0f}"
        ) from None
    # Something answers on that port; whether it is Ray's head is asked in a child process, whose
    # stderr (Ray's own retry notices, about 20 s of them when it is not) stays out of ours.
    code = "import sys, ray; ray.init(address=sys.argv[1], log_to_driver=False); ray.shutdown()"
    try:
        child = subprocess.run(
            [sys.executable, "-c", code, address], capture_output=True, text=True, timeout=HANDSHAKE_SECONDS
        )
    except subprocess.TimeoutExpired:
        child = None
    if child is None or child.returncode != 0:
        raise AttnscopeError(
            "stats_address_unreachable",
            arg="address",
            address=address,
            why="Ray's handshake failed",
            s=f"{HANDSHAKE_SECONDS:.0f}",
        )


def items_json(items: Sequence[Item]) -> str:
    return json.dumps(
        [
            {
                "line": it.line,
                "prompt": it.prompt,
                "messages": None if it.messages is None else [[m.role, m.content] for m in it.messages],
            }
            for it in items
        ],
        ensure_ascii=False,
    )


def items_from_json(text: str) -> list[Item]:
    out = []
    for d in json.loads(text):
        messages = None if d["messages"] is None else tuple(Message(role=r, content=c) for r, c in d["messages"])
        out.append(Item(line=int(d["line"]), prompt=d["prompt"], messages=messages))
    return out


class ShardActor:
    """What Ray Data runs on each actor: the model loaded once, then one shard per call."""

    def __init__(self, model: dict[str, Any], options: StatsConfig, chat: ChatSpec | None, threads: int | None) -> None:
        import torch

        from attnscope.capture.engine import load

        if threads:
            torch.set_num_threads(threads)
        loaded = load(model["model"], revision=model["revision"], device=model["device"], dtype=model["dtype"])
        self.worker = StatsWorker(loaded, options, chat)
        info = loaded.info
        self.info = json.dumps({k: getattr(info, k) for k in info.__dataclass_fields__})

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        shards, parts, infos = [], [], []
        for shard, text in zip(batch["shard"], batch["items"], strict=True):
            part = self.worker.shard(items_from_json(str(text)))
            shards.append(int(shard))
            parts.append(part.to_bytes())
            infos.append(self.info)
        return {"shard": shards, "partial": parts, "info": infos}


def run_ray(
    model: Any,
    options: StatsConfig,
    chat: ChatSpec | None,
    todo: list[tuple[int, list[Item]]],
    workers: int,
    address: str | None,
    finish: Callable[[int, Partial], None],
    retries: int = 3,
) -> ModelInfo | None:
    """Run ``todo`` (shard index, items) on Ray; ``finish`` gets each shard as it comes back.
    Returns the model facts a worker reported (None when there was nothing to run).

    A worker process that dies (killed, out of memory, its node lost) is restarted by Ray and its
    shard run again, at most ``retries`` times (Ray Data's own default is without end, so a shard
    that kills every worker it meets would never fail); after that the run stops with one error,
    and the shards that finished are already in the checkpoint."""
    import ray
    import ray.data

    if not todo:
        return None
    with _ray_output_aside():
        return _run(ray, model, options, chat, todo, workers, address, finish, retries)


@contextlib.contextmanager
def _ray_output_aside() -> Iterator[None]:
    """While Ray runs, nothing it says reaches our stdout or stderr.

    Ray's C++ core writes its notices straight to file descriptor 2 (an actor's restart policy,
    a GCS retry), and the driver's error listener prints a dead worker's notice ("(raylet) A
    worker died ...") with Python's ``sys.stdout``, where it would land in the middle of
    ``--json`` output. So descriptors 1 and 2 go to a temporary file, ``sys.stdout`` to the null
    device, and Python's ``sys.stderr`` (the progress line, our messages) to a copy of the real
    descriptor 2. Nothing of ours writes to stdout before Ray is done."""
    import tempfile

    try:
        saved_err, saved_out = os.dup(2), os.dup(1)
    except OSError:  # no descriptors 1 and 2 (an embedding host): nothing to set aside
        yield
        return
    old_err, old_out = sys.stderr, sys.stdout
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    with tempfile.TemporaryFile() as aside:
        os.dup2(aside.fileno(), 2)
        os.dup2(aside.fileno(), 1)
        encoding = getattr(old_err, "encoding", None) or "utf-8"
        sys.stderr = os.fdopen(os.dup(saved_err), "w", buffering=1, encoding=encoding)
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - closed below
        try:
            yield
        finally:
            sys.stderr.flush()
            sys.stderr.close()
            sys.stdout.close()
            sys.stderr, sys.stdout = old_err, old_out
            os.dup2(saved_err, 2)
            os.dup2(saved_out, 1)
            os.close(saved_err)
            os.close(saved_out)


def _run(
    ray: Any,
    model: Any,
    options: StatsConfig,
    chat: ChatSpec | None,
    todo: list[tuple[int, list[Item]]],
    workers: int,
    address: str | None,
    finish: Callable[[int, Partial], None],
    retries: int,
) -> ModelInfo | None:
    import logging

    started = not ray.is_initialized()
    for name in ("ray", "ray.data"):
        logging.getLogger(name).setLevel(logging.ERROR)
    if started:
        kwargs: dict[str, Any] = {
            "include_dashboard": False,
            "log_to_driver": False,
            "logging_level": logging.ERROR,
            "configure_logging": True,
        }
        if address is None:
            kwargs["num_cpus"] = workers
        try:
            ray.init(address=address, **kwargs)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise AttnscopeError("stats_ray_start", arg="engine", detail=" ".join(str(exc).split())[:200]) from None
    try:
        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False
        ctx.print_on_execution_start = False
        resources: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]
        gpus = 1 if model.device in ("auto", "cuda") and resources.get("GPU", 0) >= 1 else 0
        local_cpus = os.cpu_count() or 1
        threads = max(1, local_cpus // workers) if address is None and not gpus else None
        rows = [{"shard": shard, "items": items_json(items)} for shard, items in todo]
        ds = ray.data.from_items(rows, override_num_blocks=len(rows))
        out = ds.map_batches(
            ShardActor,
            fn_constructor_kwargs={
                "model": {
                    "model": model.model,
                    "revision": model.revision,
                    "device": model.device,
                    "dtype": model.dtype,
                },
                "options": options,
                "chat": chat,
                "threads": threads,
            },
            batch_size=1,
            compute=ray.data.ActorPoolStrategy(size=workers),
            num_cpus=0 if gpus else 1,
            num_gpus=gpus,
            batch_format="numpy",
            max_restarts=retries,
            max_task_retries=retries,
        )
        info: ModelInfo | None = None
        try:
            for row in out.iter_rows():
                finish(int(row["shard"]), Partial.from_bytes(bytes(row["partial"])))
                if info is None:
                    info = ModelInfo(**json.loads(str(row["info"])))
        except AttnscopeError:
            raise
        except Exception as exc:
            cause = _cause(exc)
            if isinstance(cause, AttnscopeError):
                raise cause from None
            raise AttnscopeError(
                "stats_ray_worker",
                arg="engine",
                n=retries,
                detail=f"{type(cause).__name__}: {' '.join(str(cause).split())[:200]}",
            ) from None
        return info
    finally:
        if started:
            ray.shutdown()


def _cause(exc: BaseException) -> BaseException:
    """The error a worker raised, out of Ray's wrappers (RayTaskError and friends)."""
    seen = exc
    for _ in range(10):
        inner = getattr(seen, "cause", None) or seen.__cause__
        if inner is None or inner is seen:
            break
        seen = inner
    return seen
