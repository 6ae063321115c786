"""Every command on real checkpoints over a set of prompts: no run may end in an internal error.

The matrix is (model x prompt x command). The prompts are Korean, English, code, emoji, a
single character and a long one (600 tokens, longer than Gemma 3's 512-key window); the
commands are every row of the command table, each with arguments that fit the prompt (a
query and a key that occur in it, a one-token target, a corrupted copy for ``patch``, a
saved ``weights --json`` for ``render``). ``info`` reads no prompt and runs once per model.

Every run goes through the CLI in this process (``typer.testing.CliRunner``), and each model
is loaded once: :func:`loads_once` keeps the first load of each model and hands it to every
later command. A run's outcome is ``ok`` (exit 0), ``refused`` (an ``attnscope: error:``
line, the reason kept), ``internal`` (``attnscope: internal error``, exit 70), ``check`` (a
self-check of the numbers failed, exit 5), ``usage`` (Click refused the sweep's own arguments)
or ``crash`` (anything else: an exception out of the CLI, another exit status, a traceback);
all but the first two are what a sweep must never find.

``cheap=True`` (what the slow test, ``tests/acceptance/test_sweep.py``, runs) trims the
costly parts: the sweeps over layers (``ablate``, ``knockout``, ``patch``) run two layers
(``patch`` its head site only), ``explore`` draws no ablation (no target), ``reuse`` repeats
once, ``generate`` makes one token, ``stats`` draws 10 bootstrap replicates, and on the long
prompt ``flow`` keeps fewer parts. ``docs/sweep.md`` holds the tables of one run.

Usage::

    python -m attnscope.devtools.sweep MODEL.gguf [MODEL2.gguf ...] [--cheap] [--out DIR]
        [--only weights,heads] [--prompts korean,english] [--doc docs/sweep.md]
    python -m attnscope.devtools.sweep --from DIR/outcomes.jsonl [...] --doc docs/sweep.md

It prints, and writes to ``DIR/summary.md``, one table per model (prompt x command: ``ok``,
``refused (N)`` with the numbered reasons below it, or ``INTERNAL``), and exits 1 when any run
ended in an internal error or a crash. This module is not imported by the CLI.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LONG_TOKENS = 600

# A paragraph repeated (each copy numbered, so no two copies are the same tokens) up to
# LONG_TOKENS tokens of the model's own tokenizer; the query/key words occur in every copy.
_PARAGRAPH = (
    "Copy {n}: the old lighthouse keeper climbed the stairs every evening, lit the lamp, and wrote "
    "the weather in a small book; when the storm came, the ships saw the light and turned away "
    "from the rocks."
)


@dataclass(frozen=True)
class Prompt:
    """One prompt of the sweep, with the words the commands that need them read."""

    name: str
    text: str
    query: str  # occurs in text; its last token is the query
    key: str  # occurs in text before query (or is query itself)
    corrupt: str  # text with one word changed (patch's corrupted run)
    lang: str = "en"  # the view's language
    occurrence: int | None = None  # which occurrence of query (None: the only one)


PROMPTS: tuple[Prompt, ...] = (
    Prompt(
        "korean",
        "민수는 사과를 샀다. 그는 그것을 먹었다.",
        "그것을",
        "사과를",
        "민수는 포도를 샀다. 그는 그것을 먹었다.",
        "ko",
    ),
    Prompt(
        "english",
        "The cat sat on the mat because it was tired",
        "it",
        "cat",
        "The dog sat on the mat because it was tired",
    ),
    Prompt(
        "code",
        "def add(a, b):\n    return a + b\n\nprint(add(2, 3))",
        "print",
        "add",
        "def mul(a, b):\n    return a * b\n\nprint(mul(2, 3))",
    ),
    Prompt("emoji", "I love 🍕 and 🎉 with my 🐱!", "my", "🍕", "I love 🍣 and 🎉 with my 🐱!"),
    Prompt("char", "a", "a", "a", "b"),
)


def long_prompt(tokenizer: Any, tokens: int = LONG_TOKENS) -> Prompt:
    """The long prompt: copies of the paragraph, cut at a word boundary at ``tokens`` tokens of
    ``tokenizer`` (special tokens such as a BOS included)."""
    text = ""
    n = 1
    while len(tokenizer(text)["input_ids"]) < tokens:
        text += ("" if not text else " ") + _PARAGRAPH.format(n=n)
        n += 1
    words = text.split(" ")
    lo, hi = 1, len(words)
    while lo < hi:  # the most words whose tokens fit
        mid = (lo + hi + 1) // 2
        if len(tokenizer(" ".join(words[:mid]))["input_ids"]) <= tokens:
            lo = mid
        else:
            hi = mid - 1
    text = " ".join(words[:lo])
    corrupt = text[: text.rindex("storm")] + "flood" + text[text.rindex("storm") + len("storm") :]
    # the query is the last "ships", far past a 512-key window; the key is the first "lighthouse"
    return Prompt("long", text, "ships", "lighthouse", corrupt, occurrence=text.count("ships"))


@dataclass(frozen=True)
class Outcome:
    """One run: the command line (less the model), its status and what it said last on stderr."""

    model: str
    prompt: str
    command: str
    argv: list[str]
    status: (
        str  # ok | refused | internal | crash | check (a self-check failed) | usage (Click refused the sweep's argv)
    )
    exit_code: int
    line: str  # the error line (refused, internal) or the last stderr line
    seconds: float  # wall
    cpu: float  # this process's CPU seconds (every thread)


@dataclass
class Sweep:
    """The outcomes of one sweep, in run order."""

    outcomes: list[Outcome] = field(default_factory=list)

    def bad(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status in BAD]


Command = tuple[str, list[str]]


def commands(p: Prompt, work: Path, cheap: bool) -> list[Command]:
    """(name, argv after ``attnscope``, without ``--model``) for every command on prompt ``p``."""
    trim = cheap and p.name == "long"
    layers = ["--layer", "4,5"] if cheap else []  # a sliding and a full layer on Gemma 3
    weights_json = work / f"{p.name}.weights.json"
    half = max(1, len(p.text) // 2)
    prefix, suffix = (p.text, p.text) if len(p.text) < 2 else (p.text[:half], p.text[half:])
    corpus = work / f"{p.name}.jsonl"
    corpus.write_text(
        "".join(json.dumps({"prompt": t}, ensure_ascii=False) + "\n" for t in (p.text, p.corrupt)), encoding="utf-8"
    )
    lang = ["--lang", p.lang]
    query = ["--query", p.query, *(["--occurrence", str(p.occurrence)] if p.occurrence else [])]
    target = ["--target", "."]
    explore_query = ["--pos", "-1"] if p.occurrence else ["--query", p.query]  # explore takes no --occurrence
    explore_target = [] if cheap else target
    site = ["--site", "head"] if cheap else []  # the residual site patches every position: 600 runs a layer
    return [
        ("weights", ["weights", p.text, *query, *lang]),
        ("weights --json", ["weights", p.text, *query, "--layer", "all", "--head", "all", "--json"]),
        ("render", ["render", str(weights_json), *lang]),
        ("tokens", ["tokens", p.text, *lang]),
        ("mask", ["mask", p.text, p.corrupt[: max(1, len(p.corrupt) // 2)], *lang]),
        ("heads", ["heads", p.text, *query, "--key", p.key, *lang]),
        ("matrix", ["matrix", p.text, "--layer", "-1", "--head", "0", *lang]),
        ("trace", ["trace", p.text, *lang]),
        ("explain", ["explain", p.text, *query, "--layer", "-1", "--head", "0", *lang]),
        ("rope", ["rope", "--prompt", p.text, "--layer", "-1", *lang]),
        ("reuse", ["reuse", prefix, suffix, *(["--repeat", "1"] if cheap else []), *lang]),
        ("roles", ["roles", p.text, *lang]),
        ("generate", ["generate", p.text, "-n", "1" if cheap else "5", *lang]),
        ("explore", ["explore", p.text, *explore_query, "--output", str(work / f"{p.name}.html"), *explore_target]),
        ("ablate", ["ablate", p.text, *target, *layers, *lang]),
        ("knockout", ["knockout", p.text, *target, "--key", p.key, *(["--layers", "4,5"] if cheap else []), *lang]),
        ("patch", ["patch", "--clean", p.text, "--corrupt", p.corrupt, "--align", *target, *layers, *site, *lang]),
        ("flow", ["flow", p.text, *(["--threshold", "0.2"] if trim else []), *lang]),
        ("stats", ["stats", "--input", str(corpus), "--bootstrap", "10" if cheap else "100", *lang]),
    ]


@contextlib.contextmanager
def loads_once() -> Iterator[dict[tuple[str, ...], Any]]:
    """Within the block, ``capture.engine.load`` loads each model once and hands the same loaded
    model to every later call, and ``load_tokenizer`` does the same for each tokenizer (the CLI
    and the checks before a load import both from their modules when a command runs)."""
    import attnscope.core.tokenlist as tokenlist
    import attnscope.model as model_package
    from attnscope.capture import engine

    load_model, load_tokenizer = engine.load, model_package.load_tokenizer
    kept: dict[tuple[str, ...], Any] = {}

    def load(model: str | None, **kwargs: Any) -> Any:
        key = ("model", str(model), str(kwargs.get("device", "auto")), str(kwargs.get("dtype", "auto")))
        if key not in kept:
            kept[key] = load_model(model, **kwargs)
        return kept[key]

    def tokenizer(model: str | None = None, revision: str | None = None, *args: Any, **kwargs: Any) -> Any:
        key = ("tokenizer", str(model), str(revision))
        if key not in kept:
            kept[key] = load_tokenizer(model, revision, *args, **kwargs)
        return kept[key]

    engine.load = load  # type: ignore[assignment]
    model_package.load_tokenizer = tokenizer
    tokenlist.load_tokenizer = tokenizer  # type: ignore[attr-defined]
    try:
        yield kept
    finally:
        engine.load = load_model  # type: ignore[assignment]
        model_package.load_tokenizer = load_tokenizer
        tokenlist.load_tokenizer = load_tokenizer  # type: ignore[attr-defined]


_ERROR = ("attnscope: error: ", "attnscope: 오류: ")  # the error line's prefix, English and Korean
_INTERNAL = ("attnscope: internal error", "attnscope: 내부 오류")


def _status(exit_code: int, stderr: str, exc: BaseException | None) -> tuple[str, str]:
    if exc is not None:
        return "crash", f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
    lines = [line for line in stderr.splitlines() if line.strip()]
    last = lines[-1] if lines else f"exit {exit_code}"
    internal = [line for line in lines if line.startswith(_INTERNAL)]
    if internal or exit_code == 70:
        return "internal", internal[-1] if internal else last
    if "Traceback" in stderr:
        return "crash", last
    if exit_code == 0:
        return "ok", lines[-1] if lines else ""
    if exit_code == 5:
        return "check", last  # attnscope's own check of its numbers failed (exit 5)
    if exit_code == 2 and last.startswith("Error: "):
        return "usage", last  # Click's own usage error: the sweep's arguments are wrong
    prefix = next((p for p in _ERROR if last.startswith(p)), None)
    return ("crash", last) if prefix is None else ("refused", last[len(prefix) :])


def run_one(model: str, argv: Sequence[str]) -> tuple[str, int, str, float, float]:
    """Run ``attnscope ARGV --model MODEL`` in this process: (status, exit code, line, wall and
    CPU seconds)."""
    from typer.testing import CliRunner

    from attnscope.cli import app

    runner = CliRunner()
    start, cpu = time.perf_counter(), time.process_time()
    exc: BaseException | None = None
    try:
        res = runner.invoke(app, [*argv, "--model", model] if argv[0] != "render" else list(argv))
        code, stderr = res.exit_code, res.stderr
        if res.exception is not None and not isinstance(res.exception, SystemExit):
            exc = res.exception
        if argv[0] == "weights" and "--json" in argv and code == 0:
            _save_json(argv, res.stdout)
    except Exception as e:  # noqa: BLE001 - a crash is what the sweep reports
        code, stderr, exc = -1, "", e
    status, line = _status(code, stderr, exc)
    return status, code, line, time.perf_counter() - start, time.process_time() - cpu


_JSON_TARGETS: dict[str, Path] = {}


def _save_json(argv: Sequence[str], stdout: str) -> None:
    path = _JSON_TARGETS.get(argv[1])
    if path is not None:
        path.write_text(stdout, encoding="utf-8")


def sweep(
    models: Sequence[str],
    *,
    cheap: bool = False,
    only: Sequence[str] = (),
    prompts: Sequence[str] = (),
    work: Path | None = None,
    each: Callable[[Outcome], None] | None = None,
) -> Sweep:
    """Run the matrix on ``models`` (paths or hub ids); ``only``/``prompts`` pick commands and
    prompts by name (all when empty); ``each`` sees every outcome as it comes."""
    out = Sweep()
    with contextlib.ExitStack() as stack:
        folder = work or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="attnscope-sweep-")))
        stack.enter_context(loads_once())
        import attnscope.model as model_package

        for model in models:
            tokenizer = model_package.load_tokenizer(model)
            chosen = [p for p in (*PROMPTS, long_prompt(tokenizer)) if not prompts or p.name in prompts]
            runs: list[tuple[str, str, list[str]]] = [("-", "info", ["info"])]
            for p in chosen:
                _JSON_TARGETS[p.text] = folder / f"{p.name}.weights.json"
                runs += [(p.name, name, argv) for name, argv in commands(p, folder, cheap)]
            for prompt_name, name, argv in runs:
                if only and name not in only:
                    continue
                status, code, line, seconds, cpu = run_one(model, argv)
                outcome = Outcome(Path(model).name, prompt_name, name, argv, status, code, line, seconds, cpu)
                out.outcomes.append(outcome)
                if each is not None:
                    each(outcome)
    return out


BAD = ("internal", "crash", "usage", "check")


def _cells(mine: Sequence[Outcome]) -> tuple[dict[tuple[str, str], str], list[str]]:
    """(prompt, command) -> its cell, and the refusals' reasons in the order they were numbered."""
    reasons: list[str] = []
    cell: dict[tuple[str, str], str] = {}
    for o in mine:
        if o.status == "refused":
            if o.line not in reasons:
                reasons.append(o.line)
            cell[(o.prompt, o.command)] = f"refused ({reasons.index(o.line) + 1})"
        else:
            cell[(o.prompt, o.command)] = "ok" if o.status == "ok" else f"**{o.status.upper()}**"
    return cell, reasons


