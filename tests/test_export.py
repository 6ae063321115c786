"""--svg / --html: the files hold the same view, with Korean as text and the heat and bar colours kept."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from attnscope.render import heat_style

from conftest import SEED

HOT = "#ff3c00"  # heat_style(1.0) = rgb(255,60,0): the darkest heat cell


def _hex(style: str) -> str:
    r, g, b = (int(x) for x in re.findall(r"\d+", style))
    return f"#{r:02x}{g:02x}{b:02x}"


def svg_text(path) -> str:
    root = ET.parse(path).getroot()  # well-formed XML, or this raises
    return "".join("".join(el.itertext()) for el in root.iter() if el.tag.endswith("text")).replace("\xa0", " ")


def test_hot_colour_is_heat_style_of_one():
    assert _hex(heat_style(1.0)) == HOT


@pytest.mark.parametrize(
    "args, korean, glyph",
    [
        (["matrix", SEED, "--layer", "1", "--head", "2"], "민 1/3", "█"),  # row 0 attends only to itself: 1.0
        (["heads", SEED, "--query", "그것을", "--key", "사과를"], "사과를", "█"),  # the best head's cell
        (["weights", SEED, "--query", "그것을"], "그것을", "█"),  # the strip's darkest cell and the bars
    ],
)
def test_svg_and_html_keep_korean_and_colours(cli, model_dir, tmp_path, args, korean, glyph):
    svg, html = tmp_path / "v.svg", tmp_path / "v.html"
    res = cli(*args, "--model", str(model_dir), "--svg", str(svg), "--html", str(html))
    assert res.exit_code == 0, res.stderr
    text = svg_text(svg)
    assert korean in text and glyph in text
    assert "ìĤ" not in text and "\ufffd" not in text  # no byte-level BPE mojibake, no replacement char
    body = svg.read_text(encoding="utf-8")
    assert re.search(r"fill:\s*" + HOT, body), "the hottest heat colour is missing from the SVG"
    assert "Noto Sans Mono CJK KR" in body  # a font that has Hangul
    page = html.read_text(encoding="utf-8")
    assert korean.replace(" ", "&#160;") in page or korean in page
    assert re.search(r"color:\s*" + HOT, page)


def test_json_with_svg_writes_the_view_and_prints_json(cli, model_dir, tmp_path):
    svg = tmp_path / "m.svg"
    res = cli("matrix", SEED, "--layer", "0", "--head", "0", "--model", str(model_dir), "--json", "--svg", str(svg))
    assert res.exit_code == 0 and res.stdout.startswith('{"schema": "attnscope.matrix/2"')
    assert "민 1/3" in svg_text(svg)


def test_render_writes_svg_from_saved_json(cli, model_dir, tmp_path):
    saved = tmp_path / "h.json"
    saved.write_text(
        cli("heads", SEED, "--query", "그것을", "--key", "사과를", "--model", str(model_dir), "--json").stdout
    )
    svg = tmp_path / "h.svg"
    res = cli("render", str(saved), "--svg", str(svg))
    assert res.exit_code == 0
    assert "사과를" in svg_text(svg)


def test_unwritable_svg_path_is_one_line(cli, model_dir, tmp_path):
    res = cli("info", "--model", str(model_dir), "--svg", str(tmp_path / "no" / "such" / "dir.svg"))
    assert res.exit_code != 0 and "cannot write" in res.stderr
