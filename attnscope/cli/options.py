"""Every option that more than one command takes, declared once, and the groups they form.

An alias such as ``LayerOpt`` is the annotation a command gives a parameter; a group
(``Source``, ``Model``, ``Query``, ``Chat``, ``Output``) is a frozen dataclass of options that
travel together, which ``cli.command.command`` expands into the signature Typer reads. Groups
that act (``Model.load``, ``Output.emit``) print through the run's ``Terminal``. Importing this
module has no side effects and stays cheap (no torch, no transformers, no rich).
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from attnscope.cli.terminal import Terminal, warning_line, write_json

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
ArraysOpt = Annotated[
    str | None,
    typer.Option(
        "--arrays",
        help="Write the result's arrays (the attention rows, the grids) to this .safetensors or .npz file; "
        "with --json the JSON keeps the rest and names the file and each array's key.",
    ),
]
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
    list[str] | None,
    typer.Option(
        "--pos",
        help="Query positions: 5, -1 (from the end), 0,3,5-8 or all (given twice, the lists join); weights, "
        "explain, trace, rope and flow take one. Default: the last token (ablate: all; stats: all from 1, "
        "last = -1; rope: 10).",
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

TargetOpt = Annotated[str | None, typer.Option("--target", "-t", help="The answer token, as text (one token).")]
TargetIdOpt = Annotated[int | None, typer.Option("--target-id", help="The answer token, as a token id.")]
FoilOpt = Annotated[
    str | None, typer.Option("--foil", help="A competing token: the metric becomes logit(target) - logit(foil).")
]
FoilIdOpt = Annotated[int | None, typer.Option("--foil-id", help="The foil, as a token id.")]
BatchOpt = Annotated[int, typer.Option("--batch-size", "--batch", help="Interventions run together in one batch.")]
KeyOpt = Annotated[
    str | None,
    typer.Option(
        "--key",
        "-k",
        help="Text in the prompt: the key (K) the command reads, its tokens' weights summed "
        "(heads: the score; knockout: the edges into it are blocked; ablate, explore: the weight shown).",
    ),
]
KeyOccurrenceOpt = Annotated[int | None, typer.Option("--key-occurrence", help="Which occurrence of --key (1-based).")]
TopOpt = Annotated[
    int,
    typer.Option(
        "--top", help="How many to list: heads (per role in roles), or logit-lens candidates per row (trace)."
    ),
]
SeedOpt = Annotated[
    int | None,
    typer.Option(
        "--seed", help="Random seed: of --temperature sampling (generate), of the random tokens (roles, default 0)."
    ),
]

if TYPE_CHECKING:
    from attnscope.core.prompt.spec import Selection


def _terminal() -> Any:
    """The run's terminal: set by ``cli.command.command``; not an option (see ``options``)."""
    return dataclasses.field(default_factory=Terminal, compare=False, repr=False, kw_only=True)


