"""The readable-token invariants of the tiny tier's property tests, on the real Qwen tokenizer."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support.properties import any_text, check_readable, prompts


@pytest.mark.slow
@settings(max_examples=5 * settings().max_examples)
@given(text=st.one_of(prompts, any_text), chat=st.booleans())
def test_readable_tokens_with_the_real_qwen_tokenizer(real_tokenizer: Any, text: str, chat: bool) -> None:
    check_readable(real_tokenizer, text, chat)


@pytest.fixture(scope="session")
def real_tokenizer(real_model: Any) -> Any:
    from attnscope.model import load_tokenizer

    return load_tokenizer(str(real_model))
