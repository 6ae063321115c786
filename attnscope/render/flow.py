"""Human view of a FlowResult: the routes to the prediction, layer by layer, and the knockout check.

The first line says what is predicted at the position, which words the routes reach and through
which layers' attention; then each layer's attention edges from the last layer down, the input
tokens the routes reach, the completeness check and, with ``--verify``, each knocked-out edge
beside its importance. The routes and the rank correlation come from ``results.derive``.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from attnscope.render import Ctx
from attnscope.render.ablate import effect_text
from attnscope.render.common import model_line, ranges
from attnscope.render.fit import FitColumns, Fitted
from attnscope.render.i18n import Lang, t
from attnscope.results import derive as d
from attnscope.results.flow import FlowResult

SHOWN = 6  # attention edges listed per layer (the JSON holds them all)


def quoted(text: str) -> str:
    return f"“{text}”"


def place(r: FlowResult, pos: int) -> str:
    """A position as the view names it: its token (or, with by word, its word up to there) and its index."""
    if r.by == "word":
        word = r.words[r.tokens[pos].word]
        label = r.text[r.tokens[word.tokens[0]].start : r.tokens[pos].end].strip() or r.tokens[pos].label
    else:
        label = r.tokens[pos].label
    return f"{label}({pos})"


def source_words(r: FlowResult, inputs: list[int]) -> list[str]:
    """The words of the input positions the routes reach, other than the prediction's own token."""
    seen: list[int] = []
    for j in inputs:
        w = r.tokens[j].word
        if j != r.pos and w not in seen:
            seen.append(w)
    return [r.words[w].text for w in seen]


def summary(r: FlowResult, routes: d.FlowRoutes, lang: Lang) -> str:
    words = source_words(r, routes.inputs)
    head = t(
        lang,
        "flow.predicts",
        pos=r.pos,
        token=r.tokens[r.pos].label,
        prediction=quoted(r.prediction_text),
        logp=f"{r.logprob:.2f}",
    )
    if not words or not routes.reading:
        return head + " " + t(lang, "flow.summary_self", threshold=r.threshold)
    listed = t(lang, "flow.list_sep").join(words)
    return head + " " + t(lang, "flow.summary", words=listed, layers=ranges(lang, routes.reading))


def completeness(r: FlowResult, routes: d.FlowRoutes, lang: Lang) -> Text:
    key = "flow.completeness" if routes.ok else "flow.completeness_off"
    line = t(lang, key, error=f"{routes.error:.1e}", scale=f"{routes.scale:.3g}", tolerance=f"{r.tolerance:.0e}")
    return Text(line, style="dim" if routes.ok else "bold red")


def view(r: FlowResult, ctx: Ctx) -> RenderableType:
    lang = ctx.lang
    routes = d.flow_routes(r.edges, r.layers, r.tolerance, r.pos)
    parts: list[RenderableType] = [Text(summary(r, routes, lang), style="bold")]
    if routes.direct:
        layers = ranges(lang, sorted({e.layer for e in routes.direct}))
        parts.append(Text(t(lang, "flow.direct", pos=r.pos, n=len(routes.direct), layers=layers)))
    parts.append(Text(""))
    title = "flow.edges_title_heads" if r.heads else "flow.edges_title"
    parts.append(Text(t(lang, title, threshold=r.threshold, by=t(lang, f"flow.by_{r.by}")), style="dim"))
    table = edges_table(r, routes, lang)
    if table.row_count:
        parts.append(FitColumns(table))
    if routes.quiet:
        parts.append(Text(t(lang, "flow.residual_only", layers=ranges(lang, routes.quiet)), style="dim"))
    reached = sorted({r.tokens[j].word for j in routes.inputs})
    words = t(lang, "flow.list_sep").join(r.words[w].text for w in reached) or "-"
    parts += [Text(t(lang, "flow.inputs", positions=ranges(lang, routes.inputs), words=words)), Text("")]
    parts += [Text(t(lang, "flow.counts", **routes.counts), style="dim"), completeness(r, routes, lang)]
    parts += [model_line(lang, r.model)]
    if r.verified:
        parts += [Text(""), *verify_block(r, lang)]
    parts += [Text(""), Text(t(lang, "flow.note"), style="dim")]
    return Fitted(Group(*parts))


def edges_table(r: FlowResult, routes: d.FlowRoutes, lang: Lang) -> Table:
    """Each layer's attention edges, the last layer first, at most SHOWN of them a layer."""
    table = Table(box=None, pad_edge=False, padding=(0, 1), header_style="dim")
    table.add_column(t(lang, "flow.col.layer"), justify="right", no_wrap=True)
    table.add_column(t(lang, "flow.col.from"), no_wrap=True)
    table.add_column("", no_wrap=True)
    table.add_column(t(lang, "flow.col.to"), no_wrap=True)
    if r.heads:
        table.add_column(t(lang, "flow.col.head"), justify="right", no_wrap=True)
    table.add_column(t(lang, "flow.col.importance"), justify="right", no_wrap=True)
    table.add_column("", no_wrap=True, style="dim")
    for layer in reversed(range(len(r.layers))):
        found = routes.attention.get(layer, [])
        for n, e in enumerate(found[:SHOWN]):
            assert e.from_ is not None
            notes = [t(lang, "flow.into")] if e.to == r.pos else []
            if n == SHOWN - 1 and len(found) > SHOWN:
                notes.append(t(lang, "flow.more", n=len(found) - SHOWN))
            more = t(lang, "flow.list_sep").join(notes)
            cells = [str(layer), place(r, e.from_), "→", place(r, e.to)]
            cells += [str(e.head)] if r.heads else []
            table.add_row(*cells, f"{e.importance:.2f}", more)
    return table


def verify_block(r: FlowResult, lang: Lang) -> list[RenderableType]:
    numbers = d.flow_numbers(r.baseline, r.verified)
    baseline = f"{r.baseline:.3f}" if r.baseline is not None else "-"
    out: list[RenderableType] = [
        Text(
            t(
                lang,
                "flow.verify_title",
                n=len(numbers.verified),
                prediction=quoted(r.prediction_text),
                baseline=baseline,
            )
        )
    ]
    table = Table(box=None, pad_edge=False, padding=(0, 1), header_style="dim")
    for key, justify in (
        ("layer", "right"),
        ("edge", "left"),
        ("head", "right"),
        ("importance", "right"),
        ("effect", "right"),
    ):
        table.add_column(t(lang, f"flow.col.{key}"), justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for v in numbers.verified:
        table.add_row(
            str(v.layer),
            f"{place(r, v.from_)} → {place(r, v.to)}",
            t(lang, "flow.all_heads") if v.head is None else str(v.head),
            f"{v.importance:.3f}",
            effect_text(v.effect),
        )
    out.append(FitColumns(table))
    rho = numbers.rank_correlation
    if rho is None:
        out.append(Text(t(lang, "flow.correlation_none", n=len(numbers.verified))))
    else:
        out.append(Text(t(lang, "flow.correlation", rho=f"{rho:+.2f}", n=len(numbers.verified)), style="bold"))
    return out
