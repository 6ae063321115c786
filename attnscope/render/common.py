"""Pieces every view shares: the model header, index ranges, token spans and warnings.

Each is built here once, in both languages, so that every view says the same thing the
same way. Nothing here computes numbers beyond formatting them.
"""

from __future__ import annotations

from rich.text import Text

from attnscope.render.i18n import Lang, device_name, t
from attnscope.results.common import ModelInfo, ResultWarning, Token, prepended_bos

# Position 0 is named an attention sink only when it takes at least this share of what is shown
# (weights' sink line, generate's "(sink)" mark): a first position with 0.09 is not a sink.
SINK_NAMED_AT = 0.3


def span(lang: Lang, first: int, last: int) -> str:
    """One contiguous range of indices: ``0-23`` (English) or ``0~23`` (Korean, as the note writes it)."""
    if first == last:
        return str(first)
    return t(lang, "common.span", first=first, last=last)


def ranges(lang: Lang, values: list[int]) -> str:
    """Sorted indices as runs: ``[0, 1, 2, 3, 5, 7, 8]`` -> ``0-3,5,7-8`` (``0~3, 5, 7~8`` in Korean)."""
    if not values:
        return "-"
    runs: list[tuple[int, int]] = []
    for v in values:
        if runs and v == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], v)
        else:
            runs.append((v, v))
    return t(lang, "common.runs_sep").join(span(lang, a, b) for a, b in runs)


def model_line(lang: Lang, m: ModelInfo) -> Text:
    """The model header every view prints: id, layers, heads, KV heads, precision and device,
    and a hybrid model's linear-attention layers (never captured) on a second line."""
    line = Text(
        t(
            lang,
            "common.model",
            id=m.id,
            layers=m.num_hidden_layers,
            heads=m.num_attention_heads,
            kv_heads=m.num_key_value_heads,
            dtype=m.dtype,
            device=device_name(lang, m.device),
        ),
        style="dim",
    )
    linear = m.linear_layers()
    if linear:
        line.append("\n" + t(lang, "common.linear_layers", layers=ranges(lang, linear)), style="dim")
    return line


def no_sink_note(tokens: list[Token], query: int, lang: Lang) -> str:
    """What ``--no-sink`` left out: position 0, named as the BOS where the tokenizer prepended one."""
    positions = span(lang, 1, query)
    if prepended_bos(tokens):
        return t(lang, "common.note_no_sink_bos", label=tokens[0].label, positions=positions)
    return t(lang, "common.note_no_sink", positions=positions)


def token_span(lang: Lang, tokens: list[Token], indices: list[int]) -> str:
    """``token 3: 그것`` or ``tokens 3-4: 그것 + 을`` (the tokens' labels joined by +)."""
    labels = " + ".join(tokens[i].label for i in indices)
    where = span(lang, indices[0], indices[-1])
    return t(lang, "common.token_span" if len(indices) == 1 else "common.tokens_span", where=where, labels=labels)


def warning_text(lang: Lang, w: ResultWarning) -> str:
    """The words of a result's warning (printed on stderr after ``attnscope: ``)."""
    if w.code in ("ambiguous_query", "ambiguous_key"):
        count = w.count or 0
        return t(lang, f"common.warning.{w.code}", text=w.text or "", count=count)
    if w.code == "padded_by_attnscope":
        return t(lang, "common.warning.padded_by_attnscope", value=w.value)
    if w.code in ("mixed_windows", "mixed_windows_length"):
        return t(lang, f"common.warning.{w.code}", value=w.value, count=w.count)
    return t(lang, f"common.warning.{w.code}")
