"""Pieces several figures share: the header lines, a bar chart block, token and word labels.

Every word comes from the catalogue (``attnscope.render.i18n``) in ``ctx.lang``; the
numbers come from the result. Nothing here computes attention.
"""

from __future__ import annotations

from attnscope.render import Ctx
from attnscope.render.figures.svg import BAR, DIM, FONT_SIZE, LINE, Svg, text_width
from attnscope.render.i18n import t
from attnscope.results.common import ModelInfo, Token, Word

ROW = round(FONT_SIZE * LINE)  # one text row
MARGIN = 14.0
WRAP = 1000.0  # a header or note line wider than this (in px) goes on over more lines


def wrapped(line: str, size: float = FONT_SIZE, width: float = WRAP) -> list[str]:
    """``line`` cut at spaces into lines no wider than ``width`` (a word wider than that stays whole)."""
    out: list[str] = []
    for word in line.split(" "):
        if out and text_width(out[-1] + " " + word, size) <= width:
            out[-1] += " " + word
        else:
            out.append(word)
    return out or [line]


BAR_PX = 240.0  # the bar of weight 1.0


def model_line(ctx: Ctx, m: ModelInfo) -> str:
    name = m.id.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1] if m.id.startswith(("/", ".", "~")) else m.id
    return t(
        ctx.lang,
        "figures.model",
        model=name,
        layers=m.num_hidden_layers,
        heads=m.num_attention_heads,
        kv=m.num_key_value_heads,
    )


def header(svg: Svg, ctx: Ctx, title: str, lines: list[str], y: float = MARGIN) -> float:
    """A bold title and dim lines under it; returns the y of the next free row's top."""
    y += 16
    svg.text(MARGIN, y, title, size=16, bold=True)
    y += 6
    for line in lines:
        for part in wrapped(line):
            y += ROW
            svg.text(MARGIN, y, part, fill=DIM)
    return y + ROW * 0.6


def key_label(tokens: list[Token], words: list[Word], members: list[int], by: str, ctx: Ctx) -> str:
    """A bar's label from its token indices: the token's readable form, or the word (cut at the query)."""
    if by != "word" or not members:
        return tokens[members[0]].label if members else ""
    word = words[tokens[members[0]].word]
    if len(members) < len(word.tokens):
        return f"{word.text} {t(ctx.lang, 'figures.to_query')}"
    return word.text


def chart_rows(
    svg: Svg,
    ctx: Ctx,
    y: float,
    rows: list[tuple[str, float | None, str, bool]],
    total: str,
    subtitle: str = "",
) -> float:
    """The note's chart: label, value, bar, mark per row, then a rule and the sum; returns the y below.

    ``rows`` holds (label, weight or None for an excluded key, mark, bold); ``total`` is the sum as shown.
    """
    if subtitle:
        y += ROW
        svg.text(MARGIN, y, subtitle, bold=True)
    label_w = max([text_width(lab) for lab, _, _, _ in rows] + [text_width(t(ctx.lang, "common.sum"))]) + 12
    value_x = MARGIN + label_w + text_width("0.00")  # right edge of the numbers
    bar_x = value_x + 10
    for label, weight, mark, bold in rows:
        y += ROW
        svg.text(MARGIN, y, label, bold=bold)
        svg.text(value_x, y, "-" if weight is None else f"{weight:.2f}", anchor="end")
        w = 0.0 if weight is None else max(0.0, min(1.0, weight)) * BAR_PX
        if w > 0:
            svg.rect(bar_x, y - FONT_SIZE * 0.8, w, FONT_SIZE * 0.9, BAR)
        if mark:
            svg.text(bar_x + max(w, 0) + 8, y, mark, fill=DIM)
    y += ROW * 0.6
    svg.line(value_x - text_width("0.00") - 4, y, value_x, y, stroke=DIM)
    y += ROW
    svg.text(MARGIN, y, t(ctx.lang, "common.sum"))
    svg.text(value_x, y, total, anchor="end")
    return y + ROW * 0.4


def notes(svg: Svg, y: float, lines: list[str]) -> float:
    for line in lines:
        for part in wrapped(line, 12):
            y += ROW
            svg.text(MARGIN, y, part, fill=DIM, size=12)
    return y
