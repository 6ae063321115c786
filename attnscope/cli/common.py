"""What every command shares: options, reading the prompt, error handling, output.

Importing this module must stay cheap (no torch, no transformers, no rich): it is on
the ``--help`` path. Each command imports the core inside its function body.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import os
import sys
import typing
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

import typer

from attnscope.errors import AttnscopeError, ExitCode

if TYPE_CHECKING:
    from attnscope.core.spec import Selection
    from attnscope.model.said import Said

F = TypeVar("F", bound=Callable[..., Any])

ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        "-m",
        help="Hub id, local HF folder, or .gguf file. Default: $ATTNSCOPE_MODEL or Qwen/Qwen2.5-0.5B-Instruct.",
    ),
]
RevisionOpt = Annotated[str | None, typer.Option("--revision", help="Hub revision (branch, tag or commit).")]
DeviceOpt = Annotated[str, typer.Option("--device", help="auto|cpu|cuda|mps (auto: cuda, then mps, then cpu).")]
DtypeOpt = Annotated[
    str, typer.Option("--dtype", help="auto|float32|bfloat16|float16 (auto: float32 on CPU, bfloat16 on CUDA).")
]
ChatOpt = Annotated[
    bool, typer.Option("--chat", help="Apply the tokenizer's chat template, with the generation prompt.")
]
SystemOpt = Annotated[str | None, typer.Option("--system", help="System message for --chat.")]
MessagesOpt = Annotated[
    str | None,
    typer.Option(
        "--messages",
        help='A JSON file: a list of {"role": system|user|assistant, "content": ...} as in the HF chat format. '
        "Implies --chat; a PROMPT becomes the last user turn.",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document instead of the view.")]
SvgOpt = Annotated[str | None, typer.Option("--svg", help="Also draw the figure into this SVG file.")]
HtmlOpt = Annotated[str | None, typer.Option("--html", help="Also write an HTML page holding the same SVG figure.")]
LangOpt = Annotated[
    str | None, typer.Option("--lang", help="Language of the view: en|ko. Default: $ATTNSCOPE_LANG, else en.")
]
MeasureOpt = Annotated[
    str,
    typer.Option(
        "--measure",
        help="weight|norm: the raw attention weight, or each key's share of ||weight x f(x_j)||, "
        "the size of the vector it adds (Kobayashi et al. 2020).",
    ),
]
WidthOpt = Annotated[int | None, typer.Option("--width", help="Terminal width for the view.", min=40)]
PromptArg = Annotated[str, typer.Argument(help="The prompt text, or - to read it from stdin.")]
QueryOpt = Annotated[str | None, typer.Option("--query", "-q", help="Text in the prompt; the query is its last token.")]
OccurrenceOpt = Annotated[int | None, typer.Option("--occurrence", help="Which occurrence of --query (1-based).")]
PosOpt = Annotated[
    int | None,
    typer.Option(
        "--pos", help="A token position; negative counts from the end. Default: the last token (rope: position 10)."
    ),
]
LayerOpt = Annotated[
    str,
    typer.Option(
        "--layer",
        "-l",
        help="Layers: 5, -1, 0,3,20-23 or all; matrix, explain and rope take one. Default: all (one: 0).",
    ),
]
HeadOpt = Annotated[
    str,
    typer.Option("--head", help="Query heads: 5, -1, 0,3,8-13 or all; matrix, explain and rope take one."),
]
ByOpt = Annotated[
    str,
    typer.Option(
        "--by",
        help="token|word: one row/key per token, or a word's tokens together (their weights summed as keys, "
        "averaged as queries); weights also takes segment (each chat segment's tokens summed; needs --chat or "
        "--messages). Default: word in weights, token in matrix.",
    ),
]
NoSinkOpt = Annotated[
    bool, typer.Option("--no-sink", help="Exclude position 0 (the attention sink) and renormalise each row.")
]


class OptionGroup:
    """Options that several commands share, as one frozen dataclass.

    A command asks for a group by giving one parameter the group's class as its annotation;
    ``@option_groups`` puts the group's own options into the signature Typer reads, and
    calls the command with one instance of the group. Each option is declared once, here.
    The command builds the core's typed arguments from the group's fields.
    """


@dataclasses.dataclass(frozen=True)
class Source(OptionGroup):
    """Which model: for commands that read its tokenizer or config but run no forward."""

    model: ModelOpt = None
    revision: RevisionOpt = None


@dataclasses.dataclass(frozen=True)
class Model(Source):
    """Which model, and where and in what precision its forward runs."""

    device: DeviceOpt = "auto"
    dtype: DtypeOpt = "auto"

    def load(
        self,
        device_map: str | None = None,
        *,
        selection: Selection | None = None,
        prompts: Sequence[str] = (),
        find: Sequence[tuple[Literal["query", "key"], str | None, int | None]] = (),
        chat: Chat | None = None,
        messages: Sequence[Any] | None = None,
    ) -> Any:
        """The loaded model; progress on a terminal, notices and warnings as stderr lines.

        Before torch is imported, what needs no weights is checked (``core.precheck``): the
        model path, the ``selection`` (``core.spec.Selection``) against the config's counts, and
        each ``find`` entry (query or key, text, occurrence) against the ``prompts``' characters; a text that only
        the chat template could hold is checked after loading the tokenizer alone. With
        ``messages`` (a --messages conversation; ``prompts`` then holds at most the last user
        turn) a text is always checked in the rendered conversation, since any message may hold it.
        """
        from attnscope.core.precheck import check_query_text, check_selection
        from attnscope.model import load_tokenizer, model_shape

        shape = model_shape(self.model, self.revision)
        check_selection(selection, shape.num_hidden_layers, shape.num_attention_heads)
        with_chat = chat is not None and chat.chat
        system = chat.system if chat is not None else None
        unsettled = [
            (role, text, occ)
            for role, text, occ in find
            if (messages is not None and text is not None)
            or not check_query_text(prompts, text, occ, chat=with_chat, system=system, role=role)
        ]
        if unsettled:
            from attnscope.core.tokens import encode

            tokenizer = load_tokenizer(self.model, self.revision, progress)
            if messages is not None:
                conversation = prompts[0] if prompts else None
                templated = [encode(tokenizer, conversation, system=system, messages=messages).text]
            else:
                templated = [encode(tokenizer, prompt, chat=True, system=system).text for prompt in prompts]
            for role, text, occ in unsettled:
                check_query_text(templated, text, occ, role=role)
        from attnscope.capture.engine import load

        return load(
            self.model,
            revision=self.revision,
            device=self.device,
            dtype=self.dtype,
            device_map=device_map,
            progress=progress,
            warn=lambda message: stderr_line(f"attnscope: {worded(message)}"),
            notice=lambda message: stderr_line(f"attnscope: {worded(message)}"),
        )


@dataclasses.dataclass(frozen=True)
class Query(OptionGroup):
    """Which position is the query: the last token of some text, a position, or the last token."""

    query: QueryOpt = None
    occurrence: OccurrenceOpt = None
    pos: PosOpt = None


@dataclasses.dataclass(frozen=True)
class Chat(OptionGroup):
    """Wrap the prompt in the tokenizer's chat template."""

    chat: ChatOpt = False
    system: SystemOpt = None