@dataclasses.dataclass(frozen=True)
class OptionGroup:
    """Options that several commands share, as one frozen dataclass.

    A command asks for a group by giving one parameter the group's class as its annotation;
    ``cli.command.command`` puts the group's options into the signature Typer reads, and calls
    the command with one instance of the group, which holds the run's ``terminal`` too.
    """

    terminal: Terminal = _terminal()

    @classmethod
    def options(cls) -> list[dataclasses.Field[Any]]:
        """The group's options: its fields, less ``terminal``."""
        return [f for f in dataclasses.fields(cls) if f.init and f.name != "terminal"]


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
        shape_checks: Sequence[Callable[[Any], None]] = (),
        tokenizer_checks: Sequence[Callable[[Any], object]] = (),  # what a check returns is not used
    ) -> Any:
        """The loaded model; progress on a terminal, notices and warnings as stderr lines.

        First, before torch is imported, what needs no weights is checked
        (``core.prompt.precheck.precheck``): the model path, the ``selection`` (``core.prompt.spec.Selection``)
        against the config's counts, and each ``find`` entry (query or key, text, occurrence)
        against the ``prompts``, each of ``shape_checks`` on the config's counts
        (``model.ModelShape``) and each of ``tokenizer_checks`` on the tokenizer, loaded alone.
        """
        from attnscope.core.prompt.precheck import precheck

        tokenizer = precheck(
            self.model,
            self.revision,
            selection=selection,
            prompts=prompts,
            find=find,
            chat=chat is not None and chat.chat,
            system=chat.system if chat is not None else None,
            messages=messages,
            shape_checks=shape_checks,
            tokenizer_checks=tokenizer_checks,
            progress=self.terminal.progress,
        )
        from attnscope.capture.engine import load  # torch: only once the checks passed

        return load(
            self.model,
            revision=self.revision,
            device=self.device,
            dtype=self.dtype,
            device_map=device_map,
            progress=self.terminal.progress,
            warn=self.terminal.say,
            notice=self.terminal.say,
            tokenizer=tokenizer,
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
class Answer(OptionGroup):
    """The token whose probability (or logit difference against a foil) the causal commands measure."""

    target: TargetOpt = None
    target_id: TargetIdOpt = None
    foil: FoilOpt = None
    foil_id: FoilIdOpt = None

    def answer(self) -> Any:
        """The core's ``Answer`` (``core.prompt.targets``) from the four flags, or None without a target."""
        from attnscope.core.prompt.targets import Answer as Tokens

        target = _token(self.target, self.target_id, "target")
        if target is None:
            return None
        return Tokens(target, _token(self.foil, self.foil_id, "foil"))

    def check(self, tokenizer: Any) -> None:
        """The target (and foil) as single tokens of ``tokenizer``: run before the weights load."""
        from attnscope.core.prompt.targets import resolve_metric

        resolve_metric(tokenizer, self.answer())

    def refuse_early(self) -> None:
        """What needs no tokenizer: a target at all, and a foil that is not the target's text."""
        from attnscope.errors import AttnscopeError

        if self.target is None and self.target_id is None:
            raise AttnscopeError("causal_no_target", arg="target", other="target_id")
        if self.foil is not None and self.foil == self.target:
            raise AttnscopeError("causal_foil_same", arg="foil", other="target", foil=repr(self.foil))


def _token(text: str | None, given: int | None, name: str) -> str | int | None:
    """``--NAME`` or ``--NAME-id``, not both."""
    if given is not None and text is not None:
        from attnscope.errors import AttnscopeError

        raise AttnscopeError("not_both", arg=name, other=f"{name}_id")
    return given if given is not None else text


@dataclasses.dataclass(frozen=True)
class Language(OptionGroup):
    """The language of a command that writes no result (``tui``): its screens and its stderr lines."""

    lang: LangOpt = None

    def check(self) -> Any:
        """--lang (or $ATTNSCOPE_LANG) as a ``render.i18n.Lang``."""
        from attnscope.render.i18n import check_lang, default_lang

        return check_lang(self.lang, "lang") if self.lang else default_lang()


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

        return Ctx(lang=check_lang(self.lang, "lang") if self.lang else default_lang(), width=self.width)

    def emit(self, result: Any) -> None:
        """Print the result as JSON or as its view (and write SVG/HTML); its warnings go to stderr."""
        self.terminal.clear()
        ctx = self.ctx()
        for warning in getattr(result, "warnings", []) or []:
            self.terminal.line(f"attnscope: {warning_line(warning, ctx.lang)}")
        view = None
        if self.svg or self.html or not self.as_json:
            from attnscope import render
            from attnscope.render.fit import print_width

            view = render.view(result, ctx)  # first: a view that fails writes nothing
        doc = self.saved(result)
        if self.svg or self.html:
            render.export(result, ctx, svg=self.svg, html=self.html)
        if self.as_json:
            write_json(doc if doc is not None else result.to_json())
        else:
            assert view is not None
            render.console(width=self.width or print_width(view, sys.stdout.isatty(), os.environ.get("COLUMNS"))).print(
                view
            )

    def saved(self, result: Any) -> dict[str, Any] | None:
        """Files written beside the output before it is printed; the document to print instead of
        the result's own, or None (``ArrayOutput`` writes the arrays file here)."""
        return None


@dataclasses.dataclass(frozen=True)
class ArrayOutput(Output):
    """Output for a result with array fields (its class's ``ARRAYS``): ``--arrays FILE`` too.

    The file name is checked when the group is made, before any model loads. The arrays file
    is written (atomically) after the view is made and before anything is printed, so a
    failure leaves neither a file nor output; with ``--json`` the printed document holds
    references to it, naming it relative to the folder of the file stdout is redirected to
    (else the current folder). The file also holds that document, so it renders alone."""

    arrays: ArraysOpt = None

    def __post_init__(self) -> None:
        if self.arrays is not None:
            from attnscope.results.arrays import check_writable

            check_writable(self.arrays)

    def saved(self, result: Any) -> dict[str, Any] | None:
        if self.arrays is None:
            return None
        from pathlib import Path

        from attnscope.errors import AttnscopeError
        from attnscope.results.arrays import ArraySink, array_format, doc_name, save_arrays

        target = Path(self.arrays)
        sink = ArraySink(doc_name(target, stdout_folder() if self.as_json else None), array_format(target))
        doc: dict[str, Any] = result.to_json(arrays=sink)
        if not sink.arrays:
            raise AttnscopeError("arrays_none", path=self.arrays, schema=result.SCHEMA)
        save_arrays(target, sink, doc)
        return doc


def stdout_folder() -> Any:
    """The folder of the file stdout is redirected to (``> out/doc.json``), or None when stdout is
    a terminal, a pipe, or a stream without a file (a test's captured output)."""
    import stat
    from pathlib import Path

    try:
        fd = sys.stdout.fileno()
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return Path(os.readlink(f"/proc/self/fd/{fd}")).parent
    except (OSError, ValueError, AttributeError):
        return None
