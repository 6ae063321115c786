"""Human view of a MatrixResult: a shaded query x key heatmap with the causal triangle.

Rows are query positions (or groups), columns are key positions in the same order;
column headers give the index (tens digit above units digit) and the row labels double
as the legend. ``·`` marks cells the causal mask removes (the key is after the query).
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.text import Text

from attnscope.render import Ctx, heat_style, shade, view
from attnscope.render.common import model_line, span
from attnscope.render.i18n import Lang, t
from attnscope.results.matrix import MatrixResult


def _pad(label: str, width: int) -> str:
    return label + " " * max(0, width - cell_len(label))


def _clip(label: str, width: int) -> str:
    if cell_len(label) <= width:
        return label
    out = ""
    for ch in label:
        if cell_len(out + ch) > width - 1:
            break
        out += ch
    return out + "…"


def header(r: MatrixResult, lang: Lang) -> Text:
    text = Text()
    text.append(t(lang, "common.layer_head", layer=r.layer, head=r.head), style="bold")
    text.append(f" ({t(lang, 'common.kv_head', kv_head=r.kv_head)})", style="dim")
    start, end = r.window
    n = len(r.tokens)
    if (start, end) != (0, n):
        shown = t(lang, "matrix.positions", positions=span(lang, start, end - 1), n=n)
    else:
        shown = t(lang, "matrix.tokens", n=n)
    text.append(f"  {shown}, {t(lang, 'matrix.by.' + r.view.by)}\n", style="dim")
    if r.measure == "norm":
        text.append(t(lang, "matrix.measure_norm") + "\n", style="dim")
    text.append_text(model_line(lang, r.model))
    return text


def grid(r: MatrixResult, lang: Lang) -> Text:
    v = r.view
    n = len(v.groups)
    labels = [_clip(lab, 12) for lab in v.labels]
    idx_w = len(str(max(v.groups[-1][0], n))) if n else 1
    lab_w = max((cell_len(x) for x in labels), default=1)
    left = idx_w + 1 + lab_w + 1
    has_before = r.window[0] > 0
    before_w = 6 if has_before else 0
    # Rows and columns are numbered by token position (a block: its first), or by word.
    nums = list(range(n)) if v.by == "word" else [g[0] for g in v.groups]
    out = Text()
    # Column headers: tens digit on the first line, units digit on the second.
    if any(x >= 10 for x in nums):
        out.append(" " * (left + before_w))
        for x in nums:
            out.append(f" {x // 10 % 10}" if x >= 10 else "  ", style="dim")
        out.append("\n")
    out.append(" " * left + (f"<{r.window[0]}".rjust(5) + " " if has_before else ""), style="dim")
    for x in nums:
        out.append(f" {x % 10}", style="dim")
    out.append(f"   {t(lang, 'matrix.top.' + v.by)}\n", style="dim")
    for row in range(n):
        out.append(f"{nums[row]:>{idx_w}} ", style="dim")
        out.append(_pad(labels[row], lab_w) + " ")
        if has_before:
            b = v.before[row]
            out.append(f"{b:4.2f} ", style=heat_style(b))
            out.append("│", style="dim")
        last_query = v.groups[row][-1]
        best, best_c = -1.0, 0
        for c in range(n):
            if v.groups[c][0] > last_query:
                out.append(" ·", style="grey35")
                continue
            value = v.cells[row][c]
            out.append(shade(value) * 2, style=heat_style(value))
            if value > best:
                best, best_c = value, c
        out.append(f"  {_clip(labels[best_c], 10)} {best:.2f}" if best >= 0 else "", style="dim")
        out.append("\n")
    out.rstrip()
    out.no_wrap = True  # a wrapped grid is unreadable; a narrow terminal crops the right edge instead
    out.overflow = "crop"
    return out


def legend(r: MatrixResult, lang: Lang) -> Text:
    text = Text(t(lang, "matrix.scale"), style="dim")
    for ch, lo in (("░", "<0.38"), ("▒", "<0.63"), ("▓", "<0.88"), ("█", "≥0.88")):
        text.append(ch * 2, style=heat_style({"░": 0.25, "▒": 0.5, "▓": 0.75, "█": 1.0}[ch]))
        text.append(f" {lo}  ", style="dim")
    text.append(t(lang, "matrix.blank"), style="dim")
    if r.view.by in ("block", "word"):
        text.append("\n" + t(lang, "matrix.legend_" + r.view.by), style="dim")
    return text


def notes(r: MatrixResult, lang: Lang) -> list[str]:
    """How the drawn grid was made from the weights, from the result's facts."""
    out = []
    if r.by == "word":
        out.append(t(lang, "matrix.note_by_word"))
        if r.view.by == "block":
            out.append(t(lang, "matrix.note_too_many_words", n=len(r.words)))
    if r.view.by == "block":
        start, end = r.window
        out.append(t(lang, "matrix.note_condensed", n=end - start, size=len(r.view.groups[0])))
    start, end = r.window
    if start > 0:
        out.append(t(lang, "matrix.note_window", start=start, end=end, before=span(lang, 0, start - 1)))
    return out


@view.register
def render(r: MatrixResult, ctx: Ctx) -> RenderableType:
    lang = ctx.lang
    parts: list[RenderableType] = [header(r, lang), Text(""), grid(r, lang), Text(""), legend(r, lang)]
    for note in notes(r, lang):
        parts.append(Text(note, style="dim"))
    return Group(*parts)
