"""Tokenize a prompt and make every token readable; find query spans and positions.

Byte-level BPE (Qwen, GPT-2) stores tokens as byte strings drawn in a private
alphabet (``ìĤ¬``); a Korean syllable is three UTF-8 bytes and often ends up split
across tokens. Here each token's bytes are recovered and laid over the text, so each
token gets the characters it touches (``start``/``end``), and a token that holds only
part of a character is labelled ``샀 1/2``. Words are whitespace-separated spans, as the
note splits 민수는/사과를/샀다./그는/그것을; a special token is a word of its own.

This module does not run the model and does not print.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any, Literal

from attnscope.core.prompt.spec import ChatSpec, QuerySpec, Text
from attnscope.errors import AttnscopeError
from attnscope.results.common import Query, ResultWarning, Token, WarningCode, Word, prepended_bos
from attnscope.results.segments import ChatTemplate, Message, Segment


@dataclass(frozen=True)
class Encoded:
    text: str  # what the model reads (the chat template applied, if asked)
    ids: list[int]
    tokens: list[Token]
    words: list[Word]
    chat: bool
    segments: list[Segment] = field(default_factory=list)  # chat only: every token's origin
    template: ChatTemplate | None = None  # chat only: what the template did


@cache
def _byte_decoder() -> dict[str, int]:
    """Inverse of GPT-2's bytes_to_unicode: printable stand-in character -> byte."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs, strict=True)}


def _special_ids(tokenizer: Any) -> set[int]:
    ids = set(getattr(tokenizer, "all_special_ids", []) or [])
    decoder = getattr(tokenizer, "added_tokens_decoder", {}) or {}
    ids.update(int(i) for i, t in decoder.items() if getattr(t, "special", False))
    return ids


def vocab_label(tokenizer: Any, token_id: int) -> str:
    """A vocabulary entry as text; bytes that are only part of a character are shown as \\xNN."""
    raw = _token_bytes(tokenizer, [token_id])
    if raw is None:
        return str(tokenizer.decode([token_id]))
    text = raw[0].decode("utf-8", errors="backslashreplace")
    return text.replace("\n", "↵").replace("\t", "⇥").replace("\r", "␍")


def _token_bytes(tokenizer: Any, ids: list[int]) -> list[bytes] | None:
    """Each token's raw bytes, or None if this tokenizer is not byte-level BPE."""
    table = _byte_decoder()
    added = {int(i): t.content for i, t in (getattr(tokenizer, "added_tokens_decoder", {}) or {}).items()}
    out: list[bytes] = []
    for tid, piece in zip(ids, tokenizer.convert_ids_to_tokens(ids), strict=True):
        if tid in added:
            out.append(added[tid].encode("utf-8"))
            continue
        try:
            out.append(bytes(table[c] for c in piece))
        except KeyError:
            return None
    return out


def _sentencepiece_bytes(tokenizer: Any, ids: list[int], is_special: list[bool]) -> list[bytes] | None:
    """Each token's bytes from its SentencePiece piece (``▁`` a space, ``<0xNN>`` one byte, a
    special token none), or None where a piece is not of that form."""
    out: list[bytes] = []
    for special, piece in zip(is_special, tokenizer.convert_ids_to_tokens(ids), strict=True):
        piece = str(piece)
        if special:
            out.append(b"")
        elif len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
            try:
                out.append(bytes([int(piece[3:5], 16)]))
            except ValueError:
                return None
        else:
            out.append(piece.replace("\u2581", " ").encode("utf-8"))
    return out


def _pieces_spell(text: str, pieces: list[bytes] | None) -> list[tuple[int, int, str | None, list[str]]] | None:
    return _spans_from_bytes(text, pieces) if pieces is not None else None


def _spans_from_bytes(text: str, pieces: list[bytes]) -> list[tuple[int, int, str | None, list[str]]] | None:
    """(start, end, piece, parts) per token from its bytes; None if bytes != text."""
    if b"".join(pieces) != text.encode("utf-8"):
        return None
    char_of_byte = [ci for ci, ch in enumerate(text) for _ in ch.encode("utf-8")]
    ranges = _byte_ranges(pieces)
    touching = _touching(ranges, char_of_byte)
    spans: list[tuple[int, int, str | None, list[str]]] = []
    for ti, (bs, be) in enumerate(ranges):
        if be == bs:  # a token of no bytes sits where the previous one ended
            prev = spans[-1][1] if spans else 0
            spans.append((prev, prev, None, []))
            continue
        start, end = char_of_byte[bs], char_of_byte[be - 1] + 1
        spans.append((start, end, *_parts(text, start, end, ti, touching)))
    return spans


