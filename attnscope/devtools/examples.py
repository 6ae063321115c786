"""Run the marked examples of README.md and docs/ on a real model and paste their output.

An example is a fenced block right after an HTML comment marker::

    <!-- example -->
    ```console
    $ attnscope weights "민수는 사과를 샀다. 그는 그것을 먹었다." --query 그것을
    (output, rewritten by this script)
    ```

Every line of the block that starts with ``$ `` is a command (a line ending in ``\\`` continues
on the next one); the lines after it, up to the next command or the end of the block, are its
output. The marker takes options: ``<!-- example: exit=2 stderr timeout=900 -->``:

- ``exit=N``: the exit status every command of the block must have (default 0); a non-zero
  status is shown as a last line ``[exit N]``;
- ``stderr``: show stderr too (merged with stdout); by default only stdout is shown;
- ``timeout=S``: seconds per command (default 900).

``<!-- example-file: NAME -->`` before a fenced block writes that block's text to ``NAME`` in
the page's working folder before the page's examples run (for example an input file that a
command reads).

Each page's commands run in order, through ``bash``, in a fresh temporary folder that holds a
``samples`` link to the repository's samples and a link to the model under its own file name;
``ATTNSCOPE_MODEL`` names that link, so outputs say ``qwen2.5-...gguf`` rather than a path of
this machine. ``attnscope`` runs this checkout's code (``python -m attnscope``). The terminal is
fixed: ``COLUMNS=100``, ``NO_COLOR=1``, ``TERM=dumb``, no ``ATTNSCOPE_LANG``. Trailing spaces are
stripped from output lines.

Usage::

    ATTNSCOPE_MODEL=/path/to/model.gguf python -m attnscope.devtools.examples          # rewrite
    ATTNSCOPE_MODEL=/path/to/model.gguf python -m attnscope.devtools.examples --check  # exit codes only
    python -m attnscope.devtools.examples --list                                       # what would run

Options: ``--check`` (run every command and check its exit status, write nothing), ``--list``
(print the commands, run nothing), ``--match TEXT`` (only commands containing TEXT), ``--jobs N``
(N pages at the same time), and page paths (default: README.md and docs/**/*.md). This module is not imported by the CLI.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"^<!--\s*example(?::\s*(?P<opts>.*?))?\s*-->\s*$")
FILE_MARKER = re.compile(r"^<!--\s*example-file:\s*(?P<name>\S+)\s*-->\s*$")
FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
COLUMNS = 100
DEFAULT_TIMEOUT = 900.0


@dataclass
class Example:
    page: Path
    line: int  # 1-based line of the opening fence
    start: int  # 0-based index of the first line inside the fence
    end: int  # 0-based index of the closing fence
    commands: list[str]
    exit: int = 0
    stderr: bool = False
    timeout: float = DEFAULT_TIMEOUT


@dataclass
class Page:
    path: Path
    lines: list[str]
    examples: list[Example] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)


def _options(text: str | None, where: str) -> dict[str, str]:
    opts: dict[str, str] = {}
    for word in (text or "").split():
        key, _, value = word.partition("=")
        if key not in ("exit", "stderr", "timeout"):
            raise SystemExit(f"{where}: unknown example option {word!r} (known: exit=N, stderr, timeout=S)")
        opts[key] = value
    return opts


def _fence_after(lines: list[str], i: int, where: str) -> tuple[int, int, str]:
    """The fenced block starting at line i: (first inside line, closing fence line, fence)."""
    m = FENCE.match(lines[i]) if i < len(lines) else None
    if not m:
        raise SystemExit(f"{where}: an example marker must be followed directly by a fenced block")
    fence = m.group("fence")
    j = i + 1
    while j < len(lines) and lines[j].rstrip() != fence:  # the closing fence: the same run of backticks
        j += 1
    if j == len(lines):
        raise SystemExit(f"{where}: the fenced block is never closed")
    return i + 1, j, fence


def _commands(body: list[str], where: str) -> list[str]:
    cmds: list[str] = []
    k = 0
    while k < len(body):
        if body[k].startswith("$ "):
            cmd = body[k][2:]
            while cmd.endswith("\\") and k + 1 < len(body):
                k += 1
                cmd += "\n" + body[k]
            cmds.append(cmd)
        k += 1
    if not cmds:
        raise SystemExit(f"{where}: an example block has no command (a line starting with '$ ')")
    return cmds


def parse(path: Path) -> Page:
    lines = path.read_text(encoding="utf-8").split("\n")
    page = Page(path, lines)
    i = 0
    while i < len(lines):
        where = f"{path}:{i + 1}"
        fm = FILE_MARKER.match(lines[i])
        m = MARKER.match(lines[i])
        if fm:
            start, end, _ = _fence_after(lines, i + 1, where)
            page.files[fm.group("name")] = "\n".join(lines[start:end]) + "\n"
            i = end + 1
            continue
        if m:
            opts = _options(m.group("opts"), where)
            start, end, _ = _fence_after(lines, i + 1, where)
            ex = Example(path, i + 2, start, end, _commands(lines[start:end], where))
            ex.exit = int(opts.get("exit", "0"))
            ex.stderr = "stderr" in opts
            ex.timeout = float(opts.get("timeout", DEFAULT_TIMEOUT))
            page.examples.append(ex)
            i = end + 1
            continue
        if FENCE.match(lines[i]):  # an unmarked block: a marker shown inside it is not a marker
            _, end, _ = _fence_after(lines, i, where)
            i = end + 1
            continue
        i += 1
    return page


def pages(paths: list[str]) -> list[Path]:
    if paths:
        return [Path(p) for p in paths]
    found = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return [p for p in found if p.exists()]


def _workdir(tmp: Path, files: dict[str, str], model: str | None) -> dict[str, str]:
    """Prepare the page's working folder; return the environment its commands run with."""
    (tmp / "samples").symlink_to(ROOT / "samples")
    for name, text in files.items():
        (tmp / name).write_text(text, encoding="utf-8")
    shim = tmp / ".bin"
    shim.mkdir()
    (shim / "attnscope").write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m attnscope "$@"\n')
    (shim / "attnscope").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATTNSCOPE_") and k not in ("FORCE_COLOR",)}
    for keep in ("ATTNSCOPE_CACHE", "ATTNSCOPE_MEMORY_LIMIT"):
        if keep in os.environ:
            env[keep] = os.environ[keep]
    if model:
        real = Path(model).expanduser().resolve()
        link = tmp / real.name
        link.symlink_to(real)
        env["ATTNSCOPE_MODEL"] = real.name
    env.update(
        PATH=f"{shim}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=f"{ROOT}{os.pathsep}{env['PYTHONPATH']}" if env.get("PYTHONPATH") else str(ROOT),
        COLUMNS=str(COLUMNS),
        LINES="50",
        NO_COLOR="1",
        TERM="dumb",
        LANG="C.UTF-8",
        LC_ALL="C.UTF-8",
    )
    env.pop("ATTNSCOPE_LANG", None)
    return env


