"""Each analysis's parameters and the values they may take, declared once.

The model is scikit-learn's ``_parameter_constraints``: an analysis declares a dict from a
parameter's name to its constraints (``{"batch_size": [AtLeast(1)], "by": [OneOf(("token",
"word"))]}``), and :func:`validate` checks values against it and raises the error kind the
constraint names, with the parameter's name as ``arg`` (the CLI writes it as the flag). The
analysis validates its arguments at its start; the CLI validates the same declaration before
torch is imported (``Model.load(params=...)`` runs it in ``precheck``), so a bad value is answered
in well under a second and no check is written twice. Pure Python: no torch, no model.

A constraint only checks a value: which parameters go together (``layers`` or ``window``) is
the analysis's own check, next to its declaration.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from attnscope.core.prompt.spec import IndexRange, Indices, one_of, parse_indices
from attnscope.errors import AttnscopeError
from attnscope.results.ablate import Mode
from attnscope.results.patch import Direction
from attnscope.results.stats import Engine
from attnscope.results.weights import Measure

InputFormat = Literal["auto", "lines", "jsonl"]  # auto: JSON Lines if *.jsonl or the first line starts with {


@dataclass(frozen=True)
class AtLeast:
    """An int of ``least`` or more (None passes: the parameter is left out)."""

    least: int
    kind: str = "give_or_more"  # "{arg} {value}: give {k} or more"

    def check(self, name: str, value: object) -> None:
        if value is None:
            return
        if isinstance(value, bool) or not isinstance(value, int) or value < self.least:
            raise AttnscopeError(self.kind, arg=name, value=value, k=self.least)


@dataclass(frozen=True)
class Between:
    """A number strictly between ``low`` and ``high``."""

    low: float
    high: float
    kind: str = "flow_threshold"  # "{arg} {value}: give a number between 0 and 1 (both left out)"

    def check(self, name: str, value: object) -> None:
        if value is None:
            return
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not self.low < value < self.high:
            raise AttnscopeError(self.kind, arg=name, value=value)


@dataclass(frozen=True)
class OneOf:
    """One of ``choices`` (a Literal's values)."""

    choices: tuple[str, ...]

    def check(self, name: str, value: object) -> None:
        if value is not None:
            one_of(value, self.choices, name)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Positions:
    """Query positions in the grammar of ``--pos`` (``core.prompt.spec.parse_indices``): a string
    such as ``all``, ``5``, ``-1`` (from the end), ``1,3,5-8``, or one int; ``last`` is another
    spelling of ``-1``. With ``least`` 1, position 0 is refused (it can only attend to itself)."""

    least: int = 0

    def parse(self, name: str, value: object) -> Indices | None:
        """The positions ``value`` names (None: all of them), or the error it deserves."""
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise AttnscopeError("not_an_index", arg=name, value=repr(value))
        if isinstance(value, int):
            items: Indices | None = [value]
        elif value.strip().lower() == "last":
            items = [-1]
        else:
            items = parse_indices(value, name)
        ends = [e for i in items or () for e in ((i.first, i.last) if isinstance(i, IndexRange) else (i,))]
        if self.least > 0 and any(0 <= e < self.least for e in ends):
            raise AttnscopeError("stats_pos_zero", arg=name, value=repr(value))
        return items

    def check(self, name: str, value: object) -> None:
        self.parse(name, value)


Constraint = AtLeast | Between | OneOf | Positions
Constraints = Mapping[str, Sequence[Constraint]]


def validate(constraints: Constraints, /, **values: object) -> None:
    """Check each value against its parameter's constraints (a name not declared is a bug)."""
    for name, value in values.items():
        for constraint in constraints[name]:
            constraint.check(name, value)


# --- the declarations, one per analysis -------------------------------------------------------
#
# The analysis validates its arguments against its own declaration; the CLI validates the same
# one before it loads a model. A parameter not listed is checked where it needs the model (a
# layer index against the model's count) or by its type alone.

BATCH_SIZE: list[Constraint] = [AtLeast(1)]  # interventions (or prompts) run together

ABLATE_PARAMS: Constraints = {
    "mode": [OneOf(get_args(Mode))],
    "check": [AtLeast(0)],
    "batch_size": BATCH_SIZE,
}
KNOCKOUT_PARAMS: Constraints = {"batch_size": BATCH_SIZE}
PATCH_PARAMS: Constraints = {"direction": [OneOf(get_args(Direction))], "batch_size": BATCH_SIZE}
FLOW_PARAMS: Constraints = {
    "threshold": [Between(0, 1)],
    "by": [OneOf(("token", "word"))],
    "verify_top": [AtLeast(0, kind="flow_verify")],  # "{arg} {value}: give 0 or more edges"
    "batch_size": BATCH_SIZE,
}
HEADS_PARAMS: Constraints = {"top": [AtLeast(1)]}
TRACE_PARAMS: Constraints = {"dims": [AtLeast(1, kind="at_least_plain")], "top": [AtLeast(1, kind="at_least_plain")]}
EXPLAIN_PARAMS: Constraints = {"dims": [AtLeast(1, kind="at_least_plain")]}
REUSE_PARAMS: Constraints = {"repeat": [AtLeast(1, kind="at_least_plain")]}
CIRCUIT_PARAMS: Constraints = {
    "method": [OneOf(("eap-ig", "eap", "ifr", "random"))],
    "graph": [OneOf(("gqa", "mib"))],
    "steps": [AtLeast(1)],
    "bootstrap": [AtLeast(10)],
    "check": [AtLeast(0)],
    "limit": [AtLeast(1)],
    "batch_size": BATCH_SIZE,
}
ROLES_PARAMS: Constraints = {"top": [AtLeast(1)], "length": [AtLeast(2, kind="give_or_more_random")]}

STATS_POS = Positions(least=1)  # query positions count from 1: position 0 can only attend to itself
STATS_PARAMS: Constraints = {
    "pos": [STATS_POS],
    "measure": [OneOf(get_args(Measure))],
    "engine": [OneOf(get_args(Engine))],
    "input_format": [OneOf(get_args(InputFormat))],
    "max_tokens": [AtLeast(2, kind="at_least")],  # "{arg} must be at least {k} (got {value})"
    "bootstrap": [AtLeast(10, kind="at_least")],
    "shard_size": [AtLeast(1, kind="at_least")],
    "batch_size": [AtLeast(1, kind="at_least")],
    "workers": [AtLeast(1, kind="at_least")],
    "retries": [AtLeast(0, kind="stats_retries")],  # "{arg} must be 0 or more (got {value})"
}


def check_ablate(mode: str, check: int, batch_size: int, *, mean_over: bool) -> None:
    """ablate's settings: the declared values, and a mean over other prompts only with mode mean."""
    validate(ABLATE_PARAMS, mode=mode, check=check, batch_size=batch_size)
    if mean_over and mode != "mean":
        raise AttnscopeError("causal_mean_over_mode", arg="mean_over", other="mode")


def check_knockout(batch_size: int, *, layers: bool, window: bool) -> None:
    """knockout's settings: the declared values, and a layer selection or a window, not both."""
    validate(KNOCKOUT_PARAMS, batch_size=batch_size)
    if layers and window:
        raise AttnscopeError("not_both", arg="layers", other="window")


def check_stats(values: Mapping[str, object], *, resume: bool, checkpoint: str | None, messages: bool) -> None:
    """stats' settings (``values``: a ``StatsConfig``'s fields): the declared values, ``resume`` only
    with a ``checkpoint``, and no chat ``messages`` (each input line holds its own conversation)."""
    validate(STATS_PARAMS, **{name: values[name] for name in STATS_PARAMS})
    if resume and checkpoint is None:
        raise AttnscopeError("needs_folder", arg="resume", other="checkpoint")
    if messages:
        raise AttnscopeError("stats_chat_messages")
