"""Parse layer / head selections: ``all``, ``3``, ``-1``, ``0,3,20-23``; check one choice among a few.

Pure Python; no torch. Negative indices count from the end (-1 is the last). Errors name
the value in the core's own terms ("layer 99 is out of range: the model has 24 layers
(0-23)"); the CLI puts its flag in front (``--layer 99 ...``) through ``AttnscopeError.option``.
"""

from __future__ import annotations

from typing import TypeVar

from attnscope.errors import AttnscopeError

T = TypeVar("T", bound=str)


def _valid(n: int) -> str:
    return f"0-{n - 1}, or -1 to -{n}"


def _one(token: str, n: int, what: str) -> int:
    try:
        value = int(token)
    except ValueError:
        raise AttnscopeError(
            f"{what} {token!r} is not a number; use an index, a list or a range such as 0,3,20-23 "
            f"(valid: {_valid(n)}), or 'all'",
            option=what,
        ) from None
    if not -n <= value < n:
        raise AttnscopeError(f"{what} {value} is out of range: the model has {n} {what}s ({_valid(n)})", option=what)
    return value % n


def parse_indices(spec: str | int | None, n: int, what: str) -> list[int]:
    """Sorted unique indices in ``range(n)`` for a spec; ``what`` is 'layer' or 'head'."""
    if spec is None or str(spec).strip().lower() in ("", "all"):
        return list(range(n))
    spec = str(spec)
    out: set[int] = set()
    for item in spec.split(","):
        item = item.strip()
        if not item:
            raise AttnscopeError(f"{what} {spec!r} has an empty item; use e.g. 0,3,20-23", option=what)
        body = item[1:] if item.startswith("-") else item
        if "-" in body:
            cut = item.index("-", 1)
            lo_s, hi_s = item[:cut], item[cut + 1 :]
            if not lo_s or not hi_s:
                raise AttnscopeError(f"{what} {item!r} is not a range; write it as A-B, e.g. 20-23", option=what)
            lo, hi = _one(lo_s, n, what), _one(hi_s, n, what)
            if lo > hi:
                raise AttnscopeError(f"{what} {item!r} runs backwards; write the smaller index first", option=what)
            out.update(range(lo, hi + 1))
        else:
            out.add(_one(item, n, what))
    return sorted(out)


def one_index(spec: str | int, n: int, what: str) -> int:
    """A single layer or head (negative counts from the end): ``5``, ``-1``; not a list, a range or ``all``."""
    picked = parse_indices(spec, n, what)
    if len(picked) != 1 or str(spec).strip().lower() == "all":
        raise AttnscopeError(f"{what} {spec!r}: give one {what} here ({_valid(n)})", option=what)
    return picked[0]


def one_of(value: str, choices: tuple[T, ...], name: str) -> T:
    """``value`` as one of ``choices`` (a Literal's values), or an error naming them (``name`` says what it is)."""
    for choice in choices:
        if value == choice:
            return choice
    listed = ", ".join(choices[:-1]) + f" or {choices[-1]}" if len(choices) > 1 else choices[0]
    raise AttnscopeError(f"{name} {value!r}: use {listed}", option=name)
