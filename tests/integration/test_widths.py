"""Every command's view at widths 40, 60, 80 and 160, in English and Korean.

A narrow terminal may lose decoration (bars, shading strips, heat cells, padding) and may lay a
table out differently (headers wrapped between words, columns in blocks, a key above its
value), but it never cuts or drops a number, a word or a label. The reference is the same view
printed 400 columns wide, where nothing needs to fit:

- no line is wider than the width;
- every word printed narrow is a word of the wide view (a number cut to ``0.…``, a header cut to
  ``la…`` or a word broken into two lines leaves a piece that is not), except the lines a view
  prints only when it narrows (they are read from the catalogue) and a path shortened in the
  middle (``/tmp/…/model``);
- every word of the wide view (shorter than the width) is printed narrow too, except the header
  of a decoration column a view drops (mask says in a line when it draws fewer positions);
- every token label that holds a space (``민 1/3``) and is printed whole wide stays on one line.

Korean headers are two cells a character, so they are the first to be cut; both languages run.
Piped output takes the view's own width, so a long path stays whole.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len
from rich.console import RenderableType

from attnscope.render import Ctx, to_text, view
from attnscope.render.fit import FitColumns
from attnscope.render.i18n import Lang, catalogue
from attnscope.results import from_json

from support import SEED
from support.commands import COMMANDS, MODEL

WIDTHS = (40, 60, 80, 160)
WIDE = 400
LANGS: tuple[Lang, ...] = ("en", "ko")

CASES = {
    **COMMANDS,
    "generate": ["generate", "민수는 사과를 샀다.", "--chat", "-n", "4", "--model", MODEL],
    "tokens-chat": ["tokens", "민수는 사과를 샀다.", "--chat", "--model", MODEL],
    "trace-chat": ["trace", "민수는 사과를 샀다.", "--chat", "--model", MODEL],
    "ablate": ["ablate", SEED, "--target", ".", "--key", "사과를", "--model", MODEL],
    "ablate-approx": ["ablate", SEED, "--target", ".", "--approx", "--check", "3", "--model", MODEL],
    "knockout": [
        "knockout",
        SEED,
        "--target",
        ".",
        "--key",
        "사과를",
        "--query",
        "그것을",
        "--window",
        "2",
        "--model",
        MODEL,
    ],
    "flow": ["flow", SEED, "--threshold", "0.01", "--verify", "3", "--model", MODEL],
    "flow-heads-word": ["flow", SEED, "--threshold", "0.01", "--heads", "--by", "word", "--model", MODEL],
    "patch": [
        "patch",
        "--clean",
        "민수는 사과를 샀다. 그는 그것을",
        "--corrupt",
        "지수는 사과를 샀다. 그는 그것을",
        "--target",
        " 그",
        "--site",
        "head,resid,k",
        "--model",
        MODEL,
    ],
}

# Lines a view prints only when it narrows: their words may be new at a narrow width.
NARROW_ONLY = ("mask.narrowed", "matrix.cropped", "matrix.col_row", "matrix.col_weight")
DECORATION = set(" ░▒▓█▏▎▍▌▋▊▉·│+")  # a lone + marks a positive effect beside its signed number
NUMBER = r"[\d.,~+-]+"  # what a placeholder of a narrow-only line stands for


def words(text: str) -> set[str]:
    """The whitespace-separated words of ``text``, less those drawn only with shading glyphs."""
    return {w for w in text.split() if not set(w) <= DECORATION and not set(w) & set("░▒▓█")}


def narrow_only(lang: Lang) -> list[re.Pattern[str]]:
    """One pattern per word of the narrow-only lines, each placeholder standing for a number."""
    out = [re.compile("#")]
    for key in NARROW_ONLY:
        for word in catalogue(lang)[key].split():
            parts = re.split(r"\{[^}]*\}", word)
            out.append(re.compile(NUMBER.join(re.escape(p) for p in parts)))
    return out


def shortened_path(word: str, wide: set[str]) -> bool:
    """``word`` is a word of the wide view with a path's middle replaced by ``…``."""
    head, _, tail = word.partition("…")
    return bool(head and tail) and any(
        ("/" in w or "\\" in w) and w.startswith(head) and w.endswith(tail) and len(head) + len(tail) < len(w)
        for w in wide
    )


