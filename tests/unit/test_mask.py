"""attnscope mask: the note's figure, real padded batches against eager, and a broken mask caught."""

from __future__ import annotations

from pathlib import Path

import pytest

from attnscope.core import maskgrid
from attnscope.render import Ctx, render, to_text
from attnscope.render.mask import pad_title

from support.notefigure import NOTE_FIGURE, NOTE_TITLES, grids
from support.notefigure import lines as _lines
from support.notorch import imported

ROOT = Path(__file__).resolve().parents[2]


KO = Ctx(lang="ko")


NOTE_DIR = ROOT.parent / "shared" / "seed"


def test_the_view_draws_the_notes_grids():
    text = to_text(render(maskgrid.illustration(), KO))
    assert len(grids(NOTE_FIGURE)) == 5  # the column numbers and four rows
    assert grids(text) == grids(NOTE_FIGURE)
    assert NOTE_TITLES in _lines(text)


def _note() -> str:
    if not NOTE_DIR.is_dir():
        pytest.skip("the note (shared/seed) is not beside this checkout")
    return "\n".join(_lines("\n".join(p.read_text(encoding="utf-8") for p in NOTE_DIR.glob("*.txt"))))


def test_figure_is_the_notes():
    assert NOTE_FIGURE in _note()


def test_the_views_sentences_are_not_the_notes():
    """The grids and their headings are the note's; every sentence around them is written anew."""
    note = _note()
    for side, pad in (("left", 1), ("right", 2), ("left", 0)):
        text = to_text(render(maskgrid.illustration(size=5, pad=pad, side=side), KO))
        figure = set(grids(text))
        words = [line for line in _lines(text) if line and line not in figure and "padding mask 추가" not in line]
        words += [line[len(m) :].strip() for line in _lines(text) for m in grids(line) if line[len(m) :].strip()]
        assert words and [line for line in words if line in note] == []


def test_illustration_grids_by_hand():
    r = maskgrid.illustration(size=5, pad=2, side="right")
    (seq,) = r.sequences
    assert seq.attention_mask == [1, 1, 1, 0, 0]
    assert seq.padded_rows == [3, 4]
    assert seq.causal == [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 0, 0], [1, 1, 1, 1, 0], [1, 1, 1, 1, 1]]
    # pad rows still see the real keys (and never a pad key): only their result is discarded
    assert seq.combined == [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 0, 0], [1, 1, 1, 0, 0], [1, 1, 1, 0, 0]]
    assert pad_title("ko", seq.padded_rows) == "위치 3, 4가 빈칸일 때 (padding mask 추가)"
    assert pad_title("en", seq.padded_rows) == "when positions 3, 4 are pads (padding mask added)"
    text = _lines(to_text(render(r, KO)))
    assert "3    1  1  1  1  .             3    -  -  -  -  -   빈칸 행이라 결과는 버린다" in text
    assert "4    1  1  1  1  1             4    -  -  -  -  -" in text
    assert text[-2:] == [
        "빈칸이 뒤쪽에 있으면 진짜 토큰의 행은 causal mask만으로도 빈칸을 보지 않는다.",
        "padding mask는 빈칸 행만 바꾸고, 그 행의 결과는 쓰지 않는다.",
    ]


def test_left_padding_needs_the_padding_mask():
    # Under left padding the causal grid alone lets real rows see the pads; the combined one does not.
    r = maskgrid.illustration(size=6, pad=3, side="left")
    (seq,) = r.sequences
    for i in range(3, 6):
        assert seq.causal[i][:3] == [1, 1, 1]
        assert seq.combined[i][:3] == [0, 0, 0]
        assert seq.combined[i][3 : i + 1] == [1] * (i - 2)
    assert pad_title("ko", seq.padded_rows) == "위치 0~2가 빈칸일 때 (padding mask 추가)"


def test_illustration_condensed():
    r = maskgrid.illustration(size=40, pad=5, max_size=8)
    assert r.shown_positions == [0, 1, 2, 3, 36, 37, 38, 39]
    text = to_text(render(r, KO), width=200)
    assert "…" in text and "40개 위치 중 처음 4개와 마지막 4개" in text
    assert len(r.sequences[0].combined) == 40  # JSON keeps every cell


def test_illustration_imports_nothing_heavy():
    # pydantic: typer 0.29 imports it to coerce every option (~0.23 s of start-up); the pin in
    # pyproject.toml keeps it out, and this test notices if it comes back.
    code = (
        "import sys\n"
        "sys.argv = ['attnscope', 'mask', '--size', '6', '--pad', '2', '--lang', 'ko']\n"
        "from attnscope.cli import main\n"
        "main()\n"
    )
    heavy, out = imported(code, ("torch", "transformers", "pydantic"))
    assert heavy == []
    assert "위치 0, 1이 빈칸일 때" in out.stdout
