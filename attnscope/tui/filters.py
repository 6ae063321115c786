"""The heads table's filter (``/``): terms that must all hold, such as ``L20``, ``H6``, ``sink>0.5``, ``kv=1``.

A term is a layer and/or head (``L20``, ``H6``, ``L20H6``), or a column, a comparison (``<``,
``<=``, ``>``, ``>=``, ``=``) and a number. A term that does not parse raises ``tui_filter``
naming it. No Textual and no model here.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from attnscope.errors import AttnscopeError

ALIASES = {
    "layer": "layer",
    "l": "layer",
    "head": "head",
    "h": "head",
    "kv": "kv",
    "key": "on_key",
    "k": "on_key",
    "w": "on_key",
    "weight": "on_key",
    "on_key": "on_key",
    "entropy": "entropy",
    "ent": "entropy",
    "sink": "sink",
    "prev": "previous_token",
    "previous": "previous_token",
    "previous_token": "previous_token",
    "dup": "duplicate_token",
    "duplicate": "duplicate_token",
    "duplicate_token": "duplicate_token",
    "ind": "induction",
    "induction": "induction",
    "effect": "effect",
    "abl": "effect",
}
OPS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le,
    ">=": operator.ge,
    "<": operator.lt,
    ">": operator.gt,
    "=": operator.eq,
    "==": operator.eq,
}
_HEAD = re.compile(r"^(?:l(\d+))?(?:h(\d+))?$", re.IGNORECASE)
_COMPARE = re.compile(r"^([a-z_]+)\s*(<=|>=|==|<|>|=)\s*(-?\d+(?:\.\d*)?|-?\.\d+)$", re.IGNORECASE)


@dataclass(frozen=True)
class Term:
    column: str
    op: str
    value: float

    def holds(self, row: Mapping[str, float | None]) -> bool:
        got = row.get(self.column)
        return got is not None and OPS[self.op](float(got), self.value)


def parse(text: str) -> list[Term]:
    """The terms of a filter (empty text: none, every head shown)."""
    terms: list[Term] = []
    for word in text.replace(",", " ").split():
        head = _HEAD.match(word)
        if head and (head.group(1) or head.group(2)):
            if head.group(1):
                terms.append(Term("layer", "=", float(head.group(1))))
            if head.group(2):
                terms.append(Term("head", "=", float(head.group(2))))
            continue
        compare = _COMPARE.match(word)
        if compare is None or compare.group(1).lower() not in ALIASES:
            raise AttnscopeError("tui_filter", term=word)
        terms.append(Term(ALIASES[compare.group(1).lower()], compare.group(2), float(compare.group(3))))
    return terms


def keep(terms: list[Term], row: Mapping[str, float | None]) -> bool:
    return all(term.holds(row) for term in terms)
