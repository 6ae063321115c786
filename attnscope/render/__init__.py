"""Rich rendering: turns a result object into a renderable. The only place rich is imported.

``view(result, ctx)`` is the terminal view of any result, dispatched on the result's
type (``functools.singledispatch``), and ``figure(result, ctx)`` is the same dispatch for
SVG figures. Neither module registers itself: on the first view or figure of a result type,
:func:`load_views` registers that type's row of the command table (``attnscope.commands``),
its view and its figure (``load_views()`` registers every row, so a row whose view is missing
is an import error).
``Ctx`` carries what a face needs besides the result:
the language (every word comes from ``attnscope.render.i18n``) and the width to fit.
``console()`` makes the console the CLI prints to and ``export()`` writes a result's
figure as SVG, or as HTML that embeds it. Nothing here computes numbers beyond rounding and scaling for display.
"""

from __future__ import annotations

import functools
import io
from dataclasses import dataclass
from typing import IO

from rich.console import Console, RenderableType

from attnscope.errors import AttnscopeError
from attnscope.render.i18n import Lang, default_lang
from attnscope.results import Result


@dataclass(frozen=True)
class Ctx:
    """What a face needs besides the result: its language and the width it must fit (None: no limit)."""

    lang: Lang = "en"
    width: int | None = None

    @classmethod
    def default(cls) -> Ctx:
        return cls(lang=default_lang())


SHADES = " ░▒▓█"
EIGHTHS = " ▏▎▍▌▋▊▉█"


def bar(weight: float, width: int = 30) -> str:
    """A horizontal bar of ``weight * width`` cells, in eighths of a cell."""
    cells = max(0.0, min(1.0, weight)) * width
    full = int(cells)
    rest = int(round((cells - full) * 8))
    if rest == 8:
        full, rest = full + 1, 0
    return "█" * full + (EIGHTHS[rest] if rest else "")


def shade(value: float, top: float = 1.0) -> str:
    """One shading character for ``value`` on a 0..top scale (works with no colour)."""
    if top <= 0 or value <= 0:
        return SHADES[0]
    level = min(len(SHADES) - 1, int(round(value / top * (len(SHADES) - 1))))
    return SHADES[max(1, level)] if value > 0.005 * top else SHADES[0]


def heat_style(value: float, top: float = 1.0) -> str:
    """A colour for a heat cell (ignored when colour is off)."""
    frac = 0.0 if top <= 0 else max(0.0, min(1.0, value / top))
    if frac < 0.005:
        return "grey35"
    r = int(40 + 215 * frac)
    g = int(60 + 120 * (1 - abs(frac - 0.5) * 2))
    b = int(200 * (1 - frac))
    return f"rgb({r},{g},{b})"


@functools.singledispatch
def view(result: Result, ctx: Ctx) -> RenderableType:
    """The terminal view of any result (registered from the command table by ``load_views``)."""
    if load_views(type(result)):  # the first call: its view is registered now, then dispatch again
        return view(result, ctx)
    raise AttnscopeError("no_view", schema=result.SCHEMA)


@functools.singledispatch
def figure(result: Result, ctx: Ctx) -> str:
    """The SVG figure of any result that has one (registered from the command table by ``load_views``)."""
    if load_views(type(result)):
        return figure(result, ctx)
    raise AttnscopeError("no_figure", schema=result.SCHEMA)


def render(result: Result, ctx: Ctx | None = None) -> RenderableType:
    """The terminal view of ``result`` (default context: $ATTNSCOPE_LANG, no width limit)."""
    return view(result, ctx or Ctx.default())


def console(width: int | None = None, file: IO[str] | None = None, stderr: bool = False) -> Console:
    """Console for the terminal: colour only on a TTY, NO_COLOR honoured by rich."""
    return Console(width=width, file=file, stderr=stderr, soft_wrap=False, highlight=False)


def to_text(renderable: RenderableType, width: int = 100) -> str:
    """Plain text of a renderable (tests and snapshots)."""
    buf = io.StringIO()
    Console(file=buf, width=width, color_system=None, force_terminal=False, highlight=False).print(renderable)
    return buf.getvalue()


def has_figure(result: Result) -> bool:
    """Whether ``result``'s type has a figure of its own (else its SVG is the view's text laid out)."""
    load_views(type(result))
    return figure.dispatch(type(result)) is not figure.dispatch(object)


def figure_svg(result: Result, ctx: Ctx) -> str:
    """The SVG of ``result``: its own figure, or the terminal view's text laid out by the figure code."""
    if has_figure(result):
        return figure(result, ctx)
    from attnscope.render.figures.textview import text_figure

    return text_figure(view(result, ctx), ctx.width or 110, f"attnscope {result.SCHEMA}")


def check_output(path: str) -> None:
    """Refuse, before any work, an output path whose folder is missing or not writable."""
    from attnscope.results.files import check_output as check

    check(path)


def write_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename:
    either the whole file is there afterwards, or nothing (one error line otherwise)."""
    from attnscope.results.files import write_atomic as write_file

    data = text.encode("utf-8")
    write_file(path, lambda fh: fh.write(data))


def export(result: Result, ctx: Ctx, *, svg: str | None, html: str | None) -> None:
    """Write the result's figure as SVG and/or as an HTML page that embeds the same SVG."""
    from attnscope.render.figures.svg import html_page

    drawn = figure_svg(result, ctx)
    if svg:
        write_atomic(svg, drawn)
    if html:
        write_atomic(html, html_page(drawn, f"attnscope {result.SCHEMA}", ctx.lang))


class ProgressBar:
    """A progress bar on stderr (batch mode); draws nothing unless ``enabled``.

    Lines written to stderr while it runs appear above the bar; stdout is left alone,
    so JSON lines go where they were going.
    """

    def __init__(self, total: int | None, description: str, enabled: bool) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            disable=not enabled,
            redirect_stdout=False,
            redirect_stderr=True,
        )
        self._task = self._progress.add_task(description, total=total)
        self._progress.start()

    def advance(self, n: int = 1) -> None:
        self._progress.advance(self._task, n)

    def close(self) -> None:
        self._progress.stop()


_registered: set[str] = set()  # the schemas whose view and figure are registered


def load_views(result_type: type[Result] | None = None) -> bool:
    """Register the view and figure of ``result_type`` from the command table (every row's when
    None). They are imported on the first view or figure of their type, not with this package, so
    that a command that stops at a bad input (words from render.i18n) does not pay for them, and
    one that draws a result pays for its own view alone.
    Returns True only when it registered something new."""
    from attnscope.commands import COMMANDS, resolve

    schema = None if result_type is None else getattr(result_type, "SCHEMA", None)
    new = False
    for row in COMMANDS:
        if row.result is None or row.schema in _registered or (schema is not None and row.schema != schema):
            continue
        result = resolve(row.result)
        if row.view is not None:
            view.register(result, resolve(row.view))
        if row.figure is not None:
            figure.register(result, resolve(row.figure))
        _registered.add(str(row.schema))
        new = True
    return new


__all__ = [
    "Ctx",
    "export",
    "figure",
    "figure_svg",
    "load_views",
    "render",
    "view",
]
