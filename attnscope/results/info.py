"""Result of ``attnscope info``: a model's config facts, read without loading its weights.

Keys use the Hugging Face config names. Nothing here reads files or prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from attnscope.results import Result


@dataclass(frozen=True)
class KVGroup:
    """One KV head and the query heads that share it (head h reads KV head h // groups)."""

    kv_head: int
    heads: list[int]


@dataclass(frozen=True)
class InfoResult(Result):
    SCHEMA = "attnscope.info/1"

    model: str
    source: str  # hub | folder | gguf
    read_from: str  # the file the facts came from
    model_type: str
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    gqa_groups: list[KVGroup]
    head_dim: int
    hidden_size: int
    intermediate_size: int
    rope_theta: float | None
    max_position_embeddings: int | None
    vocab_size: int
    num_parameters: int | None
    num_parameters_from: str  # what the count was computed from
    tie_word_embeddings: bool | None
    attn_implementation: str
    chat_template: bool
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
