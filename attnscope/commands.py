"""The table of commands: for each, its CLI function, its result type, its view, its figure and its analysis.

Everything that lists commands reads this table: the CLI registers its commands from it (in
this order, which is the order ``attnscope --help`` shows), ``attnscope.results.from_json``
and the JSON reference take their result types from it, and ``attnscope.render`` registers
each view and figure on its result type from it. A row names its parts by dotted path
(``module:attribute``) and :func:`resolve` imports one only when it is needed, so this module
imports nothing of attnscope, torch or rich: it is the lowest layer.

Adding a command starts with a row here (see "Adding a command" in docs/development.md).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Command:
    """One command: ``name`` as typed after ``attnscope``, and the dotted paths of its parts.

    ``result`` is None for a command that writes no result of its own (``render`` draws saved
    ones, ``explore`` writes a page); ``view`` is set exactly when ``result`` is, and ``figure``
    only for a result with an SVG figure of its own (the others get the view's text laid out).
    ``schema`` is the result's current schema name (``Result.SCHEMA``). ``core`` is the analysis
    the library exports as ``attnscope.NAME`` (None for ``render``, which has none): by default
    the function ``NAME`` of ``attnscope.core.NAME`` (a module, or a package that re-exports
    it), else the module of one of core's packages that holds it, named in the row.
    """

    name: str
    cli: str
    result: str | None = None
    schema: str | None = None
    view: str | None = None
    figure: str | None = None
    core: str | None = None


def _analysis(name: str, result: str, schema: int, *, figure: bool = False, core: str | None = None) -> Command:
    """The row of a command whose parts sit in the modules named after it; ``core``: the module of
    its analysis where that is not ``attnscope.core.NAME``."""
    return Command(
        name=name,
        cli=f"attnscope.cli.{name}:{name}_cmd",
        result=f"attnscope.results.{name}:{result}",
        schema=f"attnscope.{name}/{schema}",
        view=f"attnscope.render.{name}:view",
        figure=f"attnscope.render.figures.{name}:figure" if figure else None,
        core=f"{core or f'attnscope.core.{name}'}:{name}",
    )


COMMANDS: tuple[Command, ...] = (
    _analysis("weights", "WeightsResult", 3, figure=True),
    _analysis("heads", "HeadsResult", 2, figure=True),
    _analysis("matrix", "MatrixResult", 2, figure=True),
    _analysis("mask", "MaskResult", 2, figure=True),
    _analysis("tokens", "TokensResult", 2, core="attnscope.core.tokenlist"),  # a listing, not core/tokens
    _analysis("info", "InfoResult", 2),
    _analysis("trace", "TraceResult", 3, figure=True),
    _analysis("explain", "ExplainResult", 3),
    _analysis("rope", "RopeResult", 3),
    _analysis("reuse", "ReuseResult", 2),
    Command("render", cli="attnscope.cli.render:render_cmd"),
    _analysis("roles", "RolesResult", 1),
    _analysis("generate", "GenerateResult", 1),
    _analysis("stats", "StatsResult", 1, figure=True, core="attnscope.core.stats.driver"),
    _analysis("ablate", "AblateResult", 1, figure=True, core="attnscope.core.causal.ablate"),
    _analysis("knockout", "KnockoutResult", 1, figure=True, core="attnscope.core.causal.knockout"),
    _analysis("patch", "PatchResult", 1, figure=True, core="attnscope.core.causal.patch"),
    _analysis("flow", "FlowResult", 1, figure=True, core="attnscope.core.causal.flow"),
    _analysis("circuit", "CircuitResult", 1, figure=True, core="attnscope.core.causal.circuit"),
    Command("pairs", cli="attnscope.cli.pairs:pairs_cmd"),  # writes a file of pairs: no result, no view
    Command("explore", cli="attnscope.cli.explore:explore_cmd", core="attnscope.core.explore:explore"),
    Command("tui", cli="attnscope.cli.tui:tui_cmd"),  # a browser of several analyses, no result of its own
)


def resolve(path: str) -> Any:
    """The object a dotted path names: ``"package.module:attribute"``, imported now."""
    module, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module), attribute)


__all__ = ["COMMANDS", "Command", "resolve"]