@dataclasses.dataclass(frozen=True)
class Output(OptionGroup):
    """Where the result goes: the view (and its SVG/HTML copies) or one JSON document."""

    as_json: JsonOpt = False
    svg: SvgOpt = None
    html: HtmlOpt = None
    width: WidthOpt = None
    lang: LangOpt = None

    def ctx(self) -> Any:
        """The render context (``attnscope.render.Ctx``): --lang (or $ATTNSCOPE_LANG) and --width."""
        from attnscope.render import Ctx
        from attnscope.render.i18n import check_lang, default_lang

        return Ctx(lang=check_lang(self.lang, "--lang") if self.lang else default_lang(), width=self.width)

    def emit(self, result: Any) -> None:
        """Print the result as JSON or as its view (and write SVG/HTML); its warnings go to stderr."""
        _clear_progress()
        ctx = self.ctx()
        for warning in getattr(result, "warnings", []) or []:
            stderr_line(f"attnscope: {warning_line(warning, ctx.lang)}")
        view = None
        if self.svg or self.html or not self.as_json:
            from attnscope import render
            from attnscope.render.fit import print_width

            view = render.view(result, ctx)
            if self.svg or self.html:
                render.export(result, ctx, svg=self.svg, html=self.html)
        if self.as_json:
            write_json(result.to_json())
        else:
            assert view is not None
            render.console(width=self.width or print_width(view, sys.stdout.isatty())).print(view)