def _byte_ranges(pieces: list[bytes]) -> list[tuple[int, int]]:
    """(start, end) byte offsets of each piece in their concatenation."""
    ranges = []
    pos = 0
    for p in pieces:
        ranges.append((pos, pos + len(p)))
        pos += len(p)
    return ranges


def _touching(ranges: list[tuple[int, int]], char_of_byte: list[int]) -> dict[int, list[int]]:
    """Character index -> the tokens that hold some of its bytes, in order (to number the
    pieces of a split character)."""
    touching: dict[int, list[int]] = {}
    for ti, (bs, be) in enumerate(ranges):
        if be > bs:
            for ci in range(char_of_byte[bs], char_of_byte[be - 1] + 1):
                touching.setdefault(ci, []).append(ti)
    return touching


def _parts(text: str, start: int, end: int, ti: int, touching: dict[int, list[int]]) -> tuple[str | None, list[str]]:
    """Token ``ti``'s (piece, parts) over characters start..end-1: each character, marked "k/n"
    where it is split across n tokens; ``piece`` is that "k/n" when the token's only
    non-space character is a split one (its parts are then that character alone)."""
    parts = [
        text[ci] if len(touching[ci]) == 1 else f"{text[ci]} {_share(touching[ci], ti)}" for ci in range(start, end)
    ]
    solid = [ci for ci in range(start, end) if not text[ci].isspace()]
    if len(solid) == 1 and len(touching[solid[0]]) > 1:
        piece = _share(touching[solid[0]], ti)
        return piece, [f"{text[solid[0]]} {piece}"]
    return None, parts


def _share(owners: list[int], ti: int) -> str:
    """Token ``ti``'s place among the tokens that split one character: "k/n"."""
    return f"{owners.index(ti) + 1}/{len(owners)}"


def _display(parts: list[str], piece: str | None) -> str:
    if piece is not None:
        return parts[0]
    shown = "".join(p if len(p) == 1 else f"[{p}]" for p in parts)
    shown = shown.replace("\r", "").replace("\n", "↵").replace("\t", "⇥")
    stripped = shown.strip(" ")
    return stripped if stripped else "␣" * max(1, len(shown))


def _words(
    text: str, spans: list[tuple[int, int]], special: list[bool], names: dict[int, str] | None = None
) -> tuple[list[int], list[Word]]:
    """Word index per token: whitespace-separated spans, each special token its own word.
    ``names``: the text of a special token that holds none of the prompt (a BOS the tokenizer
    prepends), by token index; its word is shown by that name."""
    word_of: list[int] = []
    word_id = -1
    prev_end_ws = True  # start of text counts as after whitespace
    prev_special = False
    for (start, end), is_special in zip(spans, special, strict=True):
        seg = text[start:end]
        body = seg.lstrip()
        lead_ws = len(seg) - len(body) > 0
        if is_special or prev_special or word_id < 0:
            starts_new = True
        elif not body:  # whitespace-only: stays with the word before it
            starts_new = False
        else:
            starts_new = lead_ws or prev_end_ws
        if starts_new:
            word_id += 1
        word_of.append(word_id)
        prev_special = is_special
        prev_end_ws = bool(seg) and seg[-1].isspace()
    words = []
    for w in range(word_id + 1):
        members = [i for i, x in enumerate(word_of) if x == w]
        start = spans[members[0]][0]
        end = spans[members[-1]][1]
        body = text[start:end].strip()
        if not body and names and all(i in names for i in members):
            body = "".join(names[i] for i in members)
        words.append(Word(index=w, text=body or _display(list(text[start:end]), None), tokens=members))
    return word_of, words


def readable(
    tokenizer: Any, text: str, ids: list[int], offsets: list[tuple[int, int]] | None = None
) -> tuple[list[Token], list[Word]]:
    """Tokens with readable labels, character offsets and word indices."""
    specials = _special_ids(tokenizer)
    is_special = [tid in specials for tid in ids]
    pieces = _token_bytes(tokenizer, ids)
    spans = _spans_from_bytes(text, pieces) if pieces is not None else None
    if spans is None and pieces is not None and any(is_special):
        # A special token the tokenizer adds on its own (Gemma's and Llama's BOS) is not in the text.
        spans = _spans_from_bytes(text, [b"" if sp else p for p, sp in zip(pieces, is_special, strict=True)])
    if spans is None:
        # Not byte-level, or a normalizer changed the text: fall back to the tokenizer's offsets.
        spans = _offset_spans(tokenizer, text, ids, is_special, offsets)
    names = {
        i: str(tokenizer.convert_ids_to_tokens(int(ids[i])))
        for i, (start, end, _, _) in enumerate(spans)
        if is_special[i] and start == end
    }
    word_of, words = _words(text, [(s, e) for s, e, _, _ in spans], is_special, names)
    tokens = []
    for i, ((start, end, piece, parts), tid) in enumerate(zip(spans, ids, strict=True)):
        label = names.get(i, text[start:end]) if is_special[i] else _display(parts, piece)
        tokens.append(
            Token(
                index=i,
                id=int(tid),
                text=text[start:end],
                start=start,
                end=end,
                word=word_of[i],
                label=label,
                piece=piece,
                special=is_special[i],
            )
        )
    return tokens, words


