"""The message catalogues: both languages hold the same keys and the same placeholders."""

from __future__ import annotations

import importlib
import re
import string
from pathlib import Path

import pytest

from attnscope.errors import AttnscopeError
from attnscope.render.i18n import LANGS, catalogue, check_lang, particle, t


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_every_message_has_both_languages() -> None:
    en, ko = catalogue("en"), catalogue("ko")
    assert sorted(set(en) - set(ko)) == []
    assert sorted(set(ko) - set(en)) == []


SECTION = re.compile(r"^\s*# == (end )?(\S+) ==\s*$")
KEY = re.compile(r'^\s*"([^"]+)":')


def _sections(lang: str) -> list[tuple[str, list[str]]]:
    """The catalogue file's sections in order: (name, its keys in order)."""
    module = importlib.import_module(f"attnscope.render.messages.{lang}")
    out: list[tuple[str, list[str]]] = []
    open_name = None
    for line in Path(str(module.__file__)).read_text(encoding="utf-8").splitlines():
        marker = SECTION.match(line)
        if marker:
            end, name = marker.groups()
            assert (open_name == name) if end else (open_name is None), (lang, line)
            open_name = None if end else name
            if not end:
                out.append((name, []))
        elif (key := KEY.match(line)) is not None:
            assert open_name is not None, f"{lang}: {key.group(1)} is outside every section"
            out[-1][1].append(key.group(1))
    assert open_name is None, f"{lang}: section {open_name} is not closed"
    return out


def test_each_view_has_one_section_in_the_same_order_in_both_languages() -> None:
    en, ko = _sections("en"), _sections("ko")
    for lang, sections in (("en", en), ("ko", ko)):
        names = [name for name, _ in sections]
        assert len(names) == len(set(names)), f"{lang}: a view has more than one section"
        misplaced = [(name, k) for name, keys in sections for k in keys if k.split(".")[0] != name]
        assert misplaced == [], f"{lang}: keys in another view's section"
        assert [k for _, keys in sections for k in keys] == list(catalogue(lang)), lang  # type: ignore[arg-type]
    for (name_en, keys_en), (name_ko, keys_ko) in zip(en, ko, strict=True):
        assert name_en == name_ko
        assert keys_en == keys_ko, f"section {name_en}: the keys differ or are in another order"


def test_placeholders_agree() -> None:
    en, ko = catalogue("en"), catalogue("ko")
    differ = {key: (_fields(en[key]), _fields(ko[key])) for key in en if _fields(en[key]) != _fields(ko[key])}
    assert differ == {}


def test_no_empty_message() -> None:
    for lang in LANGS:
        assert [k for k, v in catalogue(lang).items() if not v.strip()] == []


def test_lookup_and_errors() -> None:
    assert t("ko", "common.sum") == "합계"
    with pytest.raises(KeyError):
        t("en", "no.such.key")
    with pytest.raises(AttnscopeError):
        check_lang("fr")


@pytest.mark.parametrize(
    ("word", "which", "expected"),
    [
        ("사과", "를", "사과를"),
        ("민수", "은", "민수는"),
        ("6", "이", "6이"),
        ("3", "을", "3을"),
        ("서울", "으로", "서울로"),
        ("레이어 20", "으로", "레이어 20으로"),
        ("0~5", "이", "0~5가"),
        ("n", "은", "n은"),
        ("k", "는", "k는"),
    ],
)
def test_particles(word: str, which: str, expected: str) -> None:
    assert particle(word, which) == expected


def test_a_particle_follows_the_value_as_it_is_read() -> None:
    from attnscope.render import i18n

    i18n.catalogue("ko")["test.particle"] = "ID {value:/로}, {n:.1f/을}"
    try:
        assert t("ko", "test.particle", value=3, n=2.0) == "ID 3으로, 2.0을"
        assert t("ko", "test.particle", value=2, n=1.5) == "ID 2로, 1.5를"
    finally:
        del i18n.catalogue("ko")["test.particle"]
