"""Terminal view of a GenerateResult: the answer, then for each detailed answer token where
it looked (top words, the heads that read the prompt most) and each segment's share per
layer group. Every number is read from the result; nothing is recomputed here."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from attnscope.render import Ctx
from attnscope.render import segments as seg
from attnscope.render.common import SINK_NAMED_AT
from attnscope.render.fit import FitColumns, Fitted, Flow
from attnscope.render.i18n import t
from attnscope.results.common import prepended_bos
from attnscope.results.generate import GenerateResult, GenerateStep


def _span(layers: list[int]) -> str:
    return f"{layers[0]}" if len(layers) == 1 else f"{layers[0]}~{layers[-1]}"


def _header(r: GenerateResult, ctx: Ctx) -> Text:
    lang = ctx.lang
    text = Text()
    text.append(t(lang, "generate.title", model=r.model.id), style="bold")
    text.append("\n" + t(lang, "generate.prompt", n=r.prompt_len), style="dim")
    decoding = (
        t(lang, "generate.greedy")
        if r.temperature is None
        else t(lang, "generate.sampled", temperature=f"{r.temperature:g}", seed="-" if r.seed is None else r.seed)
    )
    text.append(" " + decoding, style="dim")
    stop = "generate.stop_eos" if r.stop == "eos" else "generate.stop_max"
    text.append(" " + t(lang, stop, n=len(r.steps)), style="dim")
    text.append(
        "\n"
        + t(
            lang,
            "generate.selection",
            layers=len(r.layers),
            heads=len(r.heads),
            n_layers=r.model.num_hidden_layers,
            n_heads=r.model.num_attention_heads,
        ),
        style="dim",
    )
    return text


def _answer(r: GenerateResult, ctx: Ctx) -> Text:
    text = Text()
    text.append(t(ctx.lang, "generate.answer") + ": ", style="bold")
    if len(r.tokens) > r.prompt_len:
        text.append(r.text[r.tokens[r.prompt_len].start :])
    return text


def _is_sink(r: GenerateResult, index: int, weight: float) -> bool:
    """The word holds position 0 and at least ``SINK_NAMED_AT`` of the step's weight."""
    return 0 in r.words[index].tokens and weight >= SINK_NAMED_AT


def _word(r: GenerateResult, index: int, weight: float, ctx: Ctx) -> Text:
    word = r.words[index]
    first = r.tokens[word.tokens[0]]
    segment = r.segments[first.segment]
    text = Text(word.text.replace("\n", "↵"), style=seg.style(segment))
    if _is_sink(r, index, weight):
        text.append(" " + t(ctx.lang, "generate.sink"), style="dim")
    elif segment.kind == "answer":
        text.append(" " + t(ctx.lang, "generate.in_answer"), style="dim")
    return text


def _step_label(r: GenerateResult, step: GenerateStep) -> Text:
    token = r.tokens[step.index]
    return Text(token.label, style="magenta" if token.special else "bold")


def _where(r: GenerateResult, shown: list[int], ctx: Ctx) -> Table:
    lang = ctx.lang
    table = Table(box=None, pad_edge=False, padding=(0, 1), header_style="bold")
    table.add_column(t(lang, "generate.col_step"), justify="right", no_wrap=True)
    table.add_column(t(lang, "generate.col_token"), no_wrap=True)
    table.add_column(t(lang, "generate.col_prob"), justify="right", no_wrap=True)
    table.add_column(t(lang, "generate.col_words"))
    table.add_column(t(lang, "generate.col_heads"))
    for n in shown:
        step = r.steps[n]
        words = []
        for share in step.top_words:
            word = _word(r, share.word, share.weight, ctx)
            word.append(f" {share.weight:.2f}", style="cyan")
            words.append(word)
        heads = []
        for h in step.prompt_heads:
            head = Text(f"L{h.layer} H{h.head}")
            head.append(f" {h.weight:.2f}", style="cyan")
            heads.append(head)
        # a word or a head stays on one line with its share; a narrow screen puts fewer on each line
        table.add_row(str(n), _step_label(r, step), f"{step.prob:.2f}", Flow(words, "  "), Flow(heads, "  "))
    return table


def _shares(r: GenerateResult, shown: list[int], ctx: Ctx) -> Table:
    lang = ctx.lang
    table = Table(box=None, pad_edge=False, padding=(0, 1), header_style="bold")
    table.add_column(t(lang, "generate.col_step"), justify="right", no_wrap=True)
    table.add_column(t(lang, "generate.col_token"), no_wrap=True)
    for s in r.segments:
        table.add_column(Text(seg.label(s, lang), style=seg.style(s)), no_wrap=True, justify="right")
    for n in shown:
        step = r.steps[n]
        cells = []
        for si in range(len(r.segments)):
            cells.append(" ".join(f"{g[si]:.2f}" for g in step.group_segments))
        table.add_row(str(n), _step_label(r, step), *cells)
    return table


def view(r: GenerateResult, ctx: Ctx) -> RenderableType:
    parts: list[RenderableType] = [_header(r, ctx), *seg.warnings(r.template, ctx.lang), Text(""), _answer(r, ctx)]
    shown = [n for n in r.detail if 0 <= n < len(r.steps)]
    if shown:
        groups = " / ".join(_span(g) for g in r.layer_groups)
        parts += [
            Text(""),
            Text(t(ctx.lang, "generate.where"), style="italic"),
            FitColumns(_where(r, shown, ctx), keys=[0, 1], whole_rows=True),
        ]
        parts += [Text(""), Text(t(ctx.lang, "generate.shares", groups=groups), style="italic")]
        parts.append(FitColumns(_shares(r, shown, ctx), keys=[0, 1], whole_rows=True))
    marked = any(_is_sink(r, s.word, s.weight) for n in shown for s in r.steps[n].top_words)
    notes = [
        "generate.prob_note",
        *([f"generate.sink_note{'_bos' if prepended_bos(r.tokens) else ''}"] if marked else []),
        "generate.heads_note",
        "generate.cached",
    ]
    parts.append(Text(""))
    label = r.tokens[0].label if r.tokens else ""
    parts += [Text(t(ctx.lang, key, threshold=f"{SINK_NAMED_AT:g}", label=label), style="dim") for key in notes]
    if len(shown) < len(r.steps):
        parts.append(Text(t(ctx.lang, "generate.more_steps", shown=len(shown), total=len(r.steps)), style="dim"))
    return Fitted(Group(*parts))
