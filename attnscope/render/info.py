"""Human view of an InfoResult: the config facts, with the HF config names beside each value."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from attnscope.render import Ctx, view
from attnscope.results.info import InfoResult


def _num(value: int | float | None) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.0f}" if value.is_integer() else f"{value:g}"
    return f"{value:,}"


@view.register
def render(r: InfoResult, ctx: Ctx) -> RenderableType:
    head = Text()
    head.append(r.model, style="bold")
    head.append(f"\n{r.model_type}, read from {r.read_from}; no weights loaded", style="dim")
    table = Table(box=None, pad_edge=False, padding=(0, 2), show_header=False)
    table.add_column("name", style="dim", no_wrap=True)
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("what it is", style="dim")
    groups = r.num_attention_heads // max(1, r.num_key_value_heads)
    rows = [
        ("num_hidden_layers", _num(r.num_hidden_layers), "layers stacked"),
        ("num_attention_heads", _num(r.num_attention_heads), "query heads per layer"),
        ("num_key_value_heads", _num(r.num_key_value_heads), f"K/V heads per layer ({groups} query heads share each)"),
        ("head_dim", _num(r.head_dim), "size of one head's q/k/v"),
        ("hidden_size", _num(r.hidden_size), "size of a position's vector"),
        ("intermediate_size", _num(r.intermediate_size), "MLP width"),
        ("rope_theta", _num(r.rope_theta), "RoPE base (rotation speeds)"),
        ("max_position_embeddings", _num(r.max_position_embeddings), "longest input allowed"),
        ("vocab_size", _num(r.vocab_size), "rows of the embedding table"),
        ("num_parameters", _num(r.num_parameters), f"from {r.num_parameters_from}"),
        (
            "tie_word_embeddings",
            "-" if r.tie_word_embeddings is None else str(r.tie_word_embeddings).lower(),
            "output shares the embedding",
        ),
        ("chat_template", "yes" if r.chat_template else "no", "tokenizer has one (--chat)"),
    ]
    for name, value, what in rows:
        table.add_row(name, value, what)
    gqa = Table(box=None, pad_edge=False, padding=(0, 2), show_header=True, header_style="dim")
    gqa.add_column("KV head", justify="right", no_wrap=True)
    gqa.add_column("query heads that share it")
    for g in r.gqa_groups:
        gqa.add_row(str(g.kv_head), ", ".join(str(h) for h in g.heads))
    attention = Text("attention  ", style="dim")
    attention.append(r.attn_implementation)
    parts: list[RenderableType] = [head, Text(""), table, attention, Text("")]
    parts += [Text("GQA grouping: which query heads share each KV head", style="bold"), gqa]
    for note in r.notes:
        parts.append(Text(note, style="dim"))
    return Group(*parts)
