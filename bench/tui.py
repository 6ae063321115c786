"""The ``attnscope tui`` benchmark: its four targets (docs/commands/tui.md, "Performance").

- first screen: a fresh ``attnscope tui PROMPT`` in a terminal (a tmux server of its own, 160x48)
  from launch until the first screen shows (polled every 20 ms), against the whole-process wall time
  of ``attnscope weights PROMPT`` (bench/process.py), interleaved, medians;
- key press: in one process, the app on a 256-token prompt (all 336 heads of the real model), each
  key from its Key event until the frame it causes is composed (``App._display``), measured with
  Textual's pilot;
- keys during ``g``: the same while 20 tokens are generated in the worker;
- memory: peak RSS of the whole process (``ru_maxrss`` of the child) for ``attnscope tui`` on a
  512-token prompt (opened, first screen, ``q``) against ``weights --layer all --head all`` on it.

The machine is shared: the load average is recorded beside each number.

    python bench/tui.py --model PATH.gguf [--out bench/results/tui.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import ROOT, facts, load_average, log  # noqa: E402
from process import run_once  # noqa: E402

SEED = "민수는 사과를 샀다. 그는 그것을 먹었다."
MORE = " 영희는 빵을 굽고 철수는 우유를 마셨다. 오늘은 비가 와서 우리는 집에 있었다."


def tmux(server: str, *args: str) -> str:
    return subprocess.run(["tmux", "-L", server, *args], capture_output=True, text=True, check=True).stdout


def tui_in_tmux(model: str, prompt: str, rss_file: Path) -> float:
    """Seconds from launch to the first screen; the process is then quit with q (its peak RSS in rss_file)."""
    server = f"attnscope-bench-{os.getpid()}"
    wrapped = [
        sys.executable,
        "-c",
        "import resource, subprocess, sys; rc = subprocess.run(sys.argv[2:]).returncode; "
        "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)); sys.exit(rc)",
        str(rss_file),
        sys.executable,
        "-m",
        "attnscope",
        "tui",
        prompt,
        "--model",
        model,
    ]
    script = f"unset COLUMNS LINES; cd {shlex.quote(str(ROOT))} && PYTHONPATH={shlex.quote(str(ROOT))} " + " ".join(
        shlex.quote(a) for a in wrapped
    )
    start = time.perf_counter()
    tmux(server, "-f", "/dev/null", "new-session", "-d", "-s", "b", "-x", "160", "-y", "48", script + "; sleep 30")
    try:
        while True:
            if "Q " in tmux(server, "capture-pane", "-t", "b", "-p") and "sum" in tmux(
                server, "capture-pane", "-t", "b", "-p"
            ):
                first = time.perf_counter() - start
                break
            if time.perf_counter() - start > 1200:
                raise RuntimeError("the first screen never showed")
            time.sleep(0.02)
        tmux(server, "send-keys", "-t", "b", "q")
        while not rss_file.exists() or not rss_file.read_text():
            time.sleep(0.1)
    finally:
        subprocess.run(["tmux", "-L", server, "kill-server"], capture_output=True, check=False)
    return first


def first_screen(model: str, runs: int) -> dict[str, Any]:
    tui, weights, loads = [], [], []
    with tempfile.TemporaryDirectory() as folder:
        for i in range(runs):
            loads.append(load_average())
            tui.append(tui_in_tmux(model, SEED, Path(folder) / f"rss{i}"))
            w = run_once(
                [sys.executable, "-m", "attnscope", "weights", SEED, "--model", model], env={"PYTHONPATH": str(ROOT)}
            )
            weights.append(w.wall_s)
            log(f"first screen {tui[-1]:.2f} s, weights {weights[-1]:.2f} s (load {loads[-1]:.1f})")
    t, w = statistics.median(tui), statistics.median(weights)
    return {"tui_first_screen_s": tui, "weights_wall_s": weights, "median_ratio": t / w, "load": loads, "target": 1.2}


def long_prompt(tokenizer: Any, n: int) -> str:
    text = SEED
    while len(tokenizer(text + MORE)["input_ids"]) <= n:
        text += MORE
    while len(tokenizer(text + " 끝.")["input_ids"]) <= n:
        text += " 끝."
    return text


def memory(model: str, prompt: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        rss = Path(folder) / "rss"
        load = load_average()
        tui_in_tmux(model, prompt, rss)
        tui_mb = int(rss.read_text()) / 1024
    w = run_once(
        [sys.executable, "-m", "attnscope", "weights", prompt, "--layer", "all", "--head", "all", "--model", model],
        env={"PYTHONPATH": str(ROOT)},
    )
    log(f"memory: tui {tui_mb:.0f} MB, weights {w.peak_rss_mb:.0f} MB")
    return {
        "tui_peak_rss_mb": tui_mb,
        "weights_peak_rss_mb": w.peak_rss_mb,
        "ratio": tui_mb / w.peak_rss_mb,
        "load": load,
        "target": 1.3,
    }


def keys(model: str, n_tokens: int) -> dict[str, Any]:
    """Key -> frame latencies in ms, quiet and during g."""
    from textual import events

    from attnscope.capture.engine import load
    from attnscope.tui.app import Browser
    from attnscope.tui.session import open_prompt

    loaded = load(model, device="cpu", dtype="float32")
    prompt = long_prompt(loaded.tokenizer, n_tokens)
    session = open_prompt(loaded, prompt, None)
    heads = loaded.info.num_hidden_layers * loaded.info.num_attention_heads
    log(f"keys: T = {session.n}, {heads} heads")
    marks: dict[str, float] = {}

    class Timed(Browser):
        def _display(self, screen: Any, renderable: Any) -> None:
            if renderable is not None and "key" in marks and "frame" not in marks:
                marks["frame"] = time.perf_counter()
            super()._display(screen, renderable)

    def hook(message: Any) -> None:
        if isinstance(message, events.Key) and "key" not in marks:
            marks["key"] = time.perf_counter()

    app = Timed(session, "en", loaded, max_new_tokens=20)
    quiet: dict[str, list[float]] = {}
    during: list[float] = []
    sequence = (
        ["left"] * 8
        + ["right"] * 8
        + ["k", "left", "left", "k"]
        + ["o"] * 4
        + ["down"] * 8
        + ["enter", "w", "w", "v", "m", "m"]
    )

    async def press(pilot: Any, key: str) -> float | None:
        marks.clear()
        await pilot.press(key)
        for _ in range(100):
            if "frame" in marks:
                break
            await asyncio.sleep(0.005)
        return None if "frame" not in marks else (marks["frame"] - marks["key"]) * 1000

    async def main() -> None:
        async with app.run_test(size=(160, 48), message_hook=hook) as pilot:
            await pilot.pause()
            for key in sequence:
                ms = await press(pilot, key)
                if ms is not None:
                    quiet.setdefault(key, []).append(ms)
            await pilot.press("v")
            await pilot.pause()
            await pilot.press("g")
            await pilot.pause()
            i = 0
            while app.busy:
                ms = await press(pilot, ["down", "up", "left", "right"][i % 4])
                i += 1
                if ms is not None:
                    during.append(ms)
                await asyncio.sleep(0.2)

    load_before = load_average()
    asyncio.run(main())
    every = [v for values in quiet.values() for v in values]
    log(
        f"keys: median {statistics.median(every):.0f} ms, max {max(every):.0f} ms; during g median {statistics.median(during):.0f} ms over {len(during)}"
    )
    return {
        "tokens": session.n,
        "heads": heads,
        "quiet_ms": quiet,
        "quiet_median_ms": statistics.median(every),
        "quiet_max_ms": max(every),
        "during_g_ms": during,
        "during_g_median_ms": statistics.median(during) if during else None,
        "during_g_max_ms": max(during) if during else None,
        "load": [load_before, load_average()],
        "target_ms": 100,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--model", default=os.environ.get("ATTNSCOPE_MODEL"), required=os.environ.get("ATTNSCOPE_MODEL") is None
    )
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "tui.json"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", choices=["first", "keys", "memory"], action="append")
    args = parser.parse_args()
    only = set(args.only or ["first", "keys", "memory"])
    out: dict[str, Any] = {"machine": facts()}
    if Path(args.out).is_file():
        out.update(json.loads(Path(args.out).read_text(encoding="utf-8")))
    if "first" in only:
        out["first_screen"] = first_screen(args.model, args.runs)
    if "keys" in only:
        out["keys"] = keys(args.model, 256)
    if "memory" in only:
        from attnscope.capture.engine import load

        prompt = long_prompt(load(args.model, device="cpu", dtype="float32").tokenizer, 512)
        out["memory"] = memory(args.model, prompt)
    Path(args.out).write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in out.items() if k != "machine"}, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
