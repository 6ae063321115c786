"""Chat messages and the segments of the text the chat template makes of them.

Every token of a chat-templated prompt gets one segment: the template's own tokens
(special tokens, role headers, the generation prompt), the system message (given, or
inserted by the template), or one user or assistant turn. The boundaries come from the
tokenizer's own template, never from model-specific strings: the messages are rendered
one prefix at a time (turn k spans what rendering k messages added to k - 1), each
message's content is located by rendering it once more with a marker in its place, and
an inserted system message is what the template writes when no system message is given
where it would put a given one (found with a marker system message). The template
facts (inserted system message, whether re-tokenizing the text gives the template's
own ids, whether a generation prompt was added) go into a :class:`ChatTemplate`.

This module does not run the model, read files or print.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, get_args

from attnscope.errors import AttnscopeError
from attnscope.results.common import Token
from attnscope.results.segments import ChatTemplate, Message, Role, Segment, SegmentedToken, SegmentKind

ROLES: tuple[Role, ...] = get_args(Role)
_MARK = "\u2063ATTNSCOPE\u2063MARK\u2063"  # invisible separators around a word no template writes

# A character's origin: (kind, message index, turn, inserted).
_Key = tuple[SegmentKind, int | None, int | None, bool]
_TEMPLATE: _Key = ("template", None, None, False)


def parse_messages(doc: Any, where: str = "messages") -> list[Message]:
    """The messages of a Hugging Face chat list ``[{"role": ..., "content": ...}, ...]``."""
    if not isinstance(doc, list) or not doc:
        raise AttnscopeError("messages_list", where=where)
    out = []
    for i, item in enumerate(doc):
        if not isinstance(item, dict) or "role" not in item or "content" not in item:
            raise AttnscopeError("messages_item", where=where, i=i)
        extra = sorted(set(item) - {"role", "content"})
        if extra:
            raise AttnscopeError("messages_extra", where=where, i=i, extra=", ".join(extra))
        role, content = item["role"], item["content"]
        if role not in ROLES:
            raise AttnscopeError("messages_role", where=where, i=i, role=repr(role), roles=", ".join(ROLES))
        if not isinstance(content, str):
            raise AttnscopeError("messages_content", where=where, i=i)
        out.append(Message(role=role, content=content))
    return out


def chat_messages(prompt: str | None, system: str | None, messages: Sequence[Message] | None) -> list[Message]:
    """The conversation to render: the system message, the given messages, then the prompt as the last user turn."""
    out = list(messages or [])
    if system is not None:
        if any(m.role == "system" for m in out):
            raise AttnscopeError("system_twice")
        out.insert(0, Message(role="system", content=system))
    if prompt is not None:
        out.append(Message(role="user", content=prompt))
    if not out:
        raise AttnscopeError("messages_none")
    if all(not m.content.strip() for m in out):
        raise AttnscopeError("messages_empty")
    return out


@dataclass(frozen=True)
class Rendered:
    """The template's text for the messages and the origin of each character."""

    text: str
    keys: list[_Key]  # one per character of text
    template: ChatTemplate
    template_ids: list[int]  # apply_chat_template(tokenize=True)


def _apply(tokenizer: Any, messages: Sequence[Message], generation_prompt: bool) -> str:
    dicts = [{"role": m.role, "content": m.content} for m in messages]
    return str(tokenizer.apply_chat_template(dicts, tokenize=False, add_generation_prompt=generation_prompt))


def _try_apply(tokenizer: Any, messages: Sequence[Message], generation_prompt: bool) -> str | None:
    try:
        return _apply(tokenizer, messages, generation_prompt)
    except Exception:  # a template may refuse a prefix (e.g. one that must start with a user turn)
        return None


def _template_ids(tokenizer: Any, messages: Sequence[Message]) -> list[int]:
    dicts = [{"role": m.role, "content": m.content} for m in messages]
    got = tokenizer.apply_chat_template(dicts, tokenize=True, add_generation_prompt=True)
    if isinstance(got, dict) or hasattr(got, "keys"):
        got = got["input_ids"]
    if got and isinstance(got[0], list):
        got = got[0]
    return [int(i) for i in got]