def _model_table(model: str, mine: Sequence[Outcome]) -> list[str]:
    cols = [n for n in dict.fromkeys(o.command for o in mine) if n != "info"]
    prompts = [p for p in dict.fromkeys(o.prompt for o in mine) if p != "-"]
    cell, reasons = _cells(mine)
    seconds, cpu = sum(o.seconds for o in mine), sum(o.cpu for o in mine)
    parts = [f"### {model}", "", f"{len(mine)} runs, {seconds:.0f} s in all ({cpu:.0f} CPU s)."]
    if ("-", "info") in cell:
        parts += ["", f"`info`: {cell[('-', 'info')]}."]
    parts += ["", "| prompt | " + " | ".join(f"`{n}`" for n in cols) + " |", "|---|" + "---|" * len(cols)]
    parts += [f"| {p} | " + " | ".join(cell.get((p, n), "-") for n in cols) + " |" for p in prompts]
    if reasons:
        parts += ["", "Refusals:", "", *(f"{i}. `{r}`" for i, r in enumerate(reasons, 1))]
    bad = [o for o in mine if o.status in BAD]
    if bad:
        parts += ["", "Internal errors, crashes and the sweep's own usage errors:", ""]
        parts += [f"- {o.prompt} `{o.command}`: `{o.line}`" for o in bad]
    return [*parts, ""]


