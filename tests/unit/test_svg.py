"""The figures' SVG builder: wide characters measured as wide, text escaped, no URL but the namespace."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from attnscope.render.figures.svg import FONT_SIZE, Svg, clip, text_width


def test_hangul_and_cjk_count_as_wide():
    assert text_width("민수는") == 3 * FONT_SIZE  # one em per syllable
    assert text_width("我们") == 2 * FONT_SIZE
    assert text_width("abc") < text_width("민수는") and text_width("abc") == 3 * 0.62 * FONT_SIZE
    assert text_width("🍎") > FONT_SIZE
    assert text_width("e\u0301") == text_width("e")  # a combining accent takes no room
    # the shading and rules of the text views: the CJK font named first draws each an em wide
    assert text_width("░▒▓█") == text_width("│─") * 2 == 4 * FONT_SIZE


def test_clip_fits_with_an_ellipsis():
    label = "그것을먹었다그것을먹었다"
    cut = clip(label, 5 * FONT_SIZE)
    assert cut.endswith("…") and text_width(cut) <= 5 * FONT_SIZE and label.startswith(cut[:-1])
    assert clip("짧다", 100) == "짧다"


def test_text_is_escaped_and_invisible_characters_shown():
    svg = Svg(title="<t>")
    svg.text(0, 10, "a<b>&\x01\u2028 사과")
    doc = svg.to_string()
    root = ET.fromstring(doc)  # well-formed although the text held < > & and a control character
    texts = ["".join(el.itertext()) for el in root.iter("{http://www.w3.org/2000/svg}text")]
    assert texts == ["a<b>&\\x01\\u2028 사과"]
    assert re.findall(r"[a-z]+://[^\"']*", doc) == ["http://www.w3.org/2000/svg"]
    assert "textLength" not in doc and "Noto Sans CJK KR" in doc


def test_size_grows_with_what_is_drawn():
    svg = Svg()
    svg.rect(10, 20, 30, 40, "#000000")
    svg.text(100, 50, "민수는", anchor="end")
    assert svg.width == 100 and svg.height == 60


def test_a_long_header_line_is_wrapped_at_spaces_and_reads_the_same():
    from attnscope.render.figures.common import WRAP, wrapped

    line = "잔차 스트림은 위치마다 레이어를 지날 때마다 결과를 더해 가는 벡터다. " * 6
    parts = wrapped(line.strip())
    assert len(parts) > 1 and all(text_width(p) <= WRAP for p in parts)
    assert " ".join(parts) == line.strip()
    assert wrapped("clean   “민수는”") == ["clean   “민수는”"]  # a short line keeps its spaces
