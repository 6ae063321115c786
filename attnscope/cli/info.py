"""``attnscope info``: the config facts the note quotes, read without loading the weights."""

from __future__ import annotations

from attnscope.cli import app
from attnscope.cli.common import HtmlOpt, JsonOpt, ModelOpt, RevisionOpt, SvgOpt, WidthOpt, emit, handle_errors


@app.command("info")
@handle_errors
def info_cmd(
    model: ModelOpt = None,
    revision: RevisionOpt = None,
    as_json: JsonOpt = False,
    svg: SvgOpt = None,
    html: HtmlOpt = None,
    width: WidthOpt = None,
) -> None:
    """Layers, heads, KV heads and their GQA grouping, sizes, rope_theta, parameters: no weights loaded."""
    from attnscope.core.info import info

    emit(info(model, revision), as_json=as_json, svg=svg, html=html, width=width)