def _content_at(tokenizer: Any, messages: Sequence[Message], k: int, rendered: str, lo: int) -> tuple[int, int] | None:
    """Where message k's content sits in ``rendered`` (the text of messages[:k+1]), at or after ``lo``."""
    content = messages[k].content
    if not content:
        return None
    marked = list(messages[: k + 1])
    marked[k] = Message(role=messages[k].role, content=_MARK)
    text = _try_apply(tokenizer, marked, False)
    at = text.find(_MARK) if text is not None else -1
    for body in (content, content.strip()):
        if body and at >= lo and rendered[at : at + len(body)] == body:
            return at, at + len(body)
    for body in (content, content.strip()):  # the template changed what comes before: search the turn
        found = rendered.find(body, lo) if body else -1
        if found >= 0:
            return found, found + len(body)
    return None


def _inserted_system(tokenizer: Any, messages: Sequence[Message], text: str) -> tuple[int, int] | None:
    """The span of the system message the template wrote although none was given, or None."""
    if any(m.role == "system" for m in messages):
        return None
    marked = _try_apply(tokenizer, [Message(role="system", content=_MARK), *messages], True)
    if marked is None or _MARK not in marked:
        return None
    before, after = marked.split(_MARK, 1)
    if len(text) > len(before) + len(after) and text.startswith(before) and text.endswith(after):
        body = text[len(before) : len(text) - len(after)]
        if body.strip():
            return len(before), len(before) + len(body)
    return None


def render_chat(tokenizer: Any, messages: Sequence[Message]) -> Rendered:
    """The chat template's text for ``messages`` with the generation prompt, and each character's origin."""
    if not getattr(tokenizer, "chat_template", None):
        raise AttnscopeError("chat_template", arg="chat")
    text = _apply(tokenizer, messages, True)
    without = _try_apply(tokenizer, messages, False)
    keys: list[_Key] = [_TEMPLATE] * len(text)
    inserted = _inserted_system(tokenizer, messages, text)
    if inserted is not None:
        keys[inserted[0] : inserted[1]] = [("system", None, None, True)] * (inserted[1] - inserted[0])
    turns: dict[str, int] = {}
    region = 0  # where message k's turn starts: the end of what messages[:k] render to
    for k, message in enumerate(messages):
        turns[message.role] = turns.get(message.role, 0) + 1
        prefix = _try_apply(tokenizer, messages[: k + 1], False)
        incremental = prefix is not None and text.startswith(prefix)
        span = _content_at(tokenizer, messages, k, prefix if prefix is not None and incremental else text, region)
        if span is not None:
            start, end = span
            keys[start:end] = [(message.role, k, turns[message.role], False)] * (end - start)
        if prefix is not None and incremental:
            region = len(prefix)
        elif span is not None:
            region = span[1]
    template = ChatTemplate(
        inserted_system=None if inserted is None else text[inserted[0] : inserted[1]],
        reencode_matches=True,  # filled in by encode_chat, which has both id lists
        generation_prompt=without is not None and text != without,
    )
    return Rendered(text=text, keys=keys, template=template, template_ids=_template_ids(tokenizer, messages))


def label_tokens(tokens: Sequence[Token], keys: Sequence[_Key]) -> list[Segment]:
    """The segments of ``tokens``: a token is a message's if any character it covers is that
    message's content, else the template's. Segments are numbered in order of their first token."""
    index_of: dict[_Key, int] = {}
    members: list[list[int]] = []
    order: list[_Key] = []
    for token in tokens:
        covered = {keys[c] for c in range(token.start, min(token.end, len(keys)))}
        own = sorted((k for k in covered if k != _TEMPLATE), key=lambda k: (k[1] is None, k[1] or 0))
        key = own[0] if own else _TEMPLATE
        if key not in index_of:
            index_of[key] = len(order)
            order.append(key)
            members.append([])
        members[index_of[key]].append(token.index)
    return [
        Segment(index=i, kind=kind, tokens=members[i], message=message, turn=turn, inserted=inserted)
        for i, (kind, message, turn, inserted) in enumerate(order)
    ]


def prompt_segments(segments: Sequence[Segment], n_tokens: int) -> list[Segment]:
    """A chat prompt's segments, or one "prompt" segment holding every token of a plain prompt."""
    return list(segments) or [Segment(index=0, kind="prompt", tokens=list(range(n_tokens)))]


def segmented(tokens: Sequence[Token], segments: Sequence[Segment]) -> list[SegmentedToken]:
    """Each token with the index of its segment."""
    segment_of = {i: s.index for s in segments for i in s.tokens}
    return [
        SegmentedToken(**{f.name: getattr(t, f.name) for f in dataclasses.fields(t)}, segment=segment_of[t.index])
        for t in tokens
    ]
