"""Human view of a PatchResult: where patching restores the answer, as grids of normalised recovery.

The recovery is derived again from the raw patched metrics by ``results.derive.recovery``.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from attnscope.render import Ctx, heat_style
from attnscope.render.ablate import head_name, metric_name
from attnscope.render.common import model_line, ranges
from attnscope.render.fit import Fitted
from attnscope.render.i18n import Lang, t
from attnscope.results import derive as d
from attnscope.results.patch import PatchResult


def cell(v: float) -> Text:
    """One recovery as one character: tenths 0-9, X for 1, - below 0, ! above 1, ? undefined."""
    if v != v:  # NaN
        return Text("?")
    if v < -0.05:
        return Text("-", style="red")
    if v > 1.05:
        return Text("!", style="green")
    tenth = max(0, min(10, int(round(v * 10))))
    return Text("X" if tenth == 10 else str(tenth), style=heat_style(max(0.0, v)))


def grid(title: str, layers: list[int], values: list[list[float]], columns: list[str]) -> list[Text]:
    label_w = max(len(str(lay)) for lay in layers) + 1
    width = max(len(c) for c in columns)
    lines = [Text(title, style="dim")]
    lines.append(Text(" " * label_w + "".join(c.rjust(width + 1) for c in columns), style="dim"))
    for layer, row in zip(layers, values, strict=True):
        line = Text(f"{layer:>{label_w - 1}} ", style="dim")
        for v in row:
            line.append(" " * width)
            line.append_text(cell(v))
        lines.append(line)
    return lines


def recoveries(r: PatchResult) -> dict[str, list[list[float]] | None]:
    """Each site's recovery grid, derived again from its raw metrics."""
    return {
        "head": d.recovery(r.clean, r.corrupt, r.heads_metric),
        "k": d.recovery(r.clean, r.corrupt, r.k_metric),
        "v": d.recovery(r.clean, r.corrupt, r.v_metric),
        "resid": d.recovery(r.clean, r.corrupt, r.residual_metric),
    }


def summary(r: PatchResult, rec: dict[str, list[list[float]] | None], lang: Lang) -> list[RenderableType]:
    parts: list[RenderableType] = []
    for site in ("head", "k", "v"):
        values = rec[site]
        if values is None:
            continue
        v, layer, j = d.best_recovery(values, r.layers)
        name = head_name(lang, layer, j) if site == "head" else t(lang, "patch.kv_head", layer=layer, kv=j)
        if site != "head":
            name += t(lang, "patch.read_by", heads=ranges(lang, r.shared_by[j]))
        parts.append(Text(t(lang, f"patch.summary_{site}", head=name, rec=f"{v:.2f}"), style="bold"))
    values = rec["resid"]
    if values is not None:
        v, layer, j = d.best_recovery(values, r.layers)
        pos = r.positions[j]
        into = r.corrupt_tokens if r.direction == "denoise" else r.clean_tokens
        parts.append(
            Text(
                t(lang, "patch.summary_resid", layer=layer, pos=pos, token=into[pos].label, rec=f"{v:.2f}"),
                style="bold",
            )
        )
    return parts


def view(r: PatchResult, ctx: Ctx) -> RenderableType:
    lang = ctx.lang
    metric = metric_name(lang, r.metric)
    rec = recoveries(r)
    parts = summary(r, rec, lang)
    parts.append(Text(""))
    parts.append(Text(t(lang, "patch.clean", text=r.clean_text, n=len(r.clean_tokens))))
    parts.append(Text(t(lang, "patch.corrupt", text=r.corrupt_text, n=len(r.corrupt_tokens))))
    if r.offset:
        parts.append(Text(t(lang, "patch.aligned", n=len(r.positions)), style="dim"))
    parts.append(Text(t(lang, f"patch.{r.direction}")))
    said = t(lang, f"patch.values_{r.metric.kind}", metric=metric, clean=f"{r.clean:.3f}", corrupt=f"{r.corrupt:.3f}")
    parts.append(Text(said))
    parts += [model_line(lang, r.model), Text("")]
    for site in ("head", "k", "v"):
        values = rec[site]
        if values is None:
            continue
        cols = [str(h) for h in range(len(values[0]))]
        parts += grid(t(lang, f"patch.grid_{site}"), r.layers, values, cols)
        if site != "head":
            for kv, heads in enumerate(r.shared_by):
                parts.append(Text(t(lang, "patch.shared", kv=kv, heads=ranges(lang, heads)), style="dim"))
        parts.append(Text(""))
    values = rec["resid"]
    if values is not None:
        parts += grid(t(lang, "patch.grid_resid"), r.layers, values, [str(p) for p in r.positions])
        parts.append(Text(""))
    parts.append(Text(t(lang, "patch.caption"), style="dim"))
    return Fitted(Group(*parts))