def _offset_spans(
    tokenizer: Any, text: str, ids: list[int], is_special: list[bool], offsets: list[tuple[int, int]] | None
) -> list[tuple[int, int, str | None, list[str]]]:
    """Spans from the tokenizer's character offsets; where ``ids`` are not what it gives ``text``
    (reuse joins a prefix and a suffix tokenized apart), from SentencePiece pieces that spell it."""
    if offsets is None:
        try:
            offsets = _offsets(tokenizer, text, len(ids))
        except AttnscopeError:
            spans = _pieces_spell(text, _sentencepiece_bytes(tokenizer, ids, is_special))
            if spans is None:
                raise
            return spans
    return [(s, e, None, list(text[s:e])) for s, e in offsets]


def _offsets(tokenizer: Any, text: str, count: int) -> list[tuple[int, int]]:
    """The tokenizer's character offsets of ``text``, one per token of the ``count`` it gave: with
    or without the special tokens it adds on its own (a BOS), whichever has that many."""
    for add in (False, True):
        offsets = tokenizer(text, add_special_tokens=add, return_offsets_mapping=True)["offset_mapping"]
        if len(offsets) == count:
            return [(int(s), int(e)) for s, e in offsets]
    raise AttnscopeError("offsets_misaligned", count=count)


def check_prompt(prompt: str) -> None:
    if not prompt or not prompt.strip():
        raise AttnscopeError("prompt_empty")


def encode(
    tokenizer: Any,
    prompt: str | None,
    *,
    chat: bool = False,
    system: str | None = None,
    messages: Sequence[Message] | None = None,
) -> Encoded:
    """Tokenize one prompt; with ``chat`` (implied by ``messages``) the conversation
    (system, messages, then the prompt as the last user turn) goes through the chat
    template with the generation prompt, and every token gets its segment."""
    if messages is not None:
        chat = True
    if system is not None and not chat:
        raise AttnscopeError("needs", arg="system", other="chat")
    if prompt is not None or not chat:
        check_prompt(prompt or "")
    if chat:
        return _encode_chat(tokenizer, prompt, system, messages)
    assert prompt is not None
    ids = list(tokenizer(prompt, add_special_tokens=True)["input_ids"])
    if not ids:
        raise AttnscopeError("no_tokens")
    tokens, words = readable(tokenizer, prompt, ids)
    return Encoded(text=prompt, ids=ids, tokens=tokens, words=words, chat=False)


def encode_prompt(tokenizer: Any, prompt: str | None, chat: ChatSpec | None = None) -> Encoded:
    """:func:`encode` for an analysis's ``chat`` argument (None: the prompt as it is)."""
    if chat is None:
        return encode(tokenizer, prompt)
    return encode(tokenizer, prompt, chat=True, system=chat.system, messages=chat.messages)


def _encode_chat(tokenizer: Any, prompt: str | None, system: str | None, messages: Sequence[Message] | None) -> Encoded:
    from attnscope.core.prompt.segments import chat_messages, label_tokens, render_chat

    rendered = render_chat(tokenizer, chat_messages(prompt, system, messages))
    ids = [int(i) for i in tokenizer(rendered.text, add_special_tokens=False)["input_ids"]]
    if not ids:
        raise AttnscopeError("no_tokens")
    tokens, words = readable(tokenizer, rendered.text, ids)
    segments = label_tokens(tokens, rendered.keys)
    # What a user who tokenizes the rendered text the usual way gets (special tokens added):
    # a BOS doubled, or a special token split, shows here.
    plain = [int(i) for i in tokenizer(rendered.text)["input_ids"]]
    template = replace(rendered.template, reencode_matches=plain == rendered.template_ids)
    return Encoded(
        text=rendered.text, ids=ids, tokens=tokens, words=words, chat=True, segments=segments, template=template
    )


def check_length(n_tokens: int, max_positions: int | None) -> None:
    if max_positions and n_tokens > max_positions:
        raise AttnscopeError("too_long", n=n_tokens, limit=max_positions)


