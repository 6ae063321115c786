"""Words of every view, in English and Korean: one message catalogue per language.

``t(ctx_or_lang, key, **values)`` looks a message up in ``messages/en.py`` or
``messages/ko.py`` and fills in its ``{placeholders}`` with ``str.format``. Both
catalogues must hold the same keys (a test checks it). Keys are namespaced by the view
that uses them (``weights.title``, ``roles.top``); ``common.*`` is shared. Korean
particles that depend on the word before them (은/는, 이/가, 을/를, 와/과, 으로/로, and the copula
이다/다) come from :func:`particle`: ``{value:/을}`` in a template, never a fixed particle after a
placeholder.

This module holds no numbers and computes nothing; it never imports rich.
"""

from __future__ import annotations

import os
import string
from collections.abc import Callable, Mapping
from typing import Literal, get_args

from attnscope.errors import ARGUMENTS, AttnscopeError

Lang = Literal["en", "ko"]
LANGS: tuple[Lang, ...] = get_args(Lang)


def catalogue(lang: Lang) -> dict[str, str]:
    """The whole catalogue of one language (the page embeds it)."""
    if lang == "ko":
        from attnscope.render.messages.ko import MESSAGES as KO

        return KO
    from attnscope.render.messages.en import MESSAGES as EN

    return EN


def check_lang(value: str, name: str = "language") -> Lang:
    """``value`` as a Lang, or an error naming the choices (``name`` says where the value came from)."""
    for lang in LANGS:
        if value == lang:
            return lang
    raise AttnscopeError("use_choices", arg=name, value=repr(value), choices=" or ".join(LANGS))


def default_lang() -> Lang:
    """$ATTNSCOPE_LANG when set (en|ko), else English."""
    value = os.environ.get("ATTNSCOPE_LANG", "").strip().lower()
    return check_lang(value, "ATTNSCOPE_LANG") if value else "en"


class _Formatter(string.Formatter):
    """str.format, plus a Korean particle after the value: ``{count:/로}`` gives 3으로, 2로; the
    spec ``q`` puts the value in quotes first, so that the particle follows them:
    ``{query:q/이}`` gives “그것을”이, “사과”가."""

    def format_field(self, value: object, format_spec: str) -> str:
        spec, slash, which = format_spec.partition("/")
        quote = spec == "q"
        text = f"“{value}”" if quote else str(super().format_field(value, spec))
        if which == "또는":  # a list of choices as Korean writes it: "en or ko" -> "en 또는 ko"
            return text.replace(" or ", " 또는 ")
        return particle(text, which) if slash else text


_FORMATTER = _Formatter()


def t(lang: Lang, key: str, /, **values: object) -> str:
    """The message ``key`` in ``lang`` with ``values`` filled in (``{name:/을}`` adds a particle)."""
    try:
        template = catalogue(lang)[key]
    except KeyError:
        raise KeyError(f"no message {key!r} in the {lang} catalogue") from None
    return _FORMATTER.format(template, **values) if values else template


# --- Korean particles -------------------------------------------------------------------

# How a digit or Latin letter is read aloud decides the particle: 6(육) takes 이, 3(삼) 을.
_READ_AS_FINAL = {
    "0": True,  # 영
    "1": True,  # 일
    "2": False,  # 이
    "3": True,  # 삼
    "4": False,  # 사
    "5": False,  # 오
    "6": True,  # 육
    "7": True,  # 칠
    "8": True,  # 팔
    "9": False,  # 구
}
_LATIN_FINAL = set("lmnLMN")  # 엘, 엠, 엔 end in a consonant; 알(r) is read 알 too
_LATIN_FINAL |= {"r", "R"}
_PAIRS = {
    "은": ("은", "는"),
    "는": ("은", "는"),
    "이": ("이", "가"),
    "가": ("이", "가"),
    "을": ("을", "를"),
    "를": ("을", "를"),
    "과": ("과", "와"),
    "와": ("과", "와"),
    "으로": ("으로", "로"),
    "로": ("으로", "로"),
    "이다": ("이다", "다"),
    "다": ("이다", "다"),
    "이라": ("이라", "라"),  # {name:/이라}는 gives --top이라는, --layer라는
    "이나": ("이나", "나"),
}