def warning_line(warning: Any, lang: str) -> str:
    """A result's warning in words (a structured ``ResultWarning``, or an older result's sentence)."""
    if isinstance(warning, str):
        return warning
    from attnscope.render.common import warning_text

    return warning_text(lang, warning)  # type: ignore[arg-type]


def option_groups(fn: F) -> F:
    """Expand the command's OptionGroup parameters into their options (see OptionGroup)."""
    hints = typing.get_type_hints(fn, include_extras=True)
    params: list[inspect.Parameter] = []
    groups: dict[str, tuple[type, list[str]]] = {}
    for param in inspect.signature(fn).parameters.values():
        annotation = hints.get(param.name, param.annotation)
        if not (isinstance(annotation, type) and issubclass(annotation, OptionGroup)):
            params.append(param.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=annotation))
            continue
        field_hints = typing.get_type_hints(annotation, include_extras=True)
        fields = [f for f in dataclasses.fields(annotation) if f.init]  # type: ignore[arg-type]
        for field in fields:
            params.append(
                inspect.Parameter(
                    field.name,
                    inspect.Parameter.KEYWORD_ONLY,
                    default=field.default,
                    annotation=field_hints[field.name],
                )
            )
        groups[param.name] = (annotation, [f.name for f in fields])
    names = [p.name for p in params]
    clash = sorted({n for n in names if names.count(n) > 1})
    if clash:
        raise TypeError(f"{fn.__qualname__}: option names given twice: {', '.join(clash)}")

    @functools.wraps(fn)
    def wrapper(**kwargs: Any) -> Any:
        set_stderr_lang(None)
        for name, (group, fields) in groups.items():
            kwargs[name] = group(**{field: kwargs.pop(field) for field in fields})
            if isinstance(kwargs[name], Output):
                set_stderr_lang(kwargs[name].lang)
        return fn(**kwargs)

    wrapper.__signature__ = inspect.Signature(params, return_annotation=None)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    return wrapper  # type: ignore[return-value]


_progress_shown = False
_stderr_lang: str | None = None  # the run's --lang, for the lines on stderr before a view exists


def set_stderr_lang(lang: str | None) -> None:
    """Word this run's stderr lines in ``lang`` (--lang); None: $ATTNSCOPE_LANG, else English.
    A bad value is left for --lang's own check to report."""
    global _stderr_lang
    from attnscope.render.i18n import LANGS

    _stderr_lang = lang if lang in LANGS else None


def stderr_lang() -> Any:
    """The language of this run's stderr lines (``render.i18n.Lang``)."""
    from attnscope.render.i18n import default_lang

    if _stderr_lang is not None:
        return _stderr_lang
    try:
        return default_lang()
    except AttnscopeError:  # a bad $ATTNSCOPE_LANG is reported where the view needs it
        return "en"


def worded(message: Said | str) -> str:
    """A line from loading in the reader's language: an ``attnscope.model.Said`` is worded from
    the catalogue (``progress.KEY``); any other line is printed as it is."""
    from attnscope.model.said import Said

    if not isinstance(message, Said):
        return message
    from attnscope.render.i18n import progress_line

    return progress_line(stderr_lang(), message.key, message.values)


def _clear_progress() -> None:
    global _progress_shown
    if _progress_shown:
        sys.stderr.write("\r\x1b[2K")
        sys.stderr.flush()
        _progress_shown = False


def stderr_line(message: str) -> None:
    _clear_progress()
    sys.stderr.write(message.rstrip("\n") + "\n")
    sys.stderr.flush()