def _word_list(enc: Encoded) -> str:
    shown = [w.text for w in enc.words if w.text]
    if len(shown) > 30:
        shown = shown[:30] + ["…"]
    return ", ".join(shown)


_NAMES = {"query": ("query", "occurrence"), "key": ("key", "key_occurrence")}


def find_span(
    enc: Encoded,
    needle: str,
    occurrence: int | None = None,
    warnings: list[ResultWarning] | None = None,
    role: Literal["query", "key"] = "query",
) -> list[int]:
    """Token indices covering the ``occurrence``-th (1-based) match of ``needle`` in the text.

    An ambiguous ``needle`` without ``occurrence`` takes the first match and adds a warning
    (``ambiguous_query`` or ``ambiguous_key``, after ``role``) to ``warnings``.
    """
    opt, occ_opt = _NAMES[role]
    if not needle.strip():
        raise AttnscopeError("is_empty", arg=opt)
    hits = []
    at = enc.text.find(needle)
    while at >= 0:
        hits.append(at)
        at = enc.text.find(needle, at + 1)
    if not hits and prepended_bos(enc.tokens) and needle.strip() == enc.tokens[0].label:
        # The BOS the tokenizer prepends is in no text: it is found by its name alone.
        if occurrence not in (None, 1):
            raise AttnscopeError("occurrence_range", arg=occ_opt, n=occurrence, text=repr(needle), count=1)
        return [0]
    if not hits:
        raise AttnscopeError("not_in_prompt", arg=opt, text=repr(needle), words=_word_list(enc))
    if occurrence is None:
        if len(hits) > 1 and warnings is not None:
            code: WarningCode = "ambiguous_query" if role == "query" else "ambiguous_key"
            warnings.append(ResultWarning(code=code, text=needle, count=len(hits)))
        occurrence = 1
    if not 1 <= occurrence <= len(hits):
        raise AttnscopeError("occurrence_range", arg=occ_opt, n=occurrence, text=repr(needle), count=len(hits))
    start = hits[occurrence - 1]
    end = start + len(needle)
    span = [t.index for t in enc.tokens if t.start < end and t.end > start]
    _check_aligned(enc, needle, span, start, end, opt)
    return span


def _check_aligned(enc: Encoded, needle: str, span: list[int], start: int, end: int, opt: str) -> None:
    """Refuse a match that cuts a token: one whose tokens hold a character of the text beyond the
    match that no other token holds (not a space, nor a character whose UTF-8 bytes a neighbour
    shares), as ``cat`` in a prompt that tokenized ``cats`` as one token. The error says how the
    prompt tokenized that stretch. A BOS holds no text and never matches."""
    lo, hi = enc.tokens[span[0]].start, enc.tokens[span[-1]].end
    inside = set(span)
    others = [t for t in enc.tokens if t.index not in inside and t.end > lo and t.start < hi]

    def own(c: int) -> bool:
        return not enc.text[c].isspace() and not any(t.start <= c < t.end for t in others)

    if not any(own(c) for c in (*range(lo, start), *range(end, hi))):
        return
    shown = " + ".join(f"{enc.tokens[i].label!r} ({i})" for i in span)
    raise AttnscopeError(
        "span_cuts_token", arg=opt, text=repr(needle), stretch=repr(enc.text[lo:hi].strip()), shown=shown
    )


def find_query(
    enc: Encoded, query: str, occurrence: int | None = None, warnings: list[ResultWarning] | None = None
) -> Query:
    """The span of ``query`` in the text (see :func:`find_span`); its position is the span's last token."""
    span = find_span(enc, query, occurrence, warnings)
    return Query(index=span[-1], text=query, span=span)


def query_at(enc: Encoded, pos: int, name: str = "pos") -> Query:
    """The token at ``pos`` (negative counts from the end) as a query; ``name`` is what the caller calls it."""
    n = len(enc.tokens)
    if not -n <= pos < n:
        raise AttnscopeError("pos_range", arg=name, n=pos, count=n, last=n - 1, neg=n)
    index = pos % n
    return Query(index=index, text=enc.tokens[index].label, span=[index])


def as_text(spec: str | Text) -> Text:
    """A piece of text to find (a ``str`` is its first occurrence)."""
    return spec if isinstance(spec, Text) else Text(spec)


def pick_query(enc: Encoded, query: QuerySpec, warnings: list[ResultWarning] | None = None) -> Query:
    """The query token: the last token of a text, a position, or by default the last token."""
    if query is None:
        return query_at(enc, -1)
    if isinstance(query, bool):
        raise AttnscopeError("query_type", arg="query", value=repr(query))
    if isinstance(query, int):
        return query_at(enc, query)
    found = as_text(query)
    return find_query(enc, found.text, found.occurrence, warnings)
