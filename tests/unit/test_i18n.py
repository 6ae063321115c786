"""The message catalogues: both languages hold the same keys and the same placeholders."""

from __future__ import annotations

import importlib
import re
import string
from pathlib import Path
from typing import Any

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


# Korean titles the chart as the note does ("그것을"이 참고하는 비율), with the query's word, where
# the English title names no word: the view passes it to both.
KOREAN_ONLY_FIELDS = {"weights.chart_title": {"query"}, "figures.weights.title": {"query"}}


def test_placeholders_agree() -> None:
    en, ko = catalogue("en"), catalogue("ko")
    differ = {
        key: (_fields(en[key]), _fields(ko[key]))
        for key in en
        if _fields(en[key]) | KOREAN_ONLY_FIELDS.get(key, set()) != _fields(ko[key])
    }
    assert differ == {}


def test_no_empty_message() -> None:
    for lang in LANGS:
        # a separator (``*_sep``) may be a space, never empty
        assert [k for k, v in catalogue(lang).items() if not v.strip() and not (k.endswith("_sep") and v)] == []


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
        ("0", "이다", "0이다"),
        ("2", "이다", "2다"),
        ("1.9e-06", "다", "1.9e-06이다"),
        ("0.42", "을", "0.42를"),
        ("12%", "이", "12%가"),
        ("manifest.json", "를", "manifest.json을"),
        ("--layer", "는", "--layer는"),
        ("--top", "는", "--top은"),
        ("file", "은", "file은"),
        ("mode", "은", "mode는"),
        ("GPU", "을", "GPU를"),
        ("npz", "은", "npz는"),
        ("model", "으로", "model로"),
        ("--name", "이라", "--name이라"),
        ("--head", "이라", "--head라"),
        ("log P(' 사')", "이", "log P(' 사')가"),
        ("레이어 3", "는", "레이어 3은"),
        ("3, 4", "이나", "3, 4나"),
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


# A particle or copula written fixed right after a placeholder: its form depends on the value
# (0이다 but 2다, 0.42를, json은), so it must come from ``{value:/을}``. 이 before 고, 며, 므로, 면,
# 라, 어, 었 is the copula in a form that reads right after any word (0.5이고, 2이므로); 가지 and
# 다른 are words of their own.
FIXED_PARTICLE = re.compile(
    r"^(?:으로|로|은|는|을|를|와|과|가(?!지)|이다|이라|라(?=[는고서면])|이나|나(?=\s)|이(?![고며므면라어었])|다(?![가-힣]))"
)


PAREN_AFTER_FIELD = re.compile(r"(?<!\{)\{[^{}:/]*(?::[^{}/]*)?\}\([^()]*\)")


def _fixed_particles(template: str) -> list[str]:
    """Each ``{placeholder}particle`` of ``template``. A placeholder with the helper's particle
    (``{name:/이라}는``) is followed by the rest of that particle, not by a fixed one."""
    parts = list(string.Formatter().parse(template))
    found = [
        "{" + field + "}" + after[:3]
        for (_, field, spec, _), (after, _, _, _) in zip(parts, parts[1:] + [("", None, None, None)], strict=True)
        if field is not None and "/" not in (spec or "") and FIXED_PARTICLE.match(after)
    ]
    # the particle after a parenthesis belongs to the word before it: 위치 {pos}(“{token}”)가 is
    # 위치 3(“포”)가, where 위치 3이 is right
    for m in PAREN_AFTER_FIELD.finditer(template):
        if FIXED_PARTICLE.match(template[m.end() :]):
            found.append(m.group(0) + template[m.end() : m.end() + 2])
    return found


def test_no_fixed_particle_after_a_placeholder() -> None:
    found = {key: hits for key, text in catalogue("ko").items() if (hits := _fixed_particles(text))}
    assert found == {}


@pytest.mark.parametrize(
    ("template", "hits"),
    [
        ("시드는 {seed}다.", ["{seed}다."]),
        ("많게는 {top}을 가져간다", ["{top}을 가"]),
        ("{path}를 읽을 수 없다", ["{path}를 읽"]),
        ("레이어 {layers}는 선형", ["{layers}는 선"]),
        ("{metric}이 줄어든 양", ["{metric}이 줄"]),
        ("{name}라는 옵션", ["{name}라는 "]),
        ("차이는 {diff}이다.", ["{diff}이다."]),
        ("√d = {root}로 나눈다", ["{root}로 나"]),
        ("시드는 {seed:/이다}.", []),
        ("{name:/이라}는 옵션", []),
        ("{n}개, {n}번째, {x}의 {y}에서 {k}가지", []),
        ("d = {d}이므로, 차이는 {kp}이고", []),
        ('{{"prompt": "..."}} 같은 객체', []),
        ("위치 {pos}(“{token}”)가 되돌린다", ["{pos}(“{token}”)가 "]),
        ("{head}(비율 {weight})는 든다", ["{head}(비율 {weight})는 "]),
        ("헤드는 {head:/이다}(비율 {weight}). 위치 0({label})이", []),
    ],
)
def test_the_particle_scan_finds_what_it_should(template: str, hits: list[str]) -> None:
    assert _fixed_particles(template) == hits


