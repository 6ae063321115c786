"""The Textual app of ``attnscope tui``: a token strip, the heads table and a detail pane over one :class:`Session`.

The app is a face: the numbers come from the session (``attnscope.tui.session``, which reads
them off the library's analyses) and the renderables from ``attnscope.render.tui``. Work that
runs the model (a query's rows beyond the first forward, the norms, ``a``'s ablation, ``g``'s
generation, ``e``'s export) runs in a worker thread, one at a time, with its line in the status
bar, so the keys never wait. An error inside the app is one line in that bar; the app keeps
running. This module does not print.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from textual import events
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import BindingType
from textual.containers import Container, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import Footer, Input, Static

from attnscope.errors import AttnscopeError
from attnscope.render import Ctx
from attnscope.render import tui as face
from attnscope.render.i18n import Lang, error_text, t
from attnscope.tui import filters
from attnscope.tui.session import Session, Shown, built, command_line, exported, save

NARROW = 120  # columns: below this the detail pane sits under the table
SORTS = ("layer", *face.COLUMNS[1:])  # "head" sorts by layer, then head
ASCENDING = ("layer", "kv", "top")


@dataclass
class Row:
    layer: int
    head: int
    values: dict[str, float | None]


class HelpScreen(ModalScreen[None]):
    """The key map: ↑/↓ and PgUp/PgDn scroll it, any other key closes it."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90%; max-width: 110; height: 90%;
        border: round $accent; background: $surface; padding: 0 1; }
    """

    def __init__(self, lang: Lang) -> None:
        super().__init__()
        self.lang = lang

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(face.help_table(self.lang))

    def on_key(self, event: events.Key) -> None:
        scroll = self.query_one(VerticalScroll)
        moves = {
            "up": scroll.scroll_up,
            "down": scroll.scroll_down,
            "pageup": scroll.scroll_page_up,
            "pagedown": scroll.scroll_page_down,
        }
        event.stop()
        if event.key in moves:
            moves[event.key]()
        else:
            self.dismiss()


class HeadsTable(Widget, can_focus=True):
    """The heads table: only the rows in view are drawn (``render.tui.table_text``), so a redraw costs
    the same for 336 heads as for 10. ↑/↓, PgUp/PgDn, Home/End move the cursor; Enter and a click
    select; a click on the header sorts on that column."""

    BINDINGS: ClassVar[list[BindingType]] = [
        ("up", "move(-1)"),
        ("down", "move(1)"),
        ("pageup", "page(-1)"),
        ("pagedown", "page(1)"),
        ("home", "move(-1000000)"),
        ("end", "move(1000000)"),
        ("enter", "select"),
    ]

    class Highlighted(Message):
        pass

    class Selected(Message):
        pass

    class HeaderSelected(Message):
        def __init__(self, column: str) -> None:
            super().__init__()
            self.column = column

    def __init__(self, labels: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.labels = labels
        self.cells: list[list[str]] = []
        self.cursor = 0
        self.first_row = 0

    def set_rows(self, cells: list[list[str]], cursor: int) -> None:
        self.cells = cells
        self._place(cursor)

    def _place(self, cursor: int) -> None:
        self.cursor = max(0, min(len(self.cells) - 1, cursor))
        view = max(1, self.size.height - 1)
        if self.cursor < self.first_row:
            self.first_row = self.cursor
        elif self.cursor >= self.first_row + view:
            self.first_row = self.cursor - view + 1
        self.first_row = max(0, min(self.first_row, max(0, len(self.cells) - view)))
        self.refresh()

    def render(self) -> Any:
        view = max(1, self.size.height - 1)
        shown = self.cells[self.first_row : self.first_row + view]
        return face.table_text(self.labels, shown, self.cursor - self.first_row, max(10, self.size.width))

    def on_resize(self, event: events.Resize) -> None:
        self._place(self.cursor)

    def action_move(self, step: int) -> None:
        before = self.cursor
        self._place(self.cursor + step)
        if self.cursor != before:
            self.post_message(self.Highlighted())

    def action_page(self, step: int) -> None:
        self.action_move(step * max(1, self.size.height - 2))

    def action_select(self) -> None:
        self.post_message(self.Selected())

    def on_click(self, event: events.Click) -> None:
        if event.y == 0:
            column = face.column_at(self.labels, event.x)
            if column is not None:
                self.post_message(self.HeaderSelected(face.COLUMNS[column]))
            return
        self._place(self.first_row + event.y - 1)
        self.post_message(self.Selected())

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        self.action_move(3)

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self.action_move(-3)


class Browser(App[None]):
    """``attnscope tui``: browse one prompt's every layer, head and token with the keyboard."""

    TITLE = "attnscope tui"
    CSS = """
    #top { height: 1; }
    #strip { height: 2; }
    #main { height: 1fr; layout: horizontal; }
    #table { width: 3fr; height: 1fr; }
    #detail { width: 2fr; height: 1fr; border-left: vkey $foreground 30%; }
    .narrow #main { layout: vertical; }
    .narrow #table { width: 1fr; height: 1fr; }
    .narrow #detail { width: 1fr; height: 1fr; border-left: none; border-top: hkey $foreground 30%; }
    #status { height: 1; }
    #ask { display: none; height: 1; border: none; padding: 0 1; }
    #ask.shown { display: block; }
    """
    BINDINGS: ClassVar[list[BindingType]] = []

    def __init__(
        self,
        session: Session,
        lang: Lang,
        loaded: Any = None,
        *,
        query: int | None = None,
        key: list[int] | None = None,
        max_new_tokens: int = 20,
    ) -> None:
        super().__init__()
        self.session = session
        self.lang = lang
        self.loaded = loaded
        self.qpos = session.n - 1 if query is None else query
        self.kspan = key or [0]
        self.moving_key = False
        self.measure: Any = "weight"
        self.by: Any = "word"
        self.layer: int | None = None  # the opened head; None: the mean view
        self.head: int | None = None
        self.matrix = False
        self.sort = "layer"
        self.descending = False
        self.filter_text = ""
        self.terms: list[filters.Term] = []
        self.asking: str | None = None
        self.busy: str | None = None
        self.stop = threading.Event()
        self.max_new_tokens = max_new_tokens
        self.message = ""
        self.rows: list[Row] = []
        if key is None:
            self.kspan = self._span_at(0)
        for keys, action, name, show, priority in _KEYS:
            self._bindings.bind(keys, action, t(lang, f"tui.key.{name}"), show=show, priority=priority)

    # --- layout -------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(id="top")
        yield Static(id="strip")
        with Container(id="main"):
            yield HeadsTable(face.column_labels(self.lang), id="table")
            with VerticalScroll(id="detail"):
                yield Static(id="pane")
        yield Static(id="status")
        yield Input(id="ask")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(HeadsTable)
        self._narrow()
        self.refresh_all()
        table.focus()

    def on_resize(self, event: events.Resize) -> None:
        self._narrow()
        self.refresh_view()

    def _narrow(self) -> None:
        self.screen.set_class(self.size.width < NARROW, "narrow")

    # --- drawing ------------------------------------------------------------------------------

    def refresh_all(self, top: bool = False) -> None:
        """Redraw everything; ``top``: the table's cursor to its first row (after a new sort or filter),
        else it stays on the head it was on."""
        self.refresh_table(top)
        self.refresh_view()

    def refresh_view(self) -> None:
        """The top line, the strip, the detail pane and the status line."""
        s = self.session
        self.query_one("#top", Static).update(
            face.top_line(
                self.lang,
                s.enc.tokens,
                s.enc.words,
                self.qpos,
                self.kspan,
                self.moving_key,
                self.sort,
                self.descending,
                self.filter_text,
                len(self.rows),
                s.info.num_hidden_layers * s.info.num_attention_heads,
                self.measure,
                None if s.metric is None else s.metric.target,
            )
        )
        width = max(20, self.size.width)
        self.query_one("#strip", Static).update(face.strip(s.enc.tokens, self.qpos, self.kspan, width, 2, s.prompt_len))
        self.refresh_pane()
        self.show_status()

    def shown(self) -> Shown:
        return Shown(
            query=self.qpos, layer=self.layer, head=self.head, measure=self.measure, by=self.by, matrix=self.matrix
        )

    def refresh_pane(self) -> None:
        pane = self.query_one("#pane", Static)
        detail = self.query_one("#detail")
        ctx = Ctx(lang=self.lang, width=max(30, detail.size.width - 2 or 40))
        try:
            if self.matrix and self.layer is None:
                raise AttnscopeError("tui_no_head")
            result = built(self.session, self.shown())
        except AttnscopeError as exc:
            pane.update(error_text(self.lang, exc))
            return
        from attnscope.results.matrix import MatrixResult
        from attnscope.results.weights import WeightsResult

        if isinstance(result, MatrixResult):
            pane.update(face.matrix_detail(result, ctx))
        elif isinstance(result, WeightsResult) and self.layer is not None and self.head is not None:
            pane.update(face.head_detail(result, ctx, self.layer, self.head, self.head // self.session.groups))
        elif isinstance(result, WeightsResult):
            pane.update(face.mean_detail(result, ctx))

    def table_rows(self) -> list[Row]:
        """Every head's row for the query and key (the measure shown), filtered and sorted."""
        s = self.session
        got = s.table(self.qpos, self.kspan, self.measure)
        out: list[Row] = []
        for layer in range(s.info.num_hidden_layers):
            for head in range(s.info.num_attention_heads):
                values: dict[str, float | None] = {"layer": layer, "head": head, "kv": head // s.groups}
                if got is not None:
                    values.update(
                        on_key=float(got.on_key[layer, head]),
                        top=float(got.top[layer, head]),
                        entropy=float(got.entropy[layer, head]),
                        sink=float(got.first[layer, head]),
                    )
                for role in ("previous_token", "duplicate_token", "induction"):
                    values[role] = None if s.roles is None else getattr(s.roles, role)[layer][head]
                values["effect"] = None if s.effects is None else s.effects[layer][head]
                row = Row(layer, head, values)
                if filters.keep(self.terms, values):
                    out.append(row)
        if self.sort != "layer":
            sign = -1.0 if self.descending else 1.0

            def order(r: Row) -> tuple[bool, float, int, int]:  # a head without the value goes last
                v = r.values.get(self.sort)
                return v is None, 0.0 if v is None else sign * v, r.layer, r.head

            out.sort(key=order)
        elif self.descending:
            out.reverse()
        return out

    def refresh_table(self, top: bool = False) -> None:
        table = self.query_one(HeadsTable)
        cursor = None if top else self._cursor_head()
        self.rows = self.table_rows()
        tokens, groups = self.session.enc.tokens, self.session.groups
        where = 0 if cursor is None else next((i for i, r in enumerate(self.rows) if (r.layer, r.head) == cursor), 0)
        table.set_rows([face.row_cells(r.values, tokens, groups) for r in self.rows], where)

    def _cursor_head(self) -> tuple[int, int] | None:
        table = self.query_one(HeadsTable)
        if not self.rows or table.cursor >= len(self.rows):
            return None
        r = self.rows[table.cursor]
        return r.layer, r.head

    def say(self, message: str) -> None:
        self.message = message
        self.show_status()

    def show_status(self) -> None:
        line = self.message
        if self.busy:
            line = self.busy + ("  " + self.message if self.message else "")
        self.query_one("#status", Static).update(line)

    def fail(self, exc: Exception) -> None:
        if isinstance(exc, AttnscopeError):
            self.say(t(self.lang, "tui.error", message=error_text(self.lang, exc)))
        else:
            self.say(t(self.lang, "tui.error", message=f"{type(exc).__name__}: {exc}"))

    # --- moving -------------------------------------------------------------------------------

    def action_move(self, step: int) -> None:
        focused = self.focused
        if isinstance(focused, Input):
            (focused.action_cursor_right if step > 0 else focused.action_cursor_left)()
            return
        self.message = ""
        if self.moving_key:
            self.kspan = self._next_key(step)
        else:
            self.qpos = max(0, min(self.session.n - 1, self.qpos + step))
            if self.kspan[-1] > self.qpos:
                self.kspan = self._span_at(self.qpos)
            self._need_rows()
        self.refresh_all()

    def _span_at(self, pos: int) -> list[int]:
        """The key unit holding token ``pos``: its word (by word) or the token."""
        if self.by == "token":
            return [pos]
        word = self.session.enc.tokens[pos].word
        members = (
            [i for i in self.session.enc.words[word].tokens if i <= self.qpos]
            if word < len(self.session.enc.words)
            else []
        )
        return members or [pos]

    def _next_key(self, step: int) -> list[int]:
        pos = self.kspan[0] - 1 if step < 0 else self.kspan[-1] + 1
        if not 0 <= pos <= self.qpos:
            return self.kspan
        return self._span_at(pos)

    def _need_rows(self) -> None:
        if self.qpos in self.session.rows or self.loaded is None:
            return
        q = self.qpos
        from attnscope.tui.session import capture_query

        self.work(t(self.lang, "tui.busy.rows", pos=q), lambda: capture_query(self.loaded, self.session, q))

    def action_key_mode(self) -> None:
        self.moving_key = not self.moving_key
        self.refresh_view()

    def action_open(self) -> None:
        head = self._cursor_head()
        if head is None:
            return
        self.layer, self.head = head
        self.refresh_view()

    def on_heads_table_selected(self, event: HeadsTable.Selected) -> None:
        self.action_open()

    def on_heads_table_highlighted(self, event: HeadsTable.Highlighted) -> None:
        if self.layer is not None:  # an opened head follows the cursor
            head = self._cursor_head()
            if head is not None and head != (self.layer, self.head):
                self.layer, self.head = head
                self.refresh_pane()

    def on_heads_table_header_selected(self, event: HeadsTable.HeaderSelected) -> None:
        column = event.column
        column = "layer" if column == "head" else column
        if column == self.sort:
            self.descending = not self.descending
        else:
            self.sort, self.descending = column, column not in ASCENDING
        self.refresh_all(top=True)

    def action_mean(self) -> None:
        self.layer = self.head = None
        self.matrix = False
        self.refresh_view()

    def action_matrix(self) -> None:
        if self.layer is None:
            self.action_open()
        self.matrix = not self.matrix
        self.refresh_view()

    def action_words(self) -> None:
        self.by = "token" if self.by == "word" else "word"
        self.kspan = self._span_at(self.kspan[-1])
        self.refresh_all()

    def action_norm(self) -> None:
        if self.measure == "norm":
            self.measure = "weight"
            self.refresh_all()
            return
        if self.session.norms is not None and self.session.norms.shape[-1] >= self.session.n:
            self.measure = "norm"
            self.refresh_all()
            return
        if self.loaded is None:
            self.fail(AttnscopeError("tui_no_norms"))
            return
        from attnscope.tui.session import capture_norms

        def then() -> None:
            self.measure = "norm"

        self.work(t(self.lang, "tui.busy.norms"), lambda: capture_norms(self.loaded, self.session), then)

    def action_sort(self, step: int = 1) -> None:
        at = SORTS.index(self.sort) if self.sort in SORTS else 0
        self.sort = SORTS[(at + step) % len(SORTS)]
        self.descending = self.sort not in ASCENDING
        self.refresh_all(top=True)

    def action_reverse(self) -> None:
        self.descending = not self.descending
        self.refresh_all(top=True)

    # --- asking -------------------------------------------------------------------------------

    def ask(self, what: str, value: str = "") -> None:
        ask = self.query_one("#ask", Input)
        self.asking = what
        ask.placeholder = t(self.lang, f"tui.ask.{what}")
        ask.value = value
        ask.add_class("shown")
        ask.focus()
        self.say(t(self.lang, f"tui.ask.{what}"))

    def _close_ask(self) -> None:
        ask = self.query_one("#ask", Input)
        ask.remove_class("shown")
        self.asking = None
        self.query_one(HeadsTable).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        what, value = self.asking, event.value
        self._close_ask()
        self.message = ""
        handlers: dict[str, Callable[[str], None]] = {
            "filter": self.set_filter,
            "target": self.ablate,
            "export": self.export,
            "save": self.save,
        }
        if what in handlers:
            handlers[what](value)

    def action_filter(self) -> None:
        self.ask("filter", self.filter_text)

    def set_filter(self, text: str) -> None:
        try:
            self.terms = filters.parse(text)
        except AttnscopeError as exc:
            self.fail(exc)
            return
        self.filter_text = text.strip()
        self.refresh_all(top=True)

    def action_ablate(self) -> None:
        if self.loaded is None:
            self.fail(AttnscopeError("tui_needs_model"))
            return
        self.ask("target", self.session.metric.target if self.session.metric else "")

    def ablate(self, target: str) -> None:
        from attnscope.tui.session import ablate_effects

        if not target:
            return

        def then() -> None:
            if self.sort == "layer":
                self.sort, self.descending = "effect", False

        self.work(
            t(self.lang, "tui.busy.ablate", target=repr(target)),
            lambda: ablate_effects(self.loaded, self.session, target),
            then,
        )

    def action_export(self) -> None:
        kind = "matrix" if self.matrix else "weights"
        self.ask("export", f"attnscope-{kind}.json")

    def export(self, path: str) -> None:
        from attnscope import render
        from attnscope.results import json_text

        shown = self.shown()

        def write() -> None:
            result = exported(self.loaded, self.session, shown)
            if path.endswith(".svg"):
                text = render.figure_svg(result, Ctx(lang=self.lang))
            else:
                text = json_text(result.to_json())
            render.check_output(path)
            render.write_atomic(path, text)

        def then() -> None:
            self.say(t(self.lang, "tui.wrote", path=path, command=command_line(self.session, shown)))

        self.work(t(self.lang, "tui.busy.export", path=path), write, then)

    def action_save(self) -> None:
        self.ask("save", "attnscope-tui.npz")

    def save(self, path: str) -> None:
        try:
            save(self.session, path)
        except AttnscopeError as exc:
            self.fail(exc)
            return
        self.say(t(self.lang, "tui.saved", path=path))

    # --- generating ---------------------------------------------------------------------------

    def action_generate(self) -> None:
        if self.loaded is None:
            self.fail(AttnscopeError("tui_needs_model"))
            return
        from attnscope.tui.session import generate_into

        self.stop.clear()
        start = self.session.n

        def token() -> None:
            if self.stop.is_set():
                raise KeyboardInterrupt
            self.call_from_thread(self._generated, start)

        self.work(
            t(self.lang, "tui.busy.generate", n=self.max_new_tokens),
            lambda: generate_into(self.loaded, self.session, self.max_new_tokens, token),
            lambda: self._generated(start),
        )

    def _generated(self, start: int) -> None:
        self.qpos = max(self.session.rows)  # the query that chose the newest token
        if self.measure == "norm" and self.session.norms is None:
            self.measure = "weight"
        self.busy = (
            t(self.lang, "tui.busy.generated", n=self.session.n - start, limit=self.max_new_tokens)
            if self.busy
            else None
        )
        self.refresh_all()

    def action_stop(self) -> None:
        if self.asking is not None:
            self._close_ask()
            self.say("")
            return
        if self.busy:
            self.stop.set()

    # --- workers ------------------------------------------------------------------------------

    def work(self, line: str, job: Callable[[], None], then: Callable[[], None] | None = None) -> None:
        """Run ``job`` in a worker thread with ``line`` in the status bar; one at a time."""
        if self.busy:
            self.say(t(self.lang, "tui.wait"))
            return
        self.busy = line
        self.show_status()
        started = time.perf_counter()

        def run() -> None:
            try:
                job()
            except Exception as exc:  # noqa: BLE001 - any failure is one line in the app
                self.call_from_thread(self._done, None, exc, started)
            else:
                self.call_from_thread(self._done, then, None, started)

        self.run_worker(run, thread=True, group="model", exit_on_error=False)

    def _done(self, then: Callable[[], None] | None, exc: Exception | None, started: float) -> None:
        self.busy = None
        if exc is not None:
            self.fail(exc)
        elif then is not None:
            then()
        self.refresh_all()

    # --- help and palette -------------------------------------------------------------------------

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.lang))

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        for keys, name in face.KEYS:
            action = _PALETTE.get(name)
            if action is not None:
                yield SystemCommand(
                    f"{t(self.lang, f'tui.key.{name}')} ({keys})",
                    t(self.lang, f"tui.help.{name}"),
                    getattr(self, f"action_{action}"),
                )


# (keys, action, catalogue name, shown in the footer, priority over the focused widget)
_KEYS: list[tuple[str, str, str, bool, bool]] = [
    ("left", "move(-1)", "move", True, True),
    ("right", "move(1)", "move", False, True),
    ("k", "key_mode", "key", True, False),
    ("question_mark", "help", "help", True, False),
    ("q", "quit", "quit", True, False),
    ("v", "mean", "mean", True, False),
    ("m", "matrix", "matrix", True, False),
    ("n", "norm", "norm", True, False),
    ("w", "words", "words", True, False),
    ("o", "sort(1)", "sort", True, False),
    ("O", "reverse", "reverse", False, False),
    ("slash", "filter", "filter", True, False),
    ("a", "ablate", "ablate", True, False),
    ("g", "generate", "generate", True, False),
    ("escape", "stop", "stop", False, False),
    ("e", "export", "export", True, False),
    ("s", "save", "save", True, False),
]
_PALETTE = {
    "mean": "mean",
    "matrix": "matrix",
    "norm": "norm",
    "words": "words",
    "sort": "sort",
    "filter": "filter",
    "ablate": "ablate",
    "generate": "generate",
    "export": "export",
    "save": "save",
    "help": "help",
    "quit": "quit",
}


def run(app: Browser) -> None:
    app.run()


__all__ = ["Browser", "HelpScreen", "replace", "run"]