def _latin_word_final(word: str) -> tuple[bool, bool]:
    """(final consonant, ㄹ) of an English word as Korean reads it: json(제이슨) 은, layer(레이어) 는,
    top(톱) 은, file(파일) 은, mode(모드) 는. An acronym is read letter by letter (GPU, csv)."""
    lower = word.lower()
    if word.isupper() or not any(ch in "aeiouy" for ch in lower):
        return lower[-1] in "lmnr", lower[-1] in "lr"
    if lower.endswith("ng") or lower[-1] in "mn":
        return True, False
    if lower[-1] == "l":
        return True, True
    if lower[-1] == "e" and len(lower) > 2 and lower[-2] in "lmn" and lower[-3] in "aeiouy":
        return True, lower[-2] == "l"  # name(네임), line(라인), file(파일): the e is silent
    if lower[-1] in "kpt" and len(lower) > 1 and lower[-2] in "aeiou" and (len(lower) < 3 or lower[-3] not in "aeiou"):
        return True, False  # top(톱), chat(챗), input(인풋); but head(헤드), heat(히트)
    return False, False  # layer(레이어), query(쿼리), mask(마스크), max(맥스)


def _has_final(word: str) -> tuple[bool, bool]:
    """(ends in a final consonant, that consonant is ㄹ) for the last readable character of ``word``."""
    text = word.strip()
    for i in range(len(text) - 1, -1, -1):
        ch = text[i]
        code = ord(ch)
        if 0xAC00 <= code <= 0xD7A3:
            final = (code - 0xAC00) % 28
            return final != 0, final == 8
        if ch in _READ_AS_FINAL:
            return _READ_AS_FINAL[ch], ch in "178"
        if ch == "%":
            return False, False  # 퍼센트
        if ch.isalpha() and ch.isascii():
            start = i
            while start > 0 and text[start - 1].isascii() and text[start - 1].isalpha():
                start -= 1
            if start == i:  # a single letter, read by its name: n(엔), k(케이), l(엘)
                return ch in _LATIN_FINAL, ch in "lLrR"
            return _latin_word_final(text[start : i + 1])
        if ch.isalnum():
            return False, False
    return False, False


def particle(word: str, which: str) -> str:
    """``word`` followed by the right form of the particle ``which`` (은/는, 이/가, 을/를, 과/와, 으로/로,
    the copula 이다/다, 이라/라, 이나/나): 0이다 but 2다, json은 but layer는."""
    with_final, without = _PAIRS[which]
    final, rieul = _has_final(word)
    if with_final == "으로":
        return word + ("로" if (not final or rieul) else "으로")
    return word + (with_final if final else without)


def device_name(lang: Lang, device: str) -> str:
    """``device`` (``cpu``, ``cuda:0``) as ``lang`` writes it: a name the catalogue lists under
    ``common.device.*`` (CPU in Korean), any other as it is."""
    return catalogue(lang).get(f"common.device.{device}", device)


def progress_line(lang: Lang, key: str, values: Mapping[str, object]) -> str:
    """The progress message ``progress.KEY`` with ``values``; a ``device`` value is worded by
    :func:`device_name`."""
    if "device" in values:
        values = {**values, "device": device_name(lang, str(values["device"]))}
    return t(lang, f"progress.{key}", **values)


class Message(str):
    """A catalogue message whose ``format`` also fills particles (``{count:/로}``), as :func:`t` does."""

    def format(self, /, *args: object, **kwargs: object) -> str:
        return str(_FORMATTER.format(self, *args, **kwargs))


def section(lang: Lang, name: str) -> dict[str, Message]:
    """Every message of one view's section, keyed without the ``name.`` prefix (``m["title"]``)."""
    prefix = name + "."
    return {k.removeprefix(prefix): Message(v) for k, v in catalogue(lang).items() if k.startswith(prefix)}


# --- errors -------------------------------------------------------------------------------
#
# An error is a kind with values (``AttnscopeError("pos_range", arg="pos", n=40, ...)``); the
# ``errors`` section of each catalogue words the kind as ``errors.msg.KIND``. A value that is
# itself an error is worded the same way (``line 3: ...``); a value naming an argument
# (``errors.ARGUMENTS``) is written by ``flag`` when the caller gives one (the CLI writes
# ``--layer`` where the library says ``layer``).


def error_text(lang: Lang, error: AttnscopeError, flag: Callable[[str], str] | None = None) -> str:
    """``error`` worded in ``lang``, its arguments written by ``flag`` (as they are without it)."""
    values: dict[str, object] = {}
    for name, value in error.values.items():
        if isinstance(value, AttnscopeError):
            value = error_text(lang, value, flag)
        elif name in ARGUMENTS:
            names = (value,) if isinstance(value, str) else tuple(value)  # type: ignore[call-overload,arg-type]
            value = ", ".join(flag(n) if flag else n for n in names)
        values[name] = value
    return t(lang, f"errors.msg.{error.kind}", **values)


def error_line(lang: Lang, message: str, *, usage: bool = False) -> str:
    """The stderr line of an error worded as ``message``: ``attnscope: error: ...`` in ``lang``; a
    usage error from the option parser ends with the pointer to --help."""
    line = t(lang, "errors.prefix") + message
    return line + t(lang, "errors.see_help") if usage else line
