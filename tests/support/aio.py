"""Run a coroutine to its end from a test, whatever the thread's event loop is doing.

Playwright's sync API (the session's Chromium in tests/browser) keeps an event loop running in
the main thread until the session ends, and ``asyncio.run`` refuses to start beside it. A
coroutine then runs in a thread of its own, with a loop of its own; its exception is raised here.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any


def run(coro: Coroutine[Any, Any, None]) -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(coro)
        return
    failed: list[BaseException] = []

    def target() -> None:
        try:
            asyncio.run(coro)
        except BaseException as exc:  # noqa: BLE001 - handed back to the test's thread
            failed.append(exc)

    thread = threading.Thread(target=target, name="tui-test-loop")
    thread.start()
    thread.join()
    if failed:
        raise failed[0]
