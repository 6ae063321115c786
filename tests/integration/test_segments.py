"""Segments of a chat-templated prompt, found from the tokenizer's own template.

Each test gives the tiny tokenizer (trained in conftest) a small chat template and checks
that every message's tokens spell exactly its content, that the template's own tokens
are labelled ``template``, and what the template did (an inserted system message, a
missing generation prompt, a doubled BOS). No model runs here.
"""

from __future__ import annotations

import copy
from typing import Any

from attnscope.core.prompt.segments import parse_messages
from attnscope.core.prompt.tokens import encode

from support.segments import (
    DEFAULT_SYSTEM,
    INSERTING,
    NO_GENERATION_PROMPT,
    folder_with_template,
    kinds,
    spelled,
    with_template,
)


def test_system_and_user_on_the_conftest_template(tokenizer: Any) -> None:
    enc = encode(tokenizer, "민수는 사과를 샀다.", chat=True, system="짧게 답해.")
    assert kinds(enc) == [("template", None, None, False), ("system", 0, 1, False), ("user", 1, 1, False)]
    assert spelled(enc, 1) == "짧게 답해."
    assert spelled(enc, 2) == "민수는 사과를 샀다."
    # every token has exactly one segment, and segments partition the tokens
    assert sorted(i for s in enc.segments for i in s.tokens) == list(range(len(enc.tokens)))
    # the template's tokens are the special tokens, role headers and the generation prompt
    template = spelled(enc, 0)
    assert template == "<|im_start|>system\n<|im_end|>\n<|im_start|>user\n<|im_end|>\n<|im_start|>assistant\n"
    assert enc.template is not None
    assert enc.template.inserted_system is None
    assert enc.template.generation_prompt is True
    assert enc.template.reencode_matches is True


def test_multi_turn_with_a_content_equal_to_a_role_name(tokenizer: Any) -> None:
    msgs = parse_messages(
        [
            {"role": "user", "content": "hello world"},
            {"role": "assistant", "content": "hello attention"},
            {"role": "user", "content": "user"},  # also the role header's word
        ]
    )
    enc = encode(tokenizer, None, messages=msgs)
    assert enc.chat
    assert kinds(enc) == [
        ("template", None, None, False),
        ("user", 0, 1, False),
        ("assistant", 1, 1, False),
        ("user", 2, 2, False),
    ]
    assert [spelled(enc, i) for i in (1, 2, 3)] == ["hello world", "hello attention", "user"]
    # the last "user" token in the text is the content, the header's "user" is the template's
    header_user = enc.text.rindex("user\nuser")
    content_tokens = enc.segments[3].tokens
    assert all(enc.tokens[i].start > header_user + 4 for i in content_tokens)


def test_inserted_system_message_is_found_and_labelled(tokenizer: Any) -> None:
    tok = with_template(tokenizer, INSERTING)
    enc = encode(tok, "  The cat sat on the mat.  ", chat=True)  # the template trims the content
    assert enc.template is not None
    assert enc.template.inserted_system == DEFAULT_SYSTEM
    assert kinds(enc) == [("template", None, None, False), ("system", None, None, True), ("user", 0, 1, False)]
    assert spelled(enc, 1).strip() == DEFAULT_SYSTEM
    assert spelled(enc, 2).strip() == "The cat sat on the mat."
    # with a system message given, nothing is inserted and the given one is message 0
    given = encode(tok, "The cat sat.", chat=True, system="Be brief.")
    assert given.template is not None and given.template.inserted_system is None
    assert kinds(given)[1] == ("system", 0, 1, False)
    assert spelled(given, 1).strip() == "Be brief."


def test_missing_generation_prompt(tokenizer: Any) -> None:
    enc = encode(with_template(tokenizer, NO_GENERATION_PROMPT), "hello world", chat=True)
    assert enc.template is not None
    assert enc.template.generation_prompt is False
    assert enc.text.endswith("<|im_end|>\n")


