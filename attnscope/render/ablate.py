"""Human view of an AblateResult: which heads matter for the target (and whether the head that
looks hardest at the key is among them), the heads ranked by effect with their attention to
the key, and the layers x heads grid of effects beside the grid of weights.

The ranking and the correlations are derived again from the raw effects by
``results.derive.ablate_numbers``; nothing here computes beyond choosing and rounding.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from attnscope.render import Ctx, bar, heat_style, shade
from attnscope.render.common import model_line, ranges
from attnscope.render.fit import FitColumns, Fitted
from attnscope.render.i18n import Lang, t
from attnscope.results import derive as d
from attnscope.results.ablate import AblateResult, RankedEffect
from attnscope.results.common import Metric, prepended_bos

TOP = 10


def metric_name(lang: Lang, m: Metric) -> str:
    """log P(' 사'), or logit(' 사') - logit(' 배')."""
    if m.kind == "logprob":
        return t(lang, "ablate.metric_logprob", target=repr(m.target))
    return t(lang, "ablate.metric_diff", target=repr(m.target), foil=repr(m.foil))


def head_name(lang: Lang, layer: int, head: int) -> str:
    return t(lang, "ablate.head", layer=layer, head=head)


def effect_text(value: float) -> str:
    """A signed effect: two decimals, or two significant digits when it is that small."""
    return f"{value:+.2f}" if abs(value) >= 0.005 else f"{value:+.1e}"


def numbers(r: AblateResult) -> d.AblateNumbers:
    groups = r.model.num_attention_heads // max(1, r.model.num_key_value_heads)
    return d.ablate_numbers(r.effects, r.attention, r.layers, r.heads, groups, r.top_key, r.checked)


def summary(r: AblateResult, ranking: list[RankedEffect], lang: Lang) -> Text:
    """The first lines: which heads matter most, and where the head that looks hardest at the key ranks."""
    metric = metric_name(lang, r.metric)
    first, rest = ranking[0], ranking[1:3]
    listed = t(lang, "ablate.list_sep").join(
        f"{head_name(lang, e.layer, e.head)} {effect_text(e.effect)}" for e in rest
    )
    key = "ablate.summary_top_est" if r.estimated else "ablate.summary_top" if rest else "ablate.summary_top_one"
    text = Text(
        t(
            lang,
            key,
            first=head_name(lang, first.layer, first.head),
            metric=metric,
            effect=effect_text(first.effect),
            rest=listed,
        ),
        style="bold",
    )
    if r.key is not None:
        rank, looker = d.hardest_looker(ranking)
        top = min(TOP, len(ranking))
        text.append("\n")
        text.append(
            t(
                lang,
                "ablate.summary_in" if rank <= top and looker.effect < 0 else "ablate.summary_out",
                key=r.key.text,
                head=head_name(lang, looker.layer, looker.head),
                weight=f"{looker.attention:.2f}",
                top=top,
                rank=rank,
                total=len(ranking),
                effect=effect_text(looker.effect),
            ),
            style="bold",
        )
    return text


def header(r: AblateResult, lang: Lang) -> Text:
    metric = metric_name(lang, r.metric)
    out = Text()
    out.append(t(lang, f"ablate.baseline_{r.metric.kind}", metric=metric, value=f"{r.baseline:.3f}") + "\n")
    positions = ranges(lang, r.positions)
    if r.mode == "zero":
        out.append(t(lang, "ablate.mode_zero", positions=positions) + "\n", style="dim")
    else:
        source = r.mean_over or t(lang, "ablate.mean_prompt")
        out.append(t(lang, "ablate.mode_mean", n=r.mean_tokens, source=source, positions=positions) + "\n", style="dim")
    out.append_text(model_line(lang, r.model))
    return out


def top_table(r: AblateResult, ranking: list[RankedEffect], lang: Lang) -> Table:
    n = min(TOP, len(ranking))
    table = Table(box=None, pad_edge=False, padding=(0, 1), header_style="dim")
    for name in ("#", t(lang, "ablate.col.layer"), t(lang, "ablate.col.head"), t(lang, "ablate.col.kv")):
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column(
        t(lang, "ablate.col.estimated" if r.estimated else "ablate.col.effect"), justify="right", no_wrap=True
    )
    table.add_column("", no_wrap=True)
    if r.estimated:
        table.add_column(t(lang, "ablate.col.exact"), justify="right", no_wrap=True)
    table.add_column(t(lang, "ablate.col.on_key" if r.key is not None else "ablate.col.top_key"), no_wrap=True)
    exact = {(c.layer, c.head): c.exact for c in r.checked}
    scale = max((-e.effect for e in ranking), default=0.0) or 1.0
    for rank, e in enumerate(ranking[:n], start=1):
        if r.key is not None:
            looks = Text(f"{e.attention:.2f} ").append(bar(e.attention, 10), style="magenta")
        else:
            label = r.tokens[e.top_key].label if e.top_key is not None else "?"
            looks = Text(f"{label} {e.attention:.2f}")
        cells: list[RenderableType] = [str(rank), str(e.layer), str(e.head), str(e.kv_head), effect_text(e.effect)]
        cells.append(Text(bar(max(0.0, -e.effect) / scale, 12).ljust(12), style="cyan"))
        if r.estimated:
            cells.append(effect_text(exact[(e.layer, e.head)]) if (e.layer, e.head) in exact else "")
        table.add_row(*cells, looks)
    return table


def grids(r: AblateResult, lang: Lang) -> list[RenderableType]:
    """The effects grid and the weights grid side by side, one line per layer."""
    groups = r.model.num_attention_heads // max(1, r.model.num_key_value_heads)
    drop = max((max(0.0, -v) for row in r.effects for v in row), default=0.0) or 1.0
    top_w = max((v for row in r.attention for v in row), default=0.0) or 1.0

    def rule(j: int, h: int) -> bool:
        return j > 0 and h // groups != r.heads[j - 1] // groups

    width = 2 * len(r.heads) + sum(1 for j, h in enumerate(r.heads) if rule(j, h))

    def cells(values: list[float], signed: bool) -> Text:
        out = Text()
        for j, (h, v) in enumerate(zip(r.heads, values, strict=True)):
            if rule(j, h):
                out.append("│", style="dim")
            if signed and v > 0.05 * drop:
                out.append(" +", style="green")
            elif signed:
                out.append(shade(-v, drop) * 2, style=heat_style(-v, drop))
            else:
                out.append(shade(v, top_w) * 2, style=heat_style(v, top_w))
        return out

    heads_line = "".join(("│" if rule(j, h) else "") + f"{h:>2}" for j, h in enumerate(r.heads))
    label_w = max(len(str(lay)) for lay in r.layers) + 1
    left = t(lang, "ablate.grid_effect")
    right = t(lang, "ablate.grid_weight_key", key=r.key.text) if r.key else t(lang, "ablate.grid_weight_top")
    lines: list[RenderableType] = []
    title = Text(" " * label_w, style="dim")
    title.append(left.ljust(width) + "   " + right, style="dim")
    lines.append(title)
    lines.append(Text(" " * label_w + heads_line + "   " + heads_line, style="dim"))
    for i, layer in enumerate(r.layers):
        row = Text(f"{layer:>{label_w - 1}} ", style="dim")
        row.append_text(cells(r.effects[i], True))
        row.append("   ")
        row.append_text(cells(r.attention[i], False))
        lines.append(row)
    lines.append(Text(t(lang, "ablate.grid_caption", drop=f"{drop:.2f}", weight=f"{top_w:.2f}"), style="dim"))
    return lines


def view(r: AblateResult, ctx: Ctx) -> RenderableType:
    lang = ctx.lang
    derived = numbers(r)
    ranking = derived.ranking
    n = len(ranking)
    parts: list[RenderableType] = [summary(r, ranking, lang), Text(""), header(r, lang), Text("")]
    title = t(lang, "ablate.top_title_est" if r.estimated else "ablate.top_title", n=min(TOP, n), total=n)
    parts += [Text(title, style="dim"), FitColumns(top_table(r, ranking, lang), [[5]]), Text("")]  # bars go first
    parts += grids(r, lang)
    if derived.rank_correlation is None:
        parts.append(Text(t(lang, "ablate.correlation_none")))
    else:
        parts.append(Text(t(lang, "ablate.correlation", n=n, rho=f"{derived.rank_correlation:+.2f}")))
    if r.estimated and r.checked:
        rho = "-" if derived.check_correlation is None else f"{derived.check_correlation:+.2f}"
        diff = max(abs(c.estimated - c.exact) for c in r.checked)
        parts.append(Text(t(lang, "ablate.checked", n=len(r.checked), rho=rho, diff=f"{diff:.2g}")))
    parts.append(Text(t(lang, "ablate.note_est" if r.estimated else "ablate.note_exact"), style="dim"))
    if r.key is None:
        bos = prepended_bos(r.tokens)
        note = t(lang, "ablate.note_top_key_bos", label=r.tokens[0].label) if bos else t(lang, "ablate.note_top_key")
        parts.append(Text(note, style="dim"))
    return Fitted(Group(*parts))
