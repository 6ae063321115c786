"""A small SVG builder for attnscope's figures: text measured by the figure, rectangles, a heat scale.

Text widths are estimated from each character's East Asian width class
(``unicodedata.east_asian_width``): a Hangul syllable, a CJK ideograph, a fullwidth
form or a box-drawing or block character (│, ░, which the CJK font draws an em wide) counts as
one em, an emoji a little more, combining marks nothing, and every other
character a generous 0.62 em, so a label laid out from these widths never overlaps its
neighbour in the fonts named in :data:`FONT_FAMILY`. The builder writes plain SVG 1.1:
no script, no external font, no URL but the SVG namespace. It knows nothing about
attention; the figure modules lay out results with it.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from xml.sax.saxutils import escape, quoteattr

FONT_FAMILY = '"Noto Sans CJK KR", "Noto Sans KR", "Apple SD Gothic Neo", "Malgun Gothic", "DejaVu Sans", sans-serif'
FONT_SIZE = 13.0
LINE = 1.6  # a text row's height in em: taller than a CJK font's ascent + descent (about 1.45 em)
INK = "#1f2328"
DIM = "#59636e"
BAR = "#3b6fb6"
GRID = "#d0d7de"
PAPER = "#ffffff"

# A sequential scale from paper white to dark blue (ColorBrewer "Blues"), 0 -> 1.
_STOPS = [
    (0.0, (247, 251, 255)),
    (0.125, (222, 235, 247)),
    (0.25, (198, 219, 239)),
    (0.375, (158, 202, 225)),
    (0.5, (107, 174, 214)),
    (0.625, (66, 146, 198)),
    (0.75, (33, 113, 181)),
    (0.875, (8, 81, 156)),
    (1.0, (8, 48, 107)),
]


def char_em(ch: str) -> float:
    """Estimated advance of one character, in em."""
    if unicodedata.combining(ch) or ch in "\u200b\u200c\u200d\ufe0f\ufe0e":
        return 0.0
    code = ord(ch)
    if code >= 0x1F000 or 0x2600 <= code <= 0x27BF:
        return 1.25  # emoji and pictographs: colour emoji fonts are wider than an em
    if unicodedata.east_asian_width(ch) in ("W", "F") or 0x2500 <= code <= 0x259F:
        return 1.0  # box drawing and block elements (│, ░, █) too: the CJK font named first draws them an em wide
    if ch == " ":
        return 0.33
    return 0.62


_INVISIBLE = ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn")


def _shown(ch: str) -> str:
    """A character as a figure shows it: control, format and unassigned characters escaped
    (they have no glyph and some are not allowed in XML); joiners kept for emoji sequences."""
    if ch in "\u200c\u200d" or unicodedata.category(ch) not in _INVISIBLE:
        return ch
    return f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"


def text_width(text: str, size: float = FONT_SIZE) -> float:
    """Estimated width of ``text`` at ``size`` px (never less than the real one in the fonts we name)."""
    return sum(char_em(ch) for ch in text) * size


def clip(text: str, max_width: float, size: float = FONT_SIZE) -> str:
    """``text`` cut with … so that it fits ``max_width`` px."""
    if text_width(text, size) <= max_width:
        return text
    out = ""
    for ch in text:
        if text_width(out + ch + "…", size) > max_width:
            break
        out += ch
    return out + "…"


def heat(frac: float) -> str:
    """The heat colour of ``frac`` in 0..1 (clamped), as #rrggbb."""
    f = max(0.0, min(1.0, frac))
    for (a, ca), (b, cb) in zip(_STOPS, _STOPS[1:], strict=False):
        if f <= b:
            u = (f - a) / (b - a)
            r, g, bl = (round(x + (y - x) * u) for x, y in zip(ca, cb, strict=True))
            return f"#{r:02x}{g:02x}{bl:02x}"
    return "#08306b"


def ink_on(frac: float) -> str:
    """Text colour readable on the heat colour of ``frac``."""
    return PAPER if frac > 0.55 else INK


def num(x: float) -> str:
    """A coordinate, short."""
    return f"{x:.1f}".rstrip("0").rstrip(".")


