"""Human view of a CircuitResult: the pairs, the clean and corrupt means, each method's faithfulness
curve drawn as bars with its interval, CPR and CMD, the top edges, and the circuit at one size as
its nodes by layer. The numbers are derived again from the raw metrics (``results.derive``), and
the circuit shown is the curve point's edges chosen and pruned again (``results.graph``)."""

from __future__ import annotations

import math

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from attnscope.errors import decoded
from attnscope.render import Ctx, bar
from attnscope.render.common import model_line
from attnscope.render.fit import FitColumns, Fitted
from attnscope.render.i18n import Lang, error_text, t
from attnscope.results import derive as d
from attnscope.results.circuit import CircuitEdge, CircuitResult, CurvePoint, MethodRun
from attnscope.results.graph import Graph

TOP_EDGES = 10  # edges listed
SKIPPED_SHOWN = 3  # skipped lines worded
SHOWN_AT = 0.8  # the circuit shown: the smallest curve point with at least this faithfulness


def _num(x: float | None, digits: int = 3) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def _ci(low: float, high: float) -> str:
    return f"[{_num(low, 2)}, {_num(high, 2)}]"


def _fraction(f: float) -> str:
    return f"{f * 100:g}%"


def node_label(lang: Lang, name: str) -> str:
    """A node as the view writes it: its EAP-IG/MIB name (Korean views write a head H, as the note does)."""
    return name.replace(".h", ".H").replace(".kv", ".KV") if lang == "ko" else name


def _edge(lang: Lang, e: CircuitEdge) -> str:
    return f"{node_label(lang, e.from_)} → {node_label(lang, e.to)} <{e.input}>"


def _runs(r: CircuitResult) -> list[MethodRun]:
    if r.method is None:
        return []
    first = MethodRun(r.method, r.edges, r.curve, r.cpr or 0.0, r.cmd or 0.0, r.cpr_ci, r.cmd_ci)
    return [first, *r.compare]


def _numbers(r: CircuitResult, run: MethodRun) -> d.CurveNumbers:
    weights = d.poisson_weights(r.seed, r.pairs.used, r.bootstrap)
    return d.curve_numbers(
        r.pair_clean, r.pair_corrupt, [p.pair_metric for p in run.curve], [p.fraction for p in run.curve], weights
    )


def view(r: CircuitResult, ctx: Ctx) -> RenderableType:
    lang = ctx.lang
    runs = _runs(r)
    numbers = [_numbers(r, run) for run in runs]
    parts: list[RenderableType] = []
    if runs:
        parts += [Text(_summary(lang, runs[0], numbers[0]), style="bold"), Text("")]
    parts += [model_line(lang, r.model), *_pairs_lines(r, lang)]
    parts.append(Text(t(lang, "circuit.means", clean=_num(r.clean), corrupt=_num(r.corrupt))))
    parts.append(Text(t(lang, f"circuit.graph_{r.graph}", edges=f"{r.n_edges:,}"), style="dim"))
    if len(runs) > 1:
        parts += [Text(""), Text(t(lang, "circuit.compare_title"), style="dim"), _compare(lang, runs, numbers)]
    if runs:
        parts += [Text(""), Text(t(lang, "circuit.curve_title"), style="dim"), _curve(lang, runs, numbers)]
        parts += [Text(""), Text(t(lang, "circuit.top_title", method=runs[0].method), style="dim"), _top(lang, runs[0])]
        parts.append(Text(t(lang, "circuit.nodes_legend"), style="dim"))
        parts += _nodes(r, lang, runs[0], numbers[0])
    if r.check:
        parts += [Text(""), Text(_check(r, lang))]
    if r.evaluation is not None:
        e = r.evaluation
        weights = d.poisson_weights(r.seed, r.pairs.used, r.bootstrap)
        faith = d.faithfulness(r.pair_clean, r.pair_corrupt, e.pair_metric)
        low, high = d.interval(d.replicate_faithfulness(r.pair_clean, r.pair_corrupt, e.pair_metric, weights))
        parts += [
            Text(""),
            Text(
                t(lang, "circuit.evaluated", path=e.path, edges=e.edges, faith=_num(faith), ci=_ci(low, high)),
                style="bold",
            ),
        ]
    parts += [Text(""), Text(t(lang, "circuit.note"), style="dim")]
    return Fitted(Group(*parts))


def _summary(lang: Lang, run: MethodRun, numbers: d.CurveNumbers) -> str:
    return t(
        lang,
        "circuit.summary",
        method=run.method,
        cmd=_num(numbers.cmd),
        cmd_ci=_ci(*numbers.cmd_ci),
        cpr=_num(numbers.cpr),
        cpr_ci=_ci(*numbers.cpr_ci),
    )


