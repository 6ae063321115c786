"""--svg / --html: a drawn figure (text elements, filled heat cells), and an HTML page holding the same SVG."""

from __future__ import annotations

from attnscope.render.figures.svg import heat


def test_heat_scale_ends():
    assert heat(0.0) == "#f7fbff" and heat(1.0) == "#08306b" and heat(2.0) == heat(1.0)
