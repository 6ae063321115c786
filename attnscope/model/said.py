"""What model loading tells the user: a message key and its values, never words.

Loading reports progress, notices and warnings as :class:`Said` values. The words live in
the render catalogues under ``progress.<key>`` (English and Korean); the CLI words each
``Said`` in the reader's language, and a Python caller that wants a sentence does the same
with ``attnscope.render.i18n.t(lang, "progress." + said.key, **said.values)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Said:
    """One line for the user, as a catalogue key (``progress.<key>``) and the values it names."""

    key: str
    values: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, key: str, **values: object) -> Said:
        """A ``Said`` whose values are turned into the strings the catalogue line shows."""
        return cls(key, {name: str(value) for name, value in values.items()})


Progress = Callable[[Said], None]


def noop(_: Said) -> None:
    pass
