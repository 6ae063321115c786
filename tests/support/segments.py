"""Small chat templates for the segment tests, and a tiny model folder that carries one."""

from __future__ import annotations

import copy
from typing import Any

from attnscope.core.prompt.tokens import Encoded

from support import tiny

# A template that writes a default system message when none is given (as Qwen2.5's does),
# in its own markup: nothing below may depend on the ChatML strings.
DEFAULT_SYSTEM = "You are a helpful cat."


INSERTING = (
    "{% if messages[0]['role'] != 'system' %}[SYS] " + DEFAULT_SYSTEM + " [/SYS]\n{% endif %}"
    "{% for m in messages %}"
    "{% if m['role'] == 'system' %}[SYS] {{ m['content'] }} [/SYS]\n"
    "{% else %}<|im_start|>{{ m['role'] }}: {{ m['content'] | trim }}<|im_end|>\n{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant: {% endif %}"
)


NO_GENERATION_PROMPT = "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"


def with_template(tokenizer: Any, template: str) -> Any:
    tok = copy.deepcopy(tokenizer)
    tok.chat_template = template
    return tok


def spelled(enc: Encoded, segment: int) -> str:
    """The characters a segment's tokens cover, in order (a split character once)."""
    chars = sorted({c for i in enc.segments[segment].tokens for c in range(enc.tokens[i].start, enc.tokens[i].end)})
    return "".join(enc.text[c] for c in chars)


def kinds(enc: Encoded) -> list[tuple[str, int | None, int | None, bool]]:
    return [(s.kind, s.message, s.turn, s.inserted) for s in enc.segments]


def folder_with_template(tmp_path: Any, model_dir: Any, template: str) -> str:
    """A copy of the tiny model folder whose tokenizer has ``template``."""
    import shutil

    target = tmp_path / "tiny-inserting"
    shutil.copytree(model_dir, target)
    tok = tiny.train_tokenizer()
    tok.chat_template = template
    tok.save_pretrained(target)
    return str(target)
