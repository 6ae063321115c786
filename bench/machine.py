"""What the machine looks like while a benchmark runs, and what a measuring process reads about itself.

The parent records the CPU, the cores, the free memory, the load and the git commit next to its
numbers; a child reads its own resident set and high-water mark from ``/proc/self``.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def now() -> str:
    """The UTC time to the second, as the result files store it."""
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def log(msg: str) -> None:
    """One progress line on stderr, with the time."""
    print(f"[{dt.datetime.now(dt.timezone.utc):%H:%M:%S}] {msg}", file=sys.stderr, flush=True)


def load_averages() -> list[float]:
    """The 1-, 5- and 15-minute load averages."""
    return list(os.getloadavg())


def load_average() -> float:
    """The 1-minute load average."""
    return os.getloadavg()[0]


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def git_commit() -> str | None:
    """The short commit of the checkout being measured, or None without git."""
    if not shutil.which("git"):
        return None
    proc = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return proc.stdout.strip() or None


def mem_available_mb() -> float:
    try:
        text = Path("/proc/meminfo").read_text()
    except OSError:
        return float("inf")
    m = re.search(r"^MemAvailable:\s+(\d+) kB", text, re.M)
    return int(m.group(1)) / 1024 if m else float("inf")


def gpu_free_mb() -> float:
    import torch

    free, _ = torch.cuda.mem_get_info()
    return float(free) / 2**20


def facts() -> dict[str, Any]:
    """The machine as a result file records it at the start of a run."""
    return {
        "cpu": cpu_name(),
        "cores": os.cpu_count(),
        "memory_available_mb_at_start": mem_available_mb(),
        "load_average_at_start": load_averages(),
        "python": platform.python_version(),
    }


def status_kb(field: str) -> int:
    """A field of ``/proc/self/status`` in kB (``VmRSS``, ``VmHWM``), 0 when absent."""
    text = Path("/proc/self/status").read_text()
    m = re.search(rf"^{field}:\s+(\d+) kB", text, re.M)
    return int(m.group(1)) if m else 0


def reset_peak() -> bool:
    """Reset this process's ``VmHWM`` to its current RSS; False where the kernel does not allow it."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False
