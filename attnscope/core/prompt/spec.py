"""The typed arguments the analyses take: which layers and heads, which query, which chat.

Pure Python; no torch. Python callers build these directly
(``Selection(layers=[0, 3, *range(20, 24)])``, ``Text("사과", occurrence=2)``); the CLI
builds them from its option strings (``attnscope.cli.parse``). Indices may be negative
(-1 is the last); whether an index fits the model is checked here, against the model's
counts, with errors that name the value in these terms ("layer 99 is out of range: the
model has 24 layers (0-23, ...)"); the error names the argument (``arg="layer"``) and the CLI
writes it as its flag.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeAlias, TypeVar

from attnscope.errors import AttnscopeError
from attnscope.results.segments import Message

T = TypeVar("T", bound=str)


@dataclass(frozen=True)
class IndexRange:
    """The indices ``first`` to ``last``, both included; either end may count from the end (-1)."""

    first: int
    last: int


Indices: TypeAlias = Sequence[int | IndexRange]


@dataclass(frozen=True)
class Selection:
    """Which layers and query heads to read; None means all of them."""

    layers: Indices | None = None
    heads: Indices | None = None

    def layer_indices(self, n: int) -> list[int]:
        """Sorted unique layer indices in ``range(n)``."""
        return resolve(self.layers, n, "layer")

    def head_indices(self, n: int) -> list[int]:
        """Sorted unique head indices in ``range(n)``."""
        return resolve(self.heads, n, "head")


@dataclass(frozen=True)
class Text:
    """A piece of the prompt's text; the ``occurrence``-th (1-based) match, or the first one."""

    text: str
    occurrence: int | None = None


QuerySpec: TypeAlias = str | Text | int | None
"""Which token is the query: the last token of some text (``str`` or :class:`Text`), a
position (``int``, negative counts from the end), or None for the prompt's last token."""


@dataclass(frozen=True)
class ChatSpec:
    """Wrap the prompt in the tokenizer's chat template, with the generation prompt.

    ``system``: a system message; ``messages``: earlier turns of a conversation (the
    prompt, when there is one, becomes its last user turn).
    """

    system: str | None = None
    messages: Sequence[Message] | None = None


@dataclass(frozen=True)
class Prompts:
    """Several prompts given together, and where they came from: ``source`` (a file name, say)
    is what a result records of them, or None."""

    texts: Sequence[str]
    source: str | None = None


def valid(n: int) -> str:
    """The indices a count allows, in words: ``0-23, or -1 to -24``."""
    return f"0-{n - 1}, or -1 to -{n}"


def one(value: int, n: int, what: str) -> int:
    """``value`` as an index in ``range(n)`` (negative counts from the end); ``what``: 'layer' or 'head'."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise AttnscopeError("not_an_index", arg=what, value=repr(value))
    if not -n <= value < n:
        raise AttnscopeError(f"index_range_{what}s", arg=what, value=value, n=n, last=n - 1, neg=n)
    return value % n


def resolve(items: Indices | None, n: int, what: str) -> list[int]:
    """Sorted unique indices in ``range(n)`` for ``items`` (None: all of them)."""
    if items is None:
        return list(range(n))
    if isinstance(items, (str, int)):
        raise AttnscopeError("seq_of_indices", arg=what, value=repr(items))
    out: set[int] = set()
    for item in items:
        if isinstance(item, IndexRange):
            lo, hi = one(item.first, n, what), one(item.last, n, what)
            if lo > hi:
                raise AttnscopeError("backwards", arg=what, value=f"'{item.first}-{item.last}'")
            out.update(range(lo, hi + 1))
        else:
            out.add(one(item, n, what))
    if not out:
        raise AttnscopeError("no_indices", arg=what)
    return sorted(out)


def _int(token: str, what: str) -> int:
    try:
        return int(token)
    except ValueError:
        raise AttnscopeError("not_a_number", arg=what, value=repr(token)) from None


def parse_indices(spec: str, what: str) -> Indices | None:
    """The one grammar of ``--layer``, ``--head`` and ``--pos``: ``all``, ``5``, ``-1`` (from the end),
    ``0,3,20-23`` or ``-3--1``; None for all. Only the syntax is checked here (whether an index fits
    is :func:`resolve`'s check, against the count). ``what``: the argument ('layer', 'head', 'pos')."""
    if spec.strip().lower() in ("", "all"):
        return None
    out: list[int | IndexRange] = []
    for item in spec.split(","):
        item = item.strip()
        if not item:
            raise AttnscopeError("empty_item", arg=what, value=repr(spec))
        body = item[1:] if item.startswith("-") else item
        if "-" in body:
            cut = item.index("-", 1)
            lo_s, hi_s = item[:cut], item[cut + 1 :]
            if not lo_s or not hi_s:
                raise AttnscopeError("not_a_range", arg=what, value=repr(item))
            lo, hi = _int(lo_s, what), _int(hi_s, what)
            if (lo < 0) == (hi < 0) and lo > hi:  # mixed signs need the count: resolve checks them
                raise AttnscopeError("backwards", arg=what, value=repr(item))
            out.append(IndexRange(lo, hi))
        else:
            out.append(_int(item, what))
    return out


def shown(items: Indices | None) -> str:
    """Indices written back in the grammar of :func:`parse_indices` (``all``, ``5``, ``0,3,5-8``)."""
    if items is None:
        return "all"
    return ",".join(str(i) if isinstance(i, int) else f"{i.first}-{i.last}" for i in items)


def one_of(value: str, choices: tuple[T, ...], name: str) -> T:
    """``value`` as one of ``choices`` (a Literal's values), or an error naming them (``name`` says what it is)."""
    for choice in choices:
        if value == choice:
            return choice
    listed = ", ".join(choices[:-1]) + f" or {choices[-1]}" if len(choices) > 1 else choices[0]
    raise AttnscopeError("use_choices", arg=name, value=repr(value), choices=listed)