def handle_errors(fn: F) -> F:
    """Turn AttnscopeError (and other failures) into one stderr line and an exit code."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except AttnscopeError as exc:
            stderr_line(f"attnscope: error: {exc.cli_message()}")
            raise typer.Exit(int(exc.code)) from None
        except (typer.Exit, typer.Abort, KeyboardInterrupt):
            raise
        except BrokenPipeError:
            _silence_stdout()
            raise typer.Exit(0) from None
        except MemoryError:
            stderr_line("attnscope: error: out of memory; try a shorter prompt, fewer layers, or --device cuda")
            raise typer.Exit(int(ExitCode.RESOURCE)) from None
        except Exception as exc:
            if type(exc).__name__ == "OutOfMemoryError":
                stderr_line(
                    f"attnscope: error: out of memory on the device ({exc}); try fewer layers or a shorter prompt"
                )
                raise typer.Exit(int(ExitCode.RESOURCE)) from None
            if os.environ.get("ATTNSCOPE_DEBUG"):
                raise
            stderr_line(
                f"attnscope: internal error: {type(exc).__name__}: {' '.join(str(exc).split())[:300]} "
                "(set ATTNSCOPE_DEBUG=1 for the traceback)"
            )
            raise typer.Exit(70) from None
        finally:
            _clear_progress()

    return wrapper  # type: ignore[return-value]


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def read_prompt(prompt: str) -> str:
    """The prompt itself, or stdin for '-'; strict UTF-8. An empty prompt is refused here,
    before any model is loaded."""
    if prompt != "-":
        if not prompt.strip():
            raise AttnscopeError("the prompt is empty")
        return prompt
    data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AttnscopeError(f"stdin is not valid UTF-8 (byte {exc.start})") from None
    if not text.strip():
        raise AttnscopeError("the prompt read from stdin is empty")
    return text.rstrip("\n")


def read_messages(path: str | None) -> Any:
    """The messages of a --messages file (``list[Message]``), or None without one."""
    if path is None:
        return None
    from attnscope.core.segments import parse_messages

    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise AttnscopeError(f"--messages {path}: {exc.strerror}", ExitCode.INPUT_FILE) from None
    try:
        doc = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise AttnscopeError(f"--messages {path}: not UTF-8 (byte {exc.start})", ExitCode.INPUT_FILE) from None
    except json.JSONDecodeError as exc:
        raise AttnscopeError(
            f"--messages {path}: not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})", ExitCode.INPUT_FILE
        ) from None
    try:
        return parse_messages(doc, f"--messages {path}")
    except AttnscopeError as exc:
        raise AttnscopeError(exc.message, ExitCode.INPUT_FILE) from None


def progress(message: Said | str) -> None:
    """Loading progress: one transient line on a terminal, erased before any output;
    nothing at all when stderr is not a terminal, so an error stays the only line there.

    The line is cut to the terminal's width (in the middle, so a path keeps its file name):
    a line that wrapped would leave its first rows on screen when it is erased.
    """
    global _progress_shown
    if not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty()):
        return
    try:
        columns = os.get_terminal_size(sys.stderr.fileno()).columns
    except (OSError, ValueError):
        columns = 80
    if columns < 20:  # a pty that never set its size reports 0
        columns = 80
    line = shorten_middle(f"attnscope: {' '.join(worded(message).split())}", max(columns - 1, 10))
    sys.stderr.write(f"\r\x1b[2K{line}")
    sys.stderr.flush()
    _progress_shown = True


def cells(text: str) -> int:
    """Terminal cells ``text`` takes: wide (CJK) characters two, combining marks none."""
    import unicodedata

    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def shorten_middle(text: str, width: int) -> str:
    """``text`` in at most ``width`` cells: whole when it fits, else its start and end around one …."""
    if cells(text) <= width:
        return text
    keep = width - 1
    head_cells = (keep + 1) // 2
    head, used = "", 0
    for ch in text:
        if used + cells(ch) > head_cells:
            break
        head, used = head + ch, used + cells(ch)
    tail, room = "", keep - used
    for ch in reversed(text):
        if cells(ch) > room:
            break
        tail, room = ch + tail, room - cells(ch)
    return f"{head}…{tail}"


def write_json(doc: dict[str, Any]) -> None:
    """One JSON document on stdout, in one write, only after everything succeeded."""
    text = json.dumps(doc, ensure_ascii=False)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
