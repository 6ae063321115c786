"""Option strings into the core's typed arguments: ``--layer 0,3,20-23``, ``--window 0:40``, ``--steps 0-4``.

Pure Python, cheap to import (it is on the ``--help`` path). Only the syntax is checked
here; whether an index fits the model is the core's check (``core.prompt.spec``), made once the
model's counts are known. Errors name the flag.
"""

from __future__ import annotations

from collections.abc import Sequence

from attnscope.core.prompt.spec import ChatSpec, IndexRange, Indices, QuerySpec, Text
from attnscope.errors import AttnscopeError
from attnscope.results.segments import Message


def _flag(what: str) -> str:
    return "--" + what.replace("_", "-")


def _int(token: str, what: str) -> int:
    try:
        return int(token)
    except ValueError:
        raise AttnscopeError("not_a_number", arg=what, value=repr(token)) from None


def parse_indices(spec: str, what: str) -> Indices | None:
    """The indices of ``all``, ``5``, ``-1``, ``0,3,20-23`` or ``-3--1``; None for all. ``what``: 'layer' or 'head'."""
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
            if (lo < 0) == (hi < 0) and lo > hi:  # mixed signs need the model's count: the core checks them
                raise AttnscopeError("backwards", arg=what, value=repr(item))
            out.append(IndexRange(lo, hi))
        else:
            out.append(_int(item, what))
    return out


def parse_one(spec: str, what: str) -> int:
    """A single layer or head: ``5``, ``-1``; not a list, a range or ``all``."""
    try:
        return int(spec.strip())
    except ValueError:
        pass
    parse_indices(spec, what)  # a malformed list says what is wrong with it
    raise AttnscopeError("one_layer" if what == "layer" else "one_head", arg=what, value=repr(spec))


def parse_window(spec: str | None) -> tuple[int | None, int | None] | None:
    """``A:B`` -> (A, B), token positions A..B-1; either side may be left out (``:40``, ``100:``)."""
    if spec is None:
        return None
    if spec.count(":") != 1:
        raise AttnscopeError("window_form", value=repr(spec))
    lo_s, hi_s = (p.strip() for p in spec.split(":"))
    try:
        return (int(lo_s) if lo_s else None, int(hi_s) if hi_s else None)
    except ValueError:
        raise AttnscopeError("window_ints", value=repr(spec)) from None


def parse_steps(spec: str | None) -> list[int] | None:
    """Answer-token numbers (0 = the first new token) from ``3``, ``0-4,10`` or ``all``; None for all."""
    if spec is None or spec.strip().lower() == "all":
        return None
    out: set[int] = set()
    for item in spec.split(","):
        lo, _, hi = item.strip().partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()) or (hi and int(hi) < int(lo)):
            raise AttnscopeError("steps", value=repr(spec))
        out.update(range(int(lo), int(hi or lo) + 1))
    return sorted(out)


def parse_ints(spec: str, flag: str, example: str) -> list[int]:
    """Comma-separated integers, such as ``--deltas 1,10,100``."""
    try:
        return [int(x) for x in spec.split(",") if x.strip()]
    except ValueError:
        raise AttnscopeError("integers", arg=flag, value=repr(spec), example=example) from None


def chat_spec(chat: bool, system: str | None, messages: Sequence[Message] | None) -> ChatSpec | None:
    """``--chat``/``--system`` and a ``--messages`` conversation (which implies ``--chat``) as the core's chat."""
    if messages is None and not chat:
        if system is not None:
            raise AttnscopeError("needs", arg="system", other="chat")
        return None
    return ChatSpec(system=system, messages=messages)


def query_spec(query: str | None, occurrence: int | None, pos: int | None) -> QuerySpec:
    """``--query``/``--occurrence`` or ``--pos`` as the core's query; neither: the last token."""
    if query is not None and pos is not None:
        raise AttnscopeError("not_both", arg="query", other="pos")
    if occurrence is not None and query is None:
        raise AttnscopeError("needs", arg="occurrence", other="query")
    if query is None:
        return pos
    return Text(query, occurrence)


def parse_positions(spec: str | None) -> Indices | None:
    """Token positions from ``5``, ``-1``, ``0,3,5-8`` or ``all`` (``--pos``); None for all."""
    return None if spec is None else parse_indices(spec, "pos")


def parse_sites(spec: str) -> list[str]:
    """``--site``: ``head``, ``resid``, ``k``, ``v`` or a comma list of them."""
    from attnscope.results.patch import SITES

    asked = [s.strip() for s in spec.split(",")]
    bad = [s for s in asked if s not in SITES]
    if bad:
        raise AttnscopeError("causal_site", spec=repr(spec))
    return [s for s in SITES if s in asked]
