"""Tiny in-process Qwen2 models and a byte-level BPE tokenizer trained here.

Nothing is downloaded: the tokenizer is trained on a few Korean and English lines
(small enough that Korean syllables split across tokens), and the models are random
with a fixed seed and GQA (num_key_value_heads < num_attention_heads).
"""

from __future__ import annotations

from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

CORPUS = [
    "민수는 사과를 샀다. 그는 그것을 먹었다.",
    "지수는 책을 읽었다. 그녀는 그것을 좋아했다.",
    "The cat sat on the mat. It was happy.",
    "Attention mixes earlier tokens by weights that sum to one.",
    "사과는 맛있다. 토마토는 과일일까 채소일까?",
    "hello world, hello attention",
]

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def train_tokenizer(vocab_size: int = 300) -> PreTrainedTokenizerFast:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(CORPUS * 3, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        padding_side="left",
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def make_config(
    vocab_size: int,
    num_hidden_layers: int = 3,
    num_attention_heads: int = 4,
    num_key_value_heads: int = 2,
    head_dim: int = 8,
) -> Qwen2Config:
    return Qwen2Config(
        vocab_size=vocab_size,
        hidden_size=num_attention_heads * head_dim,
        intermediate_size=64,
        num_hidden_layers=num_hidden_layers,
        num_attention_heads=num_attention_heads,
        num_key_value_heads=num_key_value_heads,
        max_position_embeddings=128,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
        tie_word_embeddings=False,
        pad_token_id=0,
    )


def make_model(config: Qwen2Config, seed: int = 0) -> Qwen2ForCausalLM:
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config)
    # Random init is too gentle to give peaked rows; widen q/k so softmax rows differ.
    with torch.no_grad():
        for layer in model.model.layers:
            layer.self_attn.q_proj.weight.mul_(8.0)
            layer.self_attn.k_proj.weight.mul_(8.0)
    return model.eval()


def save_model_dir(path: Path, **config_kwargs: int) -> Path:
    tok = train_tokenizer()
    model = make_model(make_config(len(tok), **config_kwargs))
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


def with_bos(fast: PreTrainedTokenizerFast) -> tuple[PreTrainedTokenizerFast, int]:
    """A copy of ``fast`` that prepends a ``<bos>`` special token, as Gemma's and Llama's do; and its id."""
    import copy

    from tokenizers import processors

    tok = copy.deepcopy(fast)
    tok.add_special_tokens({"bos_token": "<bos>"})
    bos = tok.convert_tokens_to_ids("<bos>")
    tok._tokenizer.post_processor = processors.TemplateProcessing(single="<bos> $A", special_tokens=[("<bos>", bos)])
    return tok, bos
