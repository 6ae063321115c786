"""The message catalogues: both languages hold the same keys and the same placeholders."""

from __future__ import annotations

import string

import pytest

from attnscope.errors import AttnscopeError
from attnscope.render.i18n import LANGS, catalogue, check_lang, particle, t


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_every_message_has_both_languages() -> None:
    en, ko = catalogue("en"), catalogue("ko")
    assert sorted(set(en) - set(ko)) == []
    assert sorted(set(ko) - set(en)) == []


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