@dataclass
class Svg:
    """Elements in drawing order; ``width``/``height`` grow with what is drawn."""

    title: str = ""
    parts: list[str] = field(default_factory=list)
    width: float = 0.0
    height: float = 0.0

    def _grow(self, x: float, y: float) -> None:
        self.width = max(self.width, x)
        self.height = max(self.height, y)

    def text(
        self,
        x: float,
        y: float,
        text: str,
        *,
        size: float = FONT_SIZE,
        anchor: str = "start",
        fill: str = INK,
        bold: bool = False,
        cls: str = "",
        rotate: float = 0.0,
    ) -> float:
        """Draw ``text`` with its baseline at ``y``; returns its estimated width."""
        text = "".join(_shown(ch) for ch in text)
        w = text_width(text, size)
        attrs = f'x="{num(x)}" y="{num(y)}"'
        if size != FONT_SIZE:
            attrs += f' font-size="{num(size)}"'
        if anchor != "start":
            attrs += f' text-anchor="{anchor}"'
        if fill != INK:
            attrs += f' fill="{fill}"'
        if bold:
            attrs += ' font-weight="bold"'
        if cls:
            attrs += f' class="{cls}"'
        if rotate:
            attrs += f' transform="rotate({num(rotate)} {num(x)} {num(y)})"'
            self._grow(x + size, y)
        else:
            right = {"start": x + w, "middle": x + w / 2, "end": x}[anchor]
            self._grow(right, y + size * 0.4)
        self.parts.append(f"<text {attrs}>{escape(text)}</text>")
        return w

    def rect(
        self, x: float, y: float, w: float, h: float, fill: str, *, stroke: str = "", title: str = "", cls: str = ""
    ) -> None:
        attrs = f'x="{num(x)}" y="{num(y)}" width="{num(w)}" height="{num(h)}" fill="{fill}"'
        if stroke:
            attrs += f' stroke="{stroke}" stroke-width="0.5"'
        if cls:
            attrs += f' class="{cls}"'
        self._grow(x + w, y + h)
        if title:
            self.parts.append(f"<rect {attrs}><title>{escape(title)}</title></rect>")
        else:
            self.parts.append(f"<rect {attrs}/>")

    def line(self, x1: float, y1: float, x2: float, y2: float, stroke: str = GRID, width: float = 1.0) -> None:
        self._grow(max(x1, x2), max(y1, y2))
        self.parts.append(
            f'<line x1="{num(x1)}" y1="{num(y1)}" x2="{num(x2)}" y2="{num(y2)}" stroke="{stroke}" '
            f'stroke-width="{num(width)}"/>'
        )

    def heat_legend(self, x: float, y: float, top: float, caption: str, steps: int = 5) -> float:
        """A row of ``steps`` swatches labelled 0..top, then ``caption``; returns the y below it."""
        sw = 34.0
        for i in range(steps):
            frac = i / (steps - 1)
            self.rect(x + i * sw, y, sw, 12, heat(frac), stroke=GRID)
            self.text(x + i * sw + sw / 2, y + 12 + FONT_SIZE * 1.2, f"{top * frac:.2f}", size=11, anchor="middle")
        self.text(x + steps * sw + 10, y + 11, caption, size=11, fill=DIM)
        return y + 12 + FONT_SIZE * 1.2 + 8

    def to_string(self, margin: float = 12.0) -> str:
        w, h = self.width + margin, self.height + margin
        title = f"<title>{escape(self.title)}</title>" if self.title else ""
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{num(w)}" height="{num(h)}" '
            f'viewBox="0 0 {num(w)} {num(h)}" font-family={quoteattr(FONT_FAMILY)} '
            f'font-size="{num(FONT_SIZE)}" fill="{INK}">'
            f"{title}"
            f'<rect x="0" y="0" width="{num(w)}" height="{num(h)}" fill="{PAPER}"/>' + "".join(self.parts) + "</svg>\n"
        )


def html_page(svg: str, title: str, lang: str) -> str:
    """A minimal self-contained HTML page that shows one SVG figure."""
    return (
        f'<!DOCTYPE html>\n<html lang="{lang}"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title>"
        "<style>body{margin:16px;background:#fff}svg{max-width:100%;height:auto}</style>"
        f"</head><body>\n{svg}</body></html>\n"
    )