def test_doubled_bos_when_the_text_is_tokenized_again(tokenizer: Any) -> None:
    from tokenizers.processors import TemplateProcessing

    tok = copy.deepcopy(tokenizer)
    bos = tok.convert_tokens_to_ids("<|endoftext|>")
    tok._tokenizer.post_processor = TemplateProcessing(
        single="<|endoftext|> $A", special_tokens=[("<|endoftext|>", bos)]
    )
    tok.chat_template = "<|endoftext|>" + tokenizer.chat_template
    enc = encode(tok, "hello world", chat=True)
    assert enc.template is not None
    assert enc.template.reencode_matches is False  # tokenizer(text) adds a second <|endoftext|>
    assert enc.ids.count(bos) == 1  # what the model reads has one, as apply_chat_template gives


def test_plain_prompt_has_no_segments(tokenizer: Any) -> None:
    enc = encode(tokenizer, "hello world")
    assert enc.segments == [] and enc.template is None


def test_tokens_chat_json_reports_the_inserted_system_message(cli: Any, model_dir: Any, tmp_path: Any) -> None:
    import json

    folder = folder_with_template(tmp_path, model_dir, INSERTING)
    res = cli("tokens", "The cat sat on the mat.", "--chat", "--model", folder, "--json")
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["schema"] == "attnscope.tokens/2"
    assert doc["template"] == {"inserted_system": DEFAULT_SYSTEM, "reencode_matches": True, "generation_prompt": True}
    kinds = [(s["kind"], s["inserted"]) for s in doc["segments"]]
    assert kinds == [("template", False), ("system", True), ("user", False)]
    for token in doc["tokens"]:  # each token's segment lists it
        assert token["index"] in doc["segments"][token["segment"]]["tokens"]
    system = "".join(doc["text"][t["start"] : t["end"]] for t in doc["tokens"] if t["segment"] == 1)
    assert system.strip() == DEFAULT_SYSTEM
    view = cli("tokens", "The cat sat on the mat.", "--chat", "--model", folder, "--width", "200")
    assert f"The template inserted a system message you did not write: “{DEFAULT_SYSTEM}”" in view.stdout
    assert "system (inserted)" in view.stdout
    ko = cli("tokens", "The cat sat on the mat.", "--chat", "--model", folder, "--lang", "ko", "--width", "200")
    assert "시스템 메시지를 쓰지 않았는데 템플릿이 넣었다" in ko.stdout and "시스템(템플릿이 넣음)" in ko.stdout


def test_tokens_warns_about_a_missing_generation_prompt(cli: Any, model_dir: Any, tmp_path: Any) -> None:
    folder = folder_with_template(tmp_path, model_dir, NO_GENERATION_PROMPT)
    res = cli("tokens", "hello world", "--chat", "--model", folder, "--width", "200")
    assert res.exit_code == 0, res.stderr
    assert "The template added no generation prompt" in res.stdout


def test_plain_tokens_have_one_prompt_segment(cli: Any, model_dir: Any) -> None:
    import json

    doc = json.loads(cli("tokens", "hello world", "--model", str(model_dir), "--json").stdout)
    assert doc["template"] is None and [s["kind"] for s in doc["segments"]] == ["prompt"]
    assert {t["segment"] for t in doc["tokens"]} == {0}


def test_tokens_messages_conflicts(cli: Any, model_dir: Any, tmp_path: Any) -> None:
    messages = tmp_path / "m.json"
    messages.write_text('[{"role": "system", "content": "a"}]', encoding="utf-8")
    res = cli("tokens", "hi", "--messages", str(messages), "--system", "b", "--model", str(model_dir))
    assert res.exit_code == 2 and res.stdout == "" and "system message is given twice" in res.stderr
    messages.write_text('[{"role": "narrator", "content": "a"}]', encoding="utf-8")
    res = cli("tokens", "--messages", str(messages), "--model", str(model_dir))
    assert res.exit_code == 6 and res.stdout == "" and "unknown role 'narrator'" in res.stderr


def test_trace_reads_a_messages_file(cli: Any, model_dir: Any, tmp_path: Any) -> None:
    import json

    messages = tmp_path / "m.json"
    messages.write_text(json.dumps([{"role": "user", "content": "hello world"}]), encoding="utf-8")
    res = cli("trace", "--messages", str(messages), "--model", str(model_dir), "--json")
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["text"] == "<|im_start|>user\nhello world<|im_end|>\n<|im_start|>assistant\n"
