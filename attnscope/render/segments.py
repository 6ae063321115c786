"""Words for segments and for what the chat template did, shared by the views that show them.

Not a view of its own: ``tokens``, ``weights`` and ``generate`` label segments and print
the template warnings through these helpers.
"""

from __future__ import annotations

from rich.text import Text

from attnscope.render.i18n import Lang, t
from attnscope.results.segments import ChatTemplate, Segment

# One colour per kind, the same in every view.
STYLES = {
    "template": "magenta",
    "system": "yellow",
    "user": "cyan",
    "assistant": "green",
    "prompt": "cyan",
    "answer": "bold",
}


def label(segment: Segment, lang: Lang) -> str:
    """``user 1``, ``system (inserted)``, ``template`` ... in the view's language."""
    if segment.kind == "system" and segment.inserted:
        return t(lang, "segments.system_inserted")
    if segment.kind in ("user", "assistant"):
        return t(lang, f"segments.{segment.kind}", turn=segment.turn or 1)
    return t(lang, f"segments.{segment.kind}")


def style(segment: Segment) -> str:
    return STYLES.get(segment.kind, "")


def warnings(template: ChatTemplate | None, lang: Lang) -> list[Text]:
    """One line per thing the chat template did that a reader should know."""
    if template is None:
        return []
    out = []
    if template.inserted_system is not None:
        text = " ".join(template.inserted_system.split())
        out.append(Text(t(lang, "segments.warn_inserted", text=text), style="yellow"))
    if not template.reencode_matches:
        out.append(Text(t(lang, "segments.warn_reencode"), style="yellow"))
    if not template.generation_prompt:
        out.append(Text(t(lang, "segments.warn_no_generation_prompt"), style="yellow"))
    return out