def test_the_korean_catalogue_uses_no_banned_term() -> None:
    from attnscope.render.messages.ko import BANNED

    found = [
        (key, pattern) for key, text in catalogue("ko").items() for pattern, _ in BANNED if re.search(pattern, text)
    ]
    assert found == []


def test_the_banned_list_catches_what_it_names() -> None:
    from attnscope.render.messages.ko import BANNED

    for line in (
        "쿼리 그것을",
        "키 사과를",
        "캡처 값",
        "인과 마스크",
        "[pad]",
        "final norm과",
        "h8 0.35",
        "토큰 12 '그'",
        "음영 눈금 0~1",
        "<- 자기 자신",
        "바로 잡았다",
        "돌렸다; 그리고",
        "마스크와: 같다",
    ):
        assert any(re.search(p, line) for p, _ in BANNED), line
    for line in ("토큰 28개", "토큰 ID 9", "K·V 헤드 2개", "<- 자기 자신도 포함", "KV 캐시", "H8 0.35", "위치 12"):
        assert not any(re.search(p, line) for p, _ in BANNED), line


def _errors() -> list[tuple[Any, str, str]]:
    from attnscope.errors import AttnscopeError as E

    return [
        (
            E("no_such_path", spec="missing.gguf"),
            "missing.gguf: no such file or folder",
            "missing.gguf: 그런 파일이나 폴더가 없다.",
        ),
        (
            E("index_range_layers", arg="layer", value=99, n=24, last=23, neg=24),
            "--layer 99 is out of range: the model has 24 layers (0-23, or -1 to -24)",
            "--layer 99는 범위를 벗어난다. 이 모델의 레이어는 24개다(0~23, 또는 -1~-24).",
        ),
        (
            E(
                "stopped",
                message=E("line", line=2, message=E("not_in_prompt", arg="query", text="'바나나'", words="민수는")),
            ),
            "line 2: --query '바나나' is not in the prompt; its words are: 민수는 (stopped; --keep-going skips bad lines)",
            "2번째 줄: --query '바나나'는 프롬프트에 없다. 프롬프트의 단어: 민수는 (여기서 멈췄다. --keep-going을 주면 잘못된 줄을 건너뛴다)",
        ),
        (
            E("use_choices", arg="lang", value="'fr'", choices="en or ko"),
            "--lang 'fr': use en or ko",
            "--lang 'fr'은 쓸 수 없다. en 또는 ko 중 하나를 쓴다.",
        ),
    ]


@pytest.mark.parametrize("case", range(4))
def test_errors_are_worded_from_the_catalogue(case: int) -> None:
    from attnscope.cli.flags import flag
    from attnscope.render.i18n import error_line, error_text

    error, english, korean = _errors()[case]
    assert error_text("ko", error, flag) == korean
    assert error_text("en", error, flag) == english
    assert str(error) == error_text("en", error)  # the library's line names the argument, not the flag
    assert error_line("ko", korean) == "attnscope: 오류: " + korean
    assert error_line("en", english, usage=True) == f"attnscope: error: {english} (see --help)"


# The causal commands' errors as the CLI prints them (ablate, knockout, patch).
def _causal_errors() -> list[Any]:
    from attnscope.errors import AttnscopeError as E

    return [
        E("causal_no_target", arg="target", other="target_id"),
        E("causal_foil_same", arg="foil", other="target", foil="'사'"),
        E("causal_not_one_token", arg="target", text="'사과를'", n=3, shown="'사' (55054)", other="target_id"),
        E("causal_id_range", arg="target_id", value=999999, size=151936, range="0-151935"),
        E("causal_mean_one", arg="mode", other="mean_over"),
        E("causal_window_big", arg="window", window=30, n=24),
        E("causal_lengths", arg="align", a=24, b=2),
        E("causal_align_end", arg="align", a=5, b=6),
        E("causal_site", spec="'x'"),
        E("causal_key_after", arg="key", key="'먹었다.'", kspan="10-12", query="'그는'", qspan="6-7"),
        E("not_both", arg="layers", other="window"),
    ]


@pytest.mark.parametrize("case", range(11))
def test_the_causal_commands_errors_read_in_korean(case: int) -> None:
    from attnscope.cli.flags import flag
    from attnscope.render.i18n import error_text

    error = _causal_errors()[case]
    worded = error_text("ko", error, flag)
    assert worded != error_text("en", error, flag) and re.search("[가-힣]", worded), worded
    assert not re.search(r"\b(give|the|is|are|tokens)\b", worded), worded
