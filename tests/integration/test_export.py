"""--svg / --html: a drawn figure (text elements, filled heat cells), and an HTML page holding the same SVG."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from attnscope.render.figures.svg import heat

from support import SEED

NS = "{http://www.w3.org/2000/svg}"


def svg_text(path) -> str:
    root = ET.parse(path).getroot()  # well-formed XML, or this raises
    return "\n".join("".join(el.itertext()) for el in root.iter(f"{NS}text"))


@pytest.mark.parametrize(
    "args, korean",
    [
        (["matrix", SEED, "--layer", "1", "--head", "2"], "0 민 1/3"),  # row 0 attends only to itself: 1.0
        (["heads", SEED, "--query", "그것을", "--key", "사과를"], "사과를"),  # the best head's cell is the scale's top
        (["weights", SEED, "--query", "그것을"], "그것을"),  # the strip's top cell
    ],
)
def test_svg_and_html_keep_korean_and_colours(cli, model_dir, tmp_path, args, korean):
    svg, html = tmp_path / "v.svg", tmp_path / "v.html"
    res = cli(*args, "--model", str(model_dir), "--svg", str(svg), "--html", str(html))
    assert res.exit_code == 0, res.stderr
    assert any(korean in line for line in svg_text(svg).split("\n"))
    body = svg.read_text(encoding="utf-8")
    assert "ìĤ" not in body and "\ufffd" not in body  # no byte-level BPE mojibake, no replacement char
    assert f'fill="{heat(1.0)}"' in body, "the top of the heat scale is not drawn as a filled cell"
    assert "textLength" not in body and "@font-face" not in body and "<image" not in body
    assert re.findall(r"https?://[^\"' ]*", body) == ["http://www.w3.org/2000/svg"]
    assert "Noto Sans CJK KR" in body and "Malgun Gothic" in body  # fonts that have Hangul
    page = html.read_text(encoding="utf-8")
    assert body in page  # the HTML holds the same figure


def test_json_with_svg_writes_the_figure_and_prints_json(cli, model_dir, tmp_path):
    svg = tmp_path / "m.svg"
    res = cli("matrix", SEED, "--layer", "0", "--head", "0", "--model", str(model_dir), "--json", "--svg", str(svg))
    assert res.exit_code == 0 and res.stdout.startswith('{"schema": "attnscope.matrix/2"')
    assert "0 민 1/3" in svg_text(svg).split("\n")


def test_render_writes_svg_from_saved_json(cli, model_dir, tmp_path):
    saved = tmp_path / "h.json"
    saved.write_text(
        cli("heads", SEED, "--query", "그것을", "--key", "사과를", "--model", str(model_dir), "--json").stdout
    )
    svg = tmp_path / "h.svg"
    res = cli("render", str(saved), "--svg", str(svg), "--lang", "ko")
    assert res.exit_code == 0
    assert "“그것을”이 “사과를”에 두는 비율, 레이어와 헤드마다" in svg_text(svg)


def test_info_has_no_picture_so_its_svg_is_its_text(cli, model_dir, tmp_path):
    svg = tmp_path / "i.svg"
    res = cli("info", "--model", str(model_dir), "--svg", str(svg))
    assert res.exit_code == 0
    words = svg_text(svg).split("\n")
    assert "num_hidden_layers" in " ".join(words)


@pytest.mark.parametrize("where", ["no/such/dir.svg", "."])
def test_unwritable_svg_path_is_one_line_and_leaves_nothing(cli, model_dir, tmp_path, where):
    before = sorted(tmp_path.rglob("*"))
    res = cli("info", "--model", str(model_dir), "--svg", str(tmp_path / where))
    assert res.exit_code != 0 and "cannot write" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and res.stdout == ""
    assert sorted(tmp_path.rglob("*")) == before