def dropped_headers(renderable: Any) -> set[str]:
    """Words of the headers (and legends) of the decoration columns a view may drop (FitColumns), anywhere in it."""
    found: set[str] = set()
    stack = [renderable]
    while stack:
        item = stack.pop()
        if isinstance(item, FitColumns):
            for group in item.decoration:
                for i in group:
                    found |= set(str(item.table.columns[i].header).split())
            if item.legend is not None:  # the legend goes with its decoration
                found |= set(to_text(item.legend, width=400).split())
            stack.append(item.table)
        for attr in ("renderable", "renderables", "table", "otherwise"):
            child = getattr(item, attr, None)
            if isinstance(child, list):
                stack.extend(child)
            elif child is not None and child is not item:
                stack.append(child)
    return found


def labels(result: Any) -> list[str]:
    """The token labels of a result that hold a space (``민 1/3``): they must never be split."""
    return sorted({t.label for t in getattr(result, "tokens", []) if " " in t.label})


def problems(result: Any, lang: Lang, width: int, draw: Callable[[Any, Ctx], RenderableType] = view) -> list[str]:
    """What is wrong with ``draw(result)`` at ``width`` against the same view 400 columns wide."""
    wide_text = to_text(draw(result, Ctx(lang=lang, width=WIDE)), width=WIDE)
    shown = draw(result, Ctx(lang=lang, width=width))
    text = to_text(shown, width=width)
    wide, narrow = words(wide_text), words(text)
    out = [f"wider than {width}: {line!r}" for line in text.splitlines() if cell_len(line.rstrip()) > width]
    allowed = narrow_only(lang)
    cut = sorted(w for w in narrow - wide if not any(p.fullmatch(w) for p in allowed) and not shortened_path(w, wide))
    if cut:
        out.append(f"cut or broken words (not in the wide view): {cut[:12]}")
    narrowed = any(p.search(text) for p in (re.compile(r"\(narrowed to"), re.compile(r"\(너비 \d+칸에")))
    if not narrowed:
        lost = sorted(w for w in wide - narrow - dropped_headers(shown) if cell_len(w) < width)
        if lost:
            out.append(f"words lost: {lost[:12]}")
        lines = text.splitlines()
        split = [x for x in labels(result) if x in wide_text and not any(x in line for line in lines)]
        if split:
            out.append(f"labels split across lines: {split[:6]}")
    return out


@pytest.fixture(scope="module")
def results(model_dir: Path) -> dict[str, Any]:
    from typer.testing import CliRunner

    from attnscope.cli import app

    runner = CliRunner()
    out = {}
    for name, args in sorted(CASES.items()):
        argv = [a.replace(MODEL, str(model_dir)) for a in args]
        res = runner.invoke(app, [*argv, "--json"], catch_exceptions=False)
        assert res.exit_code == 0, (name, res.stderr)
        out[name] = from_json(json.loads(res.stdout))
    return out


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_no_number_word_or_label_is_cut(results: dict[str, Any], name: str, lang: Lang, width: int) -> None:
    assert problems(results[name], lang, width) == []


def test_the_check_finds_a_cut_header_and_a_split_label(results: dict[str, Any]) -> None:
    """The checks above can fail: a table Rich squeezes into 40 columns, or a label broken by wrapping."""
    from rich.table import Table
    from rich.text import Text

    def squeezed(r: Any, ctx: Ctx) -> RenderableType:
        table = Table(box=None)
        for name in ("index", "token id", "token", "offsets", "word"):
            table.add_column(name, no_wrap=True)
        for tok in r.tokens:
            table.add_row(str(tok.index), str(tok.id), tok.label, f"{tok.start}:{tok.end}", r.words[tok.word].text)
        return table

    def flowing(r: Any, ctx: Ctx) -> RenderableType:
        return Text("  ".join(tok.label for tok in r.tokens))

    tokens = results["tokens"]
    assert any("cut or broken" in p for p in problems(tokens, "en", 40, squeezed))
    assert any("split across lines" in p for p in problems(tokens, "ko", 40, flowing))
    assert problems(tokens, "ko", 40) == []


