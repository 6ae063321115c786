"""render.fit on hand-built tables and lines (no model): what goes first when the width runs out.

The width test (tests/integration/test_widths.py) runs every view; these pin each step on its own, with
outputs small enough to read: decoration, then padding, then headers wrapped between words, then
blocks led by the key column, then key above value; a path shortened in the middle; a glued
label and a Flow item never split.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Group
from rich.table import Table
from rich.text import Text

from attnscope.render import to_text
from attnscope.render.fit import FitColumns, Fitted, Flow, glue, middle, print_width


def table(headers: list[str], rows: list[list[str]], padding: int = 2) -> Table:
    out = Table(box=None, pad_edge=False, padding=(0, padding))
    for name in headers:
        out.add_column(name, no_wrap=True)
    for row in rows:
        out.add_row(*row)
    return out


def lines(renderable: object, width: int) -> list[str]:
    text = to_text(renderable, width=width)  # type: ignore[arg-type]
    out = [line.rstrip() for line in text.splitlines()]
    assert all(cell_len(line) <= width for line in out), out
    return out


ROWS = [["0", "0.1234", "█████████████", "민수는"], ["1", "0.5678", "███", "사과를"]]


def test_decoration_goes_first_then_nothing_else() -> None:
    fit = FitColumns(table(["#", "score", "", "word"], ROWS), [[2]])
    assert lines(fit, 60)[1] == "0    0.1234    █████████████    민수는"  # fits: all of it
    assert lines(fit, 30) == ["#    score     word", "0    0.1234    민수는", "1    0.5678    사과를"]


def test_a_legend_goes_with_the_decoration_it_describes() -> None:
    legend = Text("█ = the score as a bar")
    fit = FitColumns(table(["#", "score", "", "word"], ROWS), [[2]], legend=legend)
    assert lines(fit, 60)[-1] == "█ = the score as a bar"  # the bar is drawn: its legend too
    assert "█ = the score as a bar" not in lines(fit, 30)  # no bar, no legend


def test_headers_wrap_between_words_and_cells_stay_whole() -> None:
    rows = [["0", "0.12", "0.34"], ["1", "0.56", "0.78"]]
    fit = FitColumns(table(["레이어", "K 최대 차이", "뒷부분에 준 비율"], rows))
    got = lines(fit, 24)
    assert "…" not in "\n".join(got)
    assert got == [
        "       K 최대   뒷부분에",
        "레이어 차이     준 비율",
        "0      0.12     0.34",
        "1      0.56     0.78",
    ]
    for word in ("레이어", "K", "최대", "차이", "뒷부분에", "준", "비율"):
        assert any(word in line.split() for line in got), (word, got)


def test_a_wrapped_korean_header_keeps_its_last_word() -> None:
    """Rich strips a wrapped line's trailing space by characters, not cells: without the fix a
    Korean header line exactly as wide as its column lost its last word to '…'."""
    t = Table(box=None, pad_edge=False, padding=(0, 1))
    t.add_column("#", no_wrap=True)
    t.add_column("비율이 큰 키(고른 헤드의 평균)")
    t.add_row("0", "assistant 0.31")
    got = lines(FitColumns(t), 18)
    assert "…" not in "\n".join(got) and any("헤드의" in line for line in got), got


def test_too_wide_for_its_facts_goes_in_blocks_led_by_the_key() -> None:
    wide = table(
        ["index", "token id", "token", "offsets", "word"], [["0", "170", "[사 2/2][과 1/2]", "4:6", "1 사과를"]]
    )
    got = lines(FitColumns(wide), 30)
    text = "\n".join(got)
    blocks = [b.splitlines() for b in text.split("\n\n")]
    assert len(blocks) >= 2
    assert all(any(line.startswith("index ") for line in block) and block[-1].startswith("0 ") for block in blocks)
    for cell in ("170", "[사 2/2][과 1/2]", "4:6", "1 사과를"):
        assert cell in text


def test_key_above_value_when_even_one_column_does_not_fit_beside_it() -> None:
    t = table(["name", "value"], [["model output, head 2, before o_proj", "[+0.045 +0.009 +0.017 +0.006 …]"]])
    got = lines(FitColumns(t), 40)
    assert got[0].strip() == "value"
    assert "model output, head 2, before o_proj" in got
    assert "  [+0.045 +0.009 +0.017 +0.006 …]" in got


def test_a_path_is_shortened_in_the_middle_beside_its_label() -> None:
    path = "/root/.cache/attnscope-real/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    got = lines(Fitted(Group(Text(f"model {path}: 24 layers"))), 40)
    assert got[0].startswith("model /root/") and got[0].endswith("q4_k_m.gguf:") and "…" in got[0]
    assert middle(path, 20) == "/root/.cac…_k_m.gguf" and cell_len(middle(path, 20)) == 20
    assert print_width(Fitted(Group(Text(f"model {path}"))), is_terminal=False) >= len(path) + 6  # piped: whole


def test_glued_labels_and_flow_items_are_never_split() -> None:
    labels = ["민 1/3", "[수 2/2]는", "사 1/2", "[사 2/2][과 1/2]", "과 2/2", "를 1/3"] * 3
    glued = lines(Fitted(Group(Text("key  (" + " + ".join(glue(x) for x in labels) + ")"))), 40)
    flowed = lines(Flow([Text(x) for x in labels], "  "), 40)
    for got in (glued, flowed):
        text = "\n".join(got)
        assert "\ue000" not in text
        for label in labels:
            assert any(label in line for line in got), (label, got)
