"""Benchmark: the size of ``attnscope explore`` pages and the time Chromium takes to open them.

For each length T (tokens), a prompt of exactly T tokens is cut from a repeated Korean and
English text, the page is built on the model (every row of every layer and head), written,
and opened in headless Chromium (Debian's ``chromium`` via Playwright, every non-file
request blocked) until the page has drawn itself (``body[data-ready]``). Prints a Markdown
table; it asserts nothing.

    python bench/explore_page.py [--model PATH] [--lengths 64,256] [--reps 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

TEXT = (
    "민수는 사과를 샀다. 그는 그것을 먹었다. 영희는 배를 샀고, 철수는 그 배를 깎았다. "
    "The model reads every token before it and mixes in what it needs. "
)


def prompt_of(tokenizer: object, n: int) -> str:
    from attnscope.core.prompt.tokens import encode

    text = TEXT * (n // 20 + 2)
    enc = encode(tokenizer, text)
    cut = text[: enc.tokens[n - 1].end]
    while len(encode(tokenizer, cut).tokens) > n:
        cut = cut[:-1]
    return cut


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=os.environ.get("ATTNSCOPE_MODEL"))
    ap.add_argument("--lengths", default="64,256")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    if not args.model:
        sys.exit("give --model or set ATTNSCOPE_MODEL")
    from playwright.sync_api import sync_playwright

    from attnscope.capture.engine import load
    from attnscope.core.explore import explore
    from attnscope.core.prompt.tokens import encode
    from attnscope.render.explore import page

    loaded = load(args.model, device="cpu", dtype="float32")
    rows = []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=os.environ.get("ATTNSCOPE_CHROMIUM", "/usr/bin/chromium"))
        for n in (int(x) for x in args.lengths.split(",")):
            text = prompt_of(loaded.tokenizer, n)
            t0 = time.perf_counter()
            html = page(explore(loaded, text), "en")
            build = time.perf_counter() - t0
            path = Path(tmp) / f"p{n}.html"
            path.write_text(html, encoding="utf-8")
            opens, drawn = [], []
            for _ in range(args.reps):
                pg = browser.new_page(viewport={"width": 1400, "height": 900})
                blocked: list[str] = []
                pg.route(
                    "**/*",
                    lambda r, b=blocked: (
                        r.continue_() if r.request.url.startswith("file:") else (b.append(r.request.url), r.abort())
                    ),
                )
                t1 = time.perf_counter()
                pg.goto(path.as_uri())
                pg.wait_for_selector("body[data-ready]", timeout=30000)
                opens.append(time.perf_counter() - t1)
                drawn.append(pg.evaluate("window.attnscope.openMs") / 1000)
                assert not blocked, blocked
                pg.close()
            size = path.stat().st_size
            rows.append((len(encode(loaded.tokenizer, text).tokens), size, min(opens), min(drawn), build))
        browser.close()
    m = loaded.info
    print(f"model {m.id}: {m.num_hidden_layers} layers x {m.num_attention_heads} heads; best of {args.reps} opens")
    print()
    print("| tokens | page size | open: load to drawn (s) | of which decode + draw (s) | build (s) |")
    print("|---:|---:|---:|---:|---:|")
    for n, size, opened, drawn, build in rows:
        print(f"| {n} | {size / 1e6:.2f} MB | {opened:.2f} | {drawn:.2f} | {build:.1f} |")


if __name__ == "__main__":
    main()
