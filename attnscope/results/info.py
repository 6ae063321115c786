"""Result of ``attnscope info``: a model's config facts, read without loading its weights.

Keys use the Hugging Face config names. Nothing here reads files or prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from attnscope.results import Result
from attnscope.results.common import ResultWarning

ATTN_IMPLEMENTATION = "attnscope: sdpa + exact fp32 rows"  # the attention every command runs (the capture)


@dataclass(frozen=True)
class KVGroup:
    """One KV head and the query heads that share it (head h reads KV head h // groups)."""

    kv_head: int
    heads: list[int]


@dataclass(frozen=True)
class InfoResult(Result):
    SCHEMA = "attnscope.info/2"

    model: str  # the --model given
    source: Literal["hub", "folder", "gguf"]
    read_from: str  # the file the facts came from (a hub id's config.json, a folder's, or the GGUF file)
    model_type: str
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    gqa_groups: list[KVGroup]  # the query heads that share each KV head
    head_dim: int
    hidden_size: int  # size of a position's vector
    intermediate_size: int  # MLP width
    # RoPE base (rope_parameters['rope_theta'] in transformers 5, or the GGUF's rope.freq_base); null if unknown
    rope_theta: float | None
    max_position_embeddings: int | None
    vocab_size: int  # rows of the embedding table
    num_parameters: int | None  # the parameter count (from the tensor shapes); null if unknown
    num_parameters_from: Literal[
        "config", "gguf_tensors", "none"
    ]  # the config's shapes, the file's tensors, or not computed
    tie_word_embeddings: bool | None  # the output layer shares the embedding; null if unknown
    attn_implementation: str  # how attnscope runs attention: sdpa plus exact fp32 rows
    chat_template: bool  # the tokenizer carries a chat template (--chat works)
    num_parameters_error: str | None = None  # why it was not computed (the exception's class)
    gguf_metadata_keys: int | None = None  # GGUF: how many metadata keys and tensors its header lists
    gguf_tensors: int | None = None
    separate_output_weight: int | None = None  # GGUF: output.weight stored apart from token_embd.weight (its size)
    tokenizer_unread: bool = False  # the tokenizer files could not be read, so chat_template is reported absent
    warnings: list[ResultWarning] = field(default_factory=list)
    # each layer's attention: "full", "sliding" (a window of sliding_window keys) or "linear"
    # (a linear-attention layer: no attention weights, so attnscope captures nothing there)
    layer_kinds: list[str] = field(default_factory=list)
    sliding_window: int | None = None  # the window of the "sliding" layers, in keys; null when none
    # each layer kind's own RoPE base where the config gives the kinds different ones (Gemma 3: 1e6 for
    # "full", 1e4 for "sliding"); empty when one base (rope_theta) serves every layer
    rope_theta_by_kind: dict[str, float] = field(default_factory=dict)