def table(result: Sweep) -> str:
    """Markdown: per model, one row per prompt and one column per command, then the refusals."""
    parts: list[str] = []
    for model in dict.fromkeys(o.model for o in result.outcomes):
        parts += _model_table(model, [o for o in result.outcomes if o.model == model])
    return "\n".join(parts)


def page(result: Sweep, cheap: bool, note: str = "") -> str:
    """docs/sweep.md: what the sweep is, how to run it, and its tables."""
    prompts = ", ".join(f"{p.name} (`{p.text[:40]}`)".replace("\n", "\\n") for p in PROMPTS)
    return "\n".join(
        [
            "# The sweep: every command on the real checkpoints",
            "",
            "Every command on each real checkpoint of [the model families](models.md), over six prompts:",
            f"{prompts} and long ({LONG_TOKENS} tokens of the model's own tokenizer: copies of one",
            "paragraph, longer than Gemma 3's 512-key window; the query is its last `ships`).",
            "`ok`: exit 0. `refused (N)`: one `attnscope: error:` line, its reason numbered under the",
            "table. An internal error, a crash or a failed self-check (exit 5) is printed in bold and",
            "listed; the sweep exits 1 when there is one. The Korean prompt runs with `--lang ko`, so its refusals are worded in",
            "Korean.",
            "",
            "Written by `ATTNSCOPE_WRITE_SWEEP_DOC=1 ATTNSCOPE_SWEEP_PROMPTS=all python -m pytest tests/acceptance/test_sweep.py`",
            "(the slow test: the cheap settings, which `--cheap` gives the script), or by",
            "`python -m attnscope.devtools.sweep MODEL.gguf ... --doc docs/sweep.md`; each model is loaded",
            "once and every command runs through the CLI in that process. "
            + ("This run used the cheap settings." if cheap else "This run used the full settings.")
            + " The times are of one run on a shared 2-core machine.",
            "",
            table(result),
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m attnscope.devtools.sweep", description=__doc__.split("\n")[0])
    parser.add_argument("models", nargs="*", help="model paths (.gguf, folders) or hub ids")
    parser.add_argument(
        "--from", dest="logs", action="append", type=Path, default=[], help="run nothing: the table of saved outcomes"
    )
    parser.add_argument("--cheap", action="store_true", help="the slow test's trimmed settings")
    parser.add_argument(
        "--out", type=Path, default=None, help="folder for summary.md, outcomes.jsonl and the runs' files"
    )
    parser.add_argument("--only", default="", help="commands, comma-separated (default: all)")
    parser.add_argument("--prompts", default="", help="prompt names, comma-separated (default: all)")
    parser.add_argument("--doc", type=Path, default=None, help="also write the page docs/sweep.md here")
    parser.add_argument("--note", default="", help="a paragraph for the page, after its introduction")
    args = parser.parse_args(argv)
    out: Path | None = args.out
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    log = (out / "outcomes.jsonl").open("w", encoding="utf-8") if out is not None else None

    def each(o: Outcome) -> None:
        print(
            f"{o.model} {o.prompt} {o.command}: {o.status} ({o.seconds:.1f} s, {o.cpu:.1f} CPU s) {o.line}",
            file=sys.stderr,
            flush=True,
        )
        if log is not None:
            log.write(json.dumps(o.__dict__, ensure_ascii=False) + "\n")
            log.flush()

    if args.logs:
        result = Sweep(
            [Outcome(**json.loads(line)) for log_path in args.logs for line in log_path.open(encoding="utf-8")]
        )
        if args.doc is not None:
            args.doc.write_text(page(result, args.cheap, args.note), encoding="utf-8")
        print(table(result))
        return 1 if result.bad() else 0
    result = sweep(
        args.models,
        cheap=args.cheap,
        only=[c for c in args.only.split(",") if c],
        prompts=[p for p in args.prompts.split(",") if p],
        work=out,
        each=each,
    )
    text = table(result)
    print(text)
    if out is not None:
        (out / "summary.md").write_text(text, encoding="utf-8")
    if args.doc is not None:
        args.doc.write_text(page(result, args.cheap, args.note), encoding="utf-8")
    if log is not None:
        log.close()
    return 1 if result.bad() else 0


if __name__ == "__main__":
    raise SystemExit(main())