def _pairs_lines(r: CircuitResult, lang: Lang) -> list[Text]:
    p = r.pairs
    out = [
        Text(t(lang, "circuit.pairs", n=len(p.used), path=p.path, skipped=len(p.skipped), tokens=p.tokens), style="dim")
    ]
    for s in p.skipped[:SKIPPED_SHOWN]:
        error = decoded(s.reason)
        reason = error_text(lang, error) if error is not None else s.reason
        out.append(Text(t(lang, "circuit.skipped_line", line=s.line, reason=reason), style="dim"))
    if len(p.skipped) > SKIPPED_SHOWN:
        out.append(Text(t(lang, "circuit.skipped_more", n=len(p.skipped) - SKIPPED_SHOWN), style="dim"))
    return out


def _compare(lang: Lang, runs: list[MethodRun], numbers: list[d.CurveNumbers]) -> RenderableType:
    table = Table(box=None, pad_edge=False, padding=(0, 1), header_style="dim")
    for key, justify in (
        ("method", "left"),
        ("cmd", "right"),
        ("cmd_ci", "left"),
        ("cpr", "right"),
        ("cpr_ci", "left"),
    ):
        table.add_column(t(lang, f"circuit.col.{key}"), justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for run, n in zip(runs, numbers, strict=True):
        table.add_row(run.method, _num(n.cmd), _ci(*n.cmd_ci), _num(n.cpr), _ci(*n.cpr_ci))
    return FitColumns(table, [])


def _curve(lang: Lang, runs: list[MethodRun], numbers: list[d.CurveNumbers]) -> RenderableType:
    table = Table(box=None, pad_edge=False, padding=(0, 1), header_style="dim")
    table.add_column(t(lang, "circuit.col.fraction"), justify="right", no_wrap=True)
    table.add_column(t(lang, "circuit.col.edges"), justify="right", no_wrap=True)
    for run in runs:
        table.add_column(run.method, justify="right", no_wrap=True)
    table.add_column(t(lang, "circuit.col.ci", method=runs[0].method), justify="left", no_wrap=True)
    table.add_column("", no_wrap=True)
    first: list[CurvePoint] = runs[0].curve
    for i, point in enumerate(first):
        faith = [n.faithfulness[i] for n in numbers]
        y = faith[0]
        drawn = bar(max(0.0, min(1.0, y)) if math.isfinite(y) else 0.0, 20)
        table.add_row(
            _fraction(point.fraction),
            f"{point.edges:,}",
            *[_num(f) for f in faith],
            _ci(*numbers[0].ci[i]),
            Text(drawn, style="cyan"),
        )
    return FitColumns(table, [[3 + len(runs)]])


def _top(lang: Lang, run: MethodRun) -> RenderableType:
    table = Table(box=None, pad_edge=False, padding=(0, 1), header_style="dim")
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column(t(lang, "circuit.col.edge"), no_wrap=True)
    table.add_column(t(lang, "circuit.col.score"), justify="right", no_wrap=True)
    for rank, e in enumerate(d.top_edges([x.score for x in run.edges], min(TOP_EDGES, len(run.edges))), start=1):
        edge = run.edges[int(e)]
        table.add_row(str(rank), _edge(lang, edge), f"{edge.score:+.4g}")
    return FitColumns(table, [])


def _nodes(r: CircuitResult, lang: Lang, run: MethodRun, numbers: d.CurveNumbers) -> list[RenderableType]:
    """The circuit of the smallest curve point with faithfulness >= SHOWN_AT: its nodes by layer."""
    points = [i for i, f in enumerate(numbers.faithfulness) if math.isfinite(f) and f >= SHOWN_AT]
    if not points or not run.curve:
        return []
    i = points[0]
    m = r.model
    graph = Graph(r.graph, m.num_hidden_layers, m.num_attention_heads, m.num_key_value_heads)
    n_kept, nodes = d.circuit_nodes(graph, [e.score for e in run.edges], run.curve[i].chosen)
    out: list[RenderableType] = [
        Text(""),
        Text(
            t(
                lang,
                "circuit.nodes_title",
                fraction=_fraction(run.curve[i].fraction),
                edges=n_kept,
                faith=_num(numbers.faithfulness[i]),
            ),
            style="dim",
        ),
    ]
    for layer in range(m.num_hidden_layers):
        names = sorted(
            (
                n
                for n in nodes
                if n.startswith((f"a{layer}.", f"m{layer}")) and n.split(".")[0] in (f"a{layer}", f"m{layer}")
            ),
            key=lambda n: (n.startswith("m"), n),
        )
        if names:
            out.append(
                Text(t(lang, "circuit.nodes_layer", layer=layer, nodes=" ".join(node_label(lang, n) for n in names)))
            )
    return out


def _check(r: CircuitResult, lang: Lang) -> str:
    exact = [d.check_exact(r.pair_clean, c.pair_metric) for c in r.check]
    rho = d.spearman([c.estimate for c in r.check], exact)
    return t(lang, "circuit.check", k=len(r.check), rho=_num(rho, 2))
