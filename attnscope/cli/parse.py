"""Option strings into the core's typed arguments: ``--layer 0,3,20-23``, ``--window 0:40``, ``--steps 0-4``.

Pure Python, cheap to import (it is on the ``--help`` path). Only the syntax is checked
here; whether an index fits the model is the core's check (``core.prompt.spec``), made once the
model's counts are known. Errors name the flag.
"""

from __future__ import annotations

from collections.abc import Sequence

from attnscope.core.prompt.spec import ChatSpec, Indices, QuerySpec, Text
from attnscope.core.prompt.spec import parse_indices as parse_indices  # the grammar, declared in core
from attnscope.errors import AttnscopeError
from attnscope.results.segments import Message


def _flag(what: str) -> str:
    return "--" + what.replace("_", "-")


def parse_one(spec: str, what: str) -> int:
    """A single layer, head or position: ``5``, ``-1``; not a list, a range or ``all``."""
    try:
        return int(spec.strip())
    except ValueError:
        pass
    parse_indices(spec, what)  # a malformed list says what is wrong with it
    raise AttnscopeError(
        "one_layer" if what == "layer" else "one_head" if what == "head" else "one_pos", arg=what, value=repr(spec)
    )


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


def query_spec(query: str | None, occurrence: int | None, positions: Sequence[str] | None) -> QuerySpec:
    """``--query``/``--occurrence`` or ``--pos`` (one position) as the core's query; neither: the last token."""
    pos = parse_pos(positions)
    if query is not None and pos is not None:
        raise AttnscopeError("not_both", arg="query", other="pos")
    if occurrence is not None and query is None:
        raise AttnscopeError("needs", arg="occurrence", other="query")
    if query is None:
        return pos
    return Text(query, occurrence)


def joined(values: Sequence[str] | None) -> str | None:
    """``--pos`` as one string: the option may be given more than once, and its values join as one
    list (``--pos 3 --pos 5`` is ``--pos 3,5``); None when it is not given."""
    return None if not values else ",".join(v.strip() for v in values)


def parse_positions(values: Sequence[str] | None) -> Indices | None:
    """Token positions from ``5``, ``-1``, ``0,3,5-8`` or ``all`` (``--pos``); None for all."""
    spec = joined(values)
    return None if spec is None else parse_indices(spec, "pos")


def parse_pos(values: Sequence[str] | None) -> int | None:
    """``--pos`` where a command takes one position (``5``, ``-1``); None when it is not given."""
    spec = joined(values)
    return None if spec is None else parse_one(spec, "pos")


def parse_sites(spec: str) -> list[str]:
    """``--site``: ``head``, ``resid``, ``k``, ``v`` or a comma list of them."""
    from attnscope.results.patch import SITES

    asked = [s.strip() for s in spec.split(",")]
    bad = [s for s in asked if s not in SITES]
    if bad:
        raise AttnscopeError("causal_site", spec=repr(spec))
    return [s for s in SITES if s in asked]
