"""Every error kind the code raises is worded in both catalogues, with exactly the values raised.

The code is read, not run: every ``AttnscopeError(KIND, name=value, ...)`` in ``attnscope/`` (and
the kinds handed to ``memory.guard`` and the CLI's ``_bad``), its kind a string, one of two
strings (``"a" if ... else "b"``) or an f-string matched against the catalogue's kinds. Each kind
must be ``errors.msg.KIND`` in ``en.py`` and ``ko.py``, both templates must hold exactly the
values the raise gives, every catalogue kind must be raised somewhere, and every argument name
an error carries must have its flag in the CLI's table.
"""

from __future__ import annotations

import ast
import re
import string
from dataclasses import dataclass
from pathlib import Path

from attnscope.cli.flags import FLAGS
from attnscope.errors import ARGUMENTS, CODES
from attnscope.render.i18n import catalogue

PACKAGE = Path(__file__).resolve().parents[2] / "attnscope"
PREFIX = "errors.msg."
# Calls that raise a kind with their keywords: the kind's place among the arguments, and the
# values the call adds itself (memory.guard adds the sizes it measured).
RAISERS = {"AttnscopeError": (0, set()), "guard": (1, {"need", "have", "where"}), "_bad": (0, set())}


# The declared constraints of core/prompt/params.py raise their kind (``kind=``, or the default)
# with these values; the kind's wording may use any of them.
CONSTRAINTS = {"AtLeast": ("give_or_more", {"arg", "value", "k"}), "Between": ("flow_threshold", {"arg", "value"})}


@dataclass(frozen=True)
class Site:
    where: str
    kinds: tuple[str, ...]
    values: frozenset[str] | None  # None where the call spreads a dict (``**sizes``)
    arguments: tuple[str, ...]  # the constant argument names it gives (arg=, other=, args=)
    subset: bool = False  # a constraint's kind words some of the values it is given


def _kinds() -> list[str]:
    return [k.removeprefix(PREFIX) for k in catalogue("en") if k.startswith(PREFIX)]


def _fields(template: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(template) if field}


def _kind_names(node: ast.expr, known: list[str]) -> tuple[str, ...] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return (node.value,)
    if isinstance(node, ast.IfExp):
        a, b = _kind_names(node.body, known), _kind_names(node.orelse, known)
        return None if a is None or b is None else a + b
    if isinstance(node, ast.JoinedStr):  # f"index_range_{what}s": every kind of that shape
        shape = "".join(re.escape(str(v.value)) if isinstance(v, ast.Constant) else "[a-z]+" for v in node.values)
        return tuple(k for k in known if re.fullmatch(shape, k))
    return None


def _name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def sites() -> list[Site]:
    known = _kinds()
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _name(node.func) in CONSTRAINTS:
                default, given = CONSTRAINTS[_name(node.func) or ""]
                kind = next((k.value for k in node.keywords if k.arg == "kind"), None)
                kinds = _kind_names(kind, known) if kind is not None else (default,)
                where = f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
                out.append(Site(where, kinds or (), frozenset(given), (), subset=True))
                continue
            if not isinstance(node, ast.Call) or _name(node.func) not in RAISERS:
                continue
            place, added = RAISERS[_name(node.func) or ""]
            if len(node.args) <= place:
                continue
            kinds = _kind_names(node.args[place], known)
            if kinds is None:  # a kind passed on (``AttnscopeError(kind, **values)`` inside a helper)
                continue
            spread = any(k.arg is None for k in node.keywords)
            names = {k.arg for k in node.keywords if k.arg and k.arg != "cause"} | added
            arguments = []
            for k in node.keywords:
                if k.arg in ARGUMENTS:
                    given = k.value.elts if isinstance(k.value, (ast.Tuple, ast.List)) else [k.value]
                    arguments += [c.value for c in given if isinstance(c, ast.Constant) and isinstance(c.value, str)]
            where = f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
            out.append(Site(where, kinds, None if spread else frozenset(names), tuple(arguments)))
    return out


def test_the_scan_finds_the_raises() -> None:
    found = sites()
    assert len(found) > 250, len(found)  # the scan itself works: the code raises far more than this
    assert all(site.kinds for site in found), [s.where for s in found if not s.kinds]


def test_every_raised_kind_is_worded_in_both_languages() -> None:
    en, ko = catalogue("en"), catalogue("ko")
    missing = [
        (site.where, kind, lang)
        for site in sites()
        for kind in site.kinds
        for lang, words in (("en", en), ("ko", ko))
        if PREFIX + kind not in words
    ]
    assert missing == []


def test_each_kind_holds_exactly_the_values_raised() -> None:
    en, ko = catalogue("en"), catalogue("ko")
    wrong = []
    for site in sites():
        for kind in site.kinds:
            if PREFIX + kind not in en or site.values is None:
                continue
            for lang, words in (("en", en), ("ko", ko)):
                fields = _fields(words[PREFIX + kind])
                if fields != site.values and not (site.subset and fields <= site.values):
                    wrong.append((site.where, kind, lang, sorted(fields ^ site.values)))
    assert wrong == []


def test_every_catalogue_kind_is_raised() -> None:
    raised = {kind for site in sites() for kind in site.kinds}
    assert sorted(set(_kinds()) - raised) == []


def test_every_exit_code_belongs_to_a_kind() -> None:
    assert sorted(set(CODES) - set(_kinds())) == []


def test_every_argument_an_error_names_has_its_flag() -> None:
    # ATTNSCOPE_LANG names an environment variable, not an argument, and is written as it is.
    named = {name for site in sites() for name in site.arguments} - {"ATTNSCOPE_LANG"}
    assert sorted(named - set(FLAGS)) == []