def test_heads_drops_the_bar_then_the_strip(results: dict[str, Any]) -> None:
    wide = to_text(view(results["heads"], Ctx(width=160)), width=160)
    narrow = to_text(view(results["heads"], Ctx(width=40)), width=40)
    assert "█" in wide and "█" not in narrow.split("top")[1].split("\n\n")[0]
    score = re.compile(r"\b0\.\d\d\b")
    assert score.findall(narrow) and set(score.findall(wide)) <= set(score.findall(narrow)) | {"0.00"}


def test_a_table_too_wide_for_its_facts_goes_in_blocks(results: dict[str, Any]) -> None:
    """tokens at 40 columns: no column dropped, the word column in a block of its own under the rest,
    each block led by the index column."""
    text = to_text(view(results["tokens"], Ctx(width=40)), width=40)
    blocks = [b for b in text.split("\n", 1)[1].split("\n\n") if b.strip()]  # after the summary line
    assert len(blocks) == 2
    first, second = (b.splitlines()[0].split() for b in blocks)
    assert first[:2] == ["index", "id"] and second == ["index", "word"]


def test_piped_output_keeps_the_path_whole(cli: Any, model_dir: Path) -> None:
    res = cli("weights", SEED, "--model", str(model_dir))  # CliRunner's stdout is not a terminal
    assert res.exit_code == 0, res.stderr
    assert any(str(model_dir) in line for line in res.stdout.splitlines())
    res = cli("info", "--model", str(model_dir))
    assert res.exit_code == 0, res.stderr
    assert any(str(model_dir) in line for line in res.stdout.splitlines())


def test_a_long_path_is_shortened_in_the_middle(results: dict[str, Any]) -> None:
    from dataclasses import replace

    long = "/very/long/folder/of/checkpoints/that/a/user/downloaded/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    info = replace(results["info"], model=long)
    for lang in LANGS:
        text = to_text(view(info, Ctx(lang=lang, width=60)), width=60)
        first = text.splitlines()[0]
        assert first.startswith("/very/long/") and first.endswith("q4_k_m.gguf") and "…" in first
        assert cell_len(first) <= 60


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", ["trace", "trace-chat", "generate"])
def test_trace_and_generate_rows_stay_whole_at_100(results: dict[str, Any], name: str, lang: Lang) -> None:
    """At 100 columns each stage of trace and each answer token of generate is one line: a table
    too wide goes on in a second block (its key columns repeated); no cell wraps onto a line of
    its own and a vector is never broken."""
    text = to_text(view(results[name], Ctx(lang=lang, width=100)), width=100)
    lines = text.splitlines()
    assert all(cell_len(line.rstrip()) <= 100 for line in lines)
    assert [line for line in lines if re.match(r" {2,}\S", line)] == []  # a wrapped cell's continuation
    assert all(line.count("[") == line.count("]") for line in lines)  # vectors whole


def test_formulas_and_parenthesised_groups_never_break_inside(results: dict[str, Any]) -> None:
    from attnscope.render.fit import GLUE, glue_formulas

    assert glue_formulas("i + d/2번째 칸") == f"i{GLUE}+{GLUE}d/2번째 칸"
    assert glue_formulas("(K·V 헤드 2개) 뒤") == f"(K·V{GLUE}헤드{GLUE}2개) 뒤"
    rope = results["rope"]
    for width in (40, 52, 60, 80, 100):
        text = to_text(view(rope, Ctx(lang="ko", width=width)), width=width)
        assert any("i + d/2번째" in line for line in text.splitlines()), width


def test_piped_output_follows_columns(cli: Any, model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    res = cli("trace", SEED, "--model", str(model_dir), "--lang", "ko")  # CliRunner's stdout is not a terminal
    assert res.exit_code == 0, res.stderr
    assert max(cell_len(line) for line in res.stdout.splitlines()) <= 100
    monkeypatch.setenv("COLUMNS", "160")
    wide = cli("trace", SEED, "--model", str(model_dir), "--lang", "ko")
    assert max(cell_len(line) for line in wide.stdout.splitlines()) > 100


def test_every_command_with_a_view_has_a_run_here() -> None:
    """The run list a new command joins (docs/development.md, "Adding a command"): each view is
    measured at every width in both languages."""
    from attnscope.commands import COMMANDS as TABLE

    assert {args[0] for args in CASES.values()} == {row.name for row in TABLE if row.view is not None}
