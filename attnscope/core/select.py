"""Parse ``--layer`` / ``--head`` specs: ``all``, ``3``, ``-1``, ``0,3,20-23``.

Pure Python; no torch. Negative indices count from the end (-1 is the last).
"""

from __future__ import annotations

from typing import TypeVar

from attnscope.errors import AttnscopeError


def _one(token: str, n: int, what: str) -> int:
    try:
        value = int(token)
    except ValueError:
        raise AttnscopeError(
            f"--{what} {token!r} is not a number; use an index, a list or a range such as 0,3,20-23 "
            f"(valid: 0..{n - 1}, or -1..-{n}), or 'all'"
        ) from None
    if not -n <= value < n:
        raise AttnscopeError(f"--{what} {value} is out of range: this model has {n} {what}s (0..{n - 1}, or -1..-{n})")
    return value % n


def parse_indices(spec: str | None, n: int, what: str) -> list[int]:
    """Sorted unique indices in ``range(n)`` for a spec; ``what`` is 'layer' or 'head'."""
    if spec is None or spec.strip().lower() in ("", "all"):
        return list(range(n))
    out: set[int] = set()
    for item in spec.split(","):
        item = item.strip()
        if not item:
            raise AttnscopeError(f"--{what} {spec!r} has an empty item; use e.g. 0,3,20-23")
        body = item[1:] if item.startswith("-") else item
        if "-" in body:
            cut = item.index("-", 1)
            lo_s, hi_s = item[:cut], item[cut + 1 :]
            if not lo_s or not hi_s:
                raise AttnscopeError(f"--{what} {item!r} is not a range; write it as A-B, e.g. 20-23")
            lo, hi = _one(lo_s, n, what), _one(hi_s, n, what)
            if lo > hi:
                raise AttnscopeError(f"--{what} {item!r} runs backwards; write the smaller index first")
            out.update(range(lo, hi + 1))
        else:
            out.add(_one(item, n, what))
    return sorted(out)


T = TypeVar("T", bound=str)


def one_of(value: str, choices: tuple[T, ...], name: str) -> T:
    """``value`` as one of ``choices`` (a Literal's values), or an error naming them (``name`` says what it is)."""
    for choice in choices:
        if value == choice:
            return choice
    listed = ", ".join(choices[:-1]) + f" or {choices[-1]}" if len(choices) > 1 else choices[0]
    raise AttnscopeError(f"{name} {value!r}: use {listed}")
