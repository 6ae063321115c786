"""Human view of an InfoResult: the config facts, with the HF config names beside each value."""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from attnscope.render import Ctx
from attnscope.render.common import ranges
from attnscope.render.fit import Fitted, TableOr
from attnscope.render.i18n import Lang, t
from attnscope.results.info import ATTN_IMPLEMENTATION, InfoResult


def _num(value: int | float | None) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.0f}" if value.is_integer() else f"{value:g}"
    return f"{value:,}"


def _kinds(r: InfoResult, lang: Lang) -> Text:
    """Which layers have full attention, a sliding window, or linear attention (never captured)."""
    line = Text(t(lang, "info.layer_kinds"), style="dim")
    parts = []
    for kind in ("full", "sliding", "linear"):
        layers = [i for i, k in enumerate(r.layer_kinds) if k == kind]
        if layers:
            parts.append(t(lang, f"info.kind.{kind}", layers=ranges(lang, layers), window=r.sliding_window))
    other = sorted({k for k in r.layer_kinds if k not in ("full", "sliding", "linear")})
    parts += [f"{k} {ranges(lang, [i for i, x in enumerate(r.layer_kinds) if x == k])}" for k in other]
    line.append("; ".join(parts) if parts else "-")
    return line


def _rope_what(r: InfoResult, lang: Lang) -> str:
    """What rope_theta is; with a base per layer kind (Gemma 3), each kind's base."""
    if not r.rope_theta_by_kind:
        return t(lang, "info.rope_theta")
    order: list[str] = [k for k in ("full", "sliding", "linear") if k in r.rope_theta_by_kind]
    order += sorted(k for k in r.rope_theta_by_kind if k not in order)
    parts = [
        t(lang, f"info.rope_kind.{k}", value=_num(r.rope_theta_by_kind[k]))
        if k in ("full", "sliding", "linear")
        else f"{k} {_num(r.rope_theta_by_kind[k])}"
        for k in order
    ]
    return t(lang, "info.rope_by_kind", bases=", ".join(parts))


def view(r: InfoResult, ctx: Ctx) -> RenderableType:
    lang = ctx.lang
    head = Text()
    head.append(r.model, style="bold")
    read_from = r.read_from
    if r.gguf_metadata_keys is not None and r.gguf_tensors is not None:
        read_from += t(lang, "info.gguf_header", keys=r.gguf_metadata_keys, tensors=r.gguf_tensors)
    head.append("\n" + t(lang, "info.read_from", model_type=r.model_type, file=read_from), style="dim")
    table = Table(box=None, pad_edge=False, padding=(0, 2), show_header=False)
    table.add_column("name", style="dim", no_wrap=True)
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("what it is", style="dim", min_width=20)
    groups = r.num_attention_heads // max(1, r.num_key_value_heads)
    params_from = t(lang, f"info.params.{r.num_parameters_from}", tensors=r.gguf_tensors, error=r.num_parameters_error)
    rows = [
        ("num_hidden_layers", _num(r.num_hidden_layers), t(lang, "info.num_hidden_layers")),
        ("num_attention_heads", _num(r.num_attention_heads), t(lang, "info.num_attention_heads")),
        ("num_key_value_heads", _num(r.num_key_value_heads), t(lang, "info.num_key_value_heads", groups=groups)),
        ("head_dim", _num(r.head_dim), t(lang, "info.head_dim")),
        ("hidden_size", _num(r.hidden_size), t(lang, "info.hidden_size")),
        ("intermediate_size", _num(r.intermediate_size), t(lang, "info.intermediate_size")),
        ("rope_theta", _num(r.rope_theta), _rope_what(r, lang)),
        ("max_position_embeddings", _num(r.max_position_embeddings), t(lang, "info.max_position_embeddings")),
        ("vocab_size", _num(r.vocab_size), t(lang, "info.vocab_size")),
        ("num_parameters", _num(r.num_parameters), params_from),
        (
            "tie_word_embeddings",
            "-" if r.tie_word_embeddings is None else str(r.tie_word_embeddings).lower(),
            t(lang, "info.tie_word_embeddings"),
        ),
        ("chat_template", t(lang, "info.yes" if r.chat_template else "info.no"), t(lang, "info.chat_template")),
    ]
    for name, value, what in rows:
        table.add_row(name, value, what)
    # Narrow: each name with its value on one line, what it is on the next, indented.
    names = max(len(name) for name, _, _ in rows)
    values = max(cell_len(value) for _, value, _ in rows)
    stacked: list[RenderableType] = []
    for name, value, what in rows:
        line = Text(name.ljust(names), style="dim")
        line.append("  " + " " * (values - cell_len(value)) + value)
        stacked += [line, Padding(Text(what, style="dim"), (0, 0, 0, 4))]
    gqa = Table(box=None, pad_edge=False, padding=(0, 2), show_header=True, header_style="dim")
    gqa.add_column(t(lang, "info.kv_head"), justify="right", no_wrap=True)
    gqa.add_column(t(lang, "info.shared_by"))
    for g in r.gqa_groups:
        gqa.add_row(str(g.kv_head), ", ".join(str(h) for h in g.heads))
    attention = Text(t(lang, "info.attention"), style="dim")
    ours = r.attn_implementation == ATTN_IMPLEMENTATION
    attention.append(t(lang, "info.attn_attnscope") if ours else r.attn_implementation)
    parts: list[RenderableType] = [head, Text(""), TableOr(table, Group(*stacked)), attention]
    parts += [_kinds(r, lang), Text("")]
    parts += [Text(t(lang, "info.gqa_title"), style="bold"), gqa]
    notes = []
    if r.separate_output_weight is not None:
        notes.append(t(lang, "info.note_output_weight", n=f"{r.separate_output_weight:,}"))
    if r.tokenizer_unread:
        notes.append(t(lang, "info.note_tokenizer_unread"))
    for note in notes:
        parts.append(Text(note, style="dim"))
    return Fitted(Group(*parts))