def _run(cmd: str, ex: Example, cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    try:
        proc = subprocess.run(
            ["bash", "-c", cmd],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if ex.stderr else subprocess.PIPE,
            timeout=ex.timeout,
        )
    except subprocess.TimeoutExpired:
        return 124, f"(timed out after {ex.timeout:g} s)"
    out = proc.stdout.decode("utf-8", errors="replace")
    if proc.returncode != ex.exit and not ex.stderr and proc.stderr:
        out += proc.stderr.decode("utf-8", errors="replace")
    return proc.returncode, out


def _block(cmds: list[tuple[str, int, str]]) -> list[str]:
    body: list[str] = []
    for cmd, code, out in cmds:
        body.extend(("$ " + cmd).split("\n"))
        text = out.rstrip("\n")
        if text:
            body.extend(line.rstrip() for line in text.split("\n"))
        if code != 0:
            body.append(f"[exit {code}]")
    return body


def run_page(page: Page, model: str | None, match: str | None) -> Iterator[tuple[Example, str, int, str, float]]:
    """Run the page's examples in order; yield (example, command, exit status, output, seconds)."""
    with tempfile.TemporaryDirectory(prefix="attnscope-examples-") as name:
        tmp = Path(name)
        env = _workdir(tmp, page.files, model)
        for ex in page.examples:
            for cmd in ex.commands:
                if match and match not in cmd:
                    continue
                started = time.monotonic()
                code, out = _run(cmd, ex, tmp, env)
                yield ex, cmd, code, out, time.monotonic() - started


def _do_page(path: Path, model: str | None, check: bool, match: str | None) -> tuple[int, int]:
    """Run one page and rewrite its outputs unless ``check``; return (commands run, failed)."""
    page = parse(path)
    results: dict[int, list[tuple[str, int, str]]] = {}
    total = failed = 0
    for ex, cmd, code, out, seconds in run_page(page, model, match):
        total += 1
        ok = code == ex.exit
        status = "ok" if ok else f"FAILED: exit {code}, expected {ex.exit}"
        report = f"{path}:{ex.line}: {status} ({seconds:.1f} s): {cmd.splitlines()[0]}"
        if not ok:
            failed += 1
            report += "\n" + "\n".join(out.rstrip().split("\n")[-15:])
        print(report, file=sys.stderr, flush=True)
        results.setdefault(ex.start, []).append((cmd, code, out))
    if check or failed:
        return total, failed  # a page with a failed example keeps its old outputs
    lines = list(page.lines)
    for ex in reversed(page.examples):
        done = results.get(ex.start)
        if done is None or len(done) != len(ex.commands):
            continue  # filtered out by --match: keep the old output
        lines[ex.start : ex.end] = _block(done)
    text = "\n".join(lines)
    if text != "\n".join(page.lines):
        path.write_text(text, encoding="utf-8")
        print(f"{path}: updated", file=sys.stderr, flush=True)
    return total, failed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Run the marked examples of README.md and docs/ and paste their output.")
    ap.add_argument("pages", nargs="*", help="Markdown files (default: README.md and docs/**/*.md)")
    ap.add_argument("--check", action="store_true", help="only check every command's exit status; write nothing")
    ap.add_argument("--list", action="store_true", help="print the commands and run nothing")
    ap.add_argument("--match", help="only commands that contain this text")
    ap.add_argument("--jobs", "-j", type=int, default=1, help="pages run at the same time (default 1)")
    args = ap.parse_args(argv)
    paths = pages(args.pages)
    if args.list:
        for path in paths:
            for ex in parse(path).examples:
                for cmd in ex.commands:
                    if not args.match or args.match in cmd:
                        print(f"{path}:{ex.line}: {cmd}")
        return 0
    paths = [p for p in paths if parse(p).examples]
    model = os.environ.get("ATTNSCOPE_MODEL")
    if paths and not model:
        print("examples: set ATTNSCOPE_MODEL to the model the examples run on", file=sys.stderr)
        return 2
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        done = list(pool.map(lambda p: _do_page(p, model, args.check, args.match), paths))
    total = sum(t for t, _ in done)
    failed = sum(f for _, f in done)
    print(
        f"examples: {total - failed} of {total} command(s) ran as expected in {time.monotonic() - started:.0f} s",
        file=sys.stderr,
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
