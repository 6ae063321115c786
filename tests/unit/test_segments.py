"""Segments of a chat-templated prompt, found from the tokenizer's own template.

Each test gives the tiny tokenizer (trained in conftest) a small chat template and checks
that every message's tokens spell exactly its content, that the template's own tokens
are labelled ``template``, and what the template did (an inserted system message, a
missing generation prompt, a doubled BOS). No model runs here.
"""

from __future__ import annotations

from typing import Any

import pytest

from attnscope.core.prompt.segments import chat_messages, parse_messages
from attnscope.errors import AttnscopeError
from attnscope.results.segments import Message


@pytest.mark.parametrize(
    ("doc", "fragment"),
    [
        ({"role": "user", "content": "x"}, "expected a non-empty JSON list"),
        ([], "expected a non-empty JSON list"),
        (["hello"], "[0]: expected an object with 'role' and 'content'"),
        ([{"role": "user"}], "[0]: expected an object with 'role' and 'content'"),
        ([{"role": "user", "content": "x"}, {"role": "robot", "content": "x"}], "[1]: unknown role 'robot'"),
        ([{"role": "user", "content": 3}], "'content' must be a string"),
        ([{"role": "user", "content": "x", "name": "a"}], "unexpected field(s) name"),
    ],
)
def test_bad_messages(doc: Any, fragment: str) -> None:
    with pytest.raises(AttnscopeError) as err:
        parse_messages(doc)
    assert fragment in err.value.message


def test_conversation_order_and_conflicts() -> None:
    msgs = [Message(role="user", content="a"), Message(role="assistant", content="b")]
    got = chat_messages("c", "s", msgs)
    assert [(m.role, m.content) for m in got] == [("system", "s"), ("user", "a"), ("assistant", "b"), ("user", "c")]
    with pytest.raises(AttnscopeError, match="system message is given twice"):
        chat_messages(None, "s", [Message(role="system", content="t")])
    with pytest.raises(AttnscopeError, match="every message is empty"):
        chat_messages(None, None, [Message(role="user", content=" ")])
