"""Click's usage errors (a missing option, an unknown one, a value its type refuses) as lines of
the catalogues' ``errors.usage.*`` section.

These are Click's messages, not attnscope's: nothing in attnscope raises them, so they cannot be
raised as kinds. The exception's class and fields say which one it is (``MissingParameter`` and
its parameter, ``NoSuchOption`` and its suggestions); for a value refused by an option's type,
Click keeps only its own sentence, so :data:`_REFUSED` names the few sentences its types write.
A message none of them fits is printed as Click wrote it.
"""

from __future__ import annotations

import re
from typing import Any

# The sentences Click's parameter types write when they refuse a value (typer/_click/types.py).
_REFUSED = [
    ("not_in_range", re.compile(r"(?P<value>.+?) is not in the range (?P<range>.+?)\.")),
    ("not_int", re.compile(r"(?P<value>.+?) is not a valid integer\.")),
    ("not_int_short", re.compile(r"(?P<value>.+?) is not a valid int\.")),
    ("not_float", re.compile(r"(?P<value>.+?) is not a valid float\.")),
    ("not_choice", re.compile(r"(?P<value>.+?) is not one of (?P<choices>.+?)\.")),
    ("not_file", re.compile(r"File (?P<path>.+?) does not exist\.")),
    ("not_path", re.compile(r"Path (?P<path>.+?) does not exist\.")),
]


def usage_text(lang: Any, exc: Any) -> str:
    """The line of a Click usage error in ``lang`` (without the prefix and the --help pointer)."""
    from attnscope.render.i18n import t

    try:  # typer vendors its own click
        from typer._click import exceptions as click_exc
    except ImportError:  # pragma: no cover - older typer uses click itself
        from click import exceptions as click_exc  # type: ignore[no-redef]

    english = " ".join(exc.format_message().split())
    key, values = _kind(exc, click_exc, english)
    return english if key is None else t(lang, f"errors.usage.{key}", **values)


def _kind(exc: Any, click_exc: Any, english: str) -> tuple[str | None, dict[str, object]]:
    if isinstance(exc, click_exc.MissingParameter):
        m = re.fullmatch(r"Missing (option|argument) (.+)\.", english)
        return (f"missing_{m.group(1)}", {"name": m.group(2)}) if m else (None, {})
    if isinstance(exc, click_exc.BadParameter):
        m = re.fullmatch(r"Invalid value for (.+?): (.*)", english)
        if m is None:
            return None, {}
        name, why = m.groups()
        for key, pattern in _REFUSED:
            found = pattern.fullmatch(why)
            if found:
                return key, {"name": name, **found.groupdict()}
        return "invalid", {"name": name, "why": why}
    if isinstance(exc, click_exc.NoSuchOption):
        name = exc.option_name
        if exc.possibilities:
            return "no_such_option_possible", {"name": name, "options": ", ".join(sorted(exc.possibilities))}
        m = re.fullmatch(r"No such option: .+ Did you mean (.+)\?", english)
        return ("no_such_option_mean", {"name": name, "other": m.group(1)}) if m else ("no_such_option", {"name": name})
    m = re.fullmatch(r"Option (.+) requires an argument\.", english)
    if m:
        return "requires_argument", {"name": m.group(1)}
    m = re.fullmatch(r"No such command (.+)\.", english)
    if m:
        return "no_such_command", {"name": m.group(1)}
    m = re.fullmatch(r"Got unexpected extra arguments? \((.+)\)", english)
    if m:
        return ("extra_arguments" if "arguments" in english else "extra_argument"), {"args": m.group(1)}
    return None, {}
