"""How heads are ranked, written once: score descending, ties by layer, then head.

Pure Python (no torch), so that ``attnscope render`` can re-rank a saved document
without importing torch. It does not print.
"""

from __future__ import annotations

from collections.abc import Sequence

from attnscope.results.roles import RankedHead


def rank(grid: Sequence[Sequence[float]], groups: int, top: int) -> list[RankedHead]:
    """The ``top`` heads of a [layer][head] grid, score descending; ties by layer, then head."""
    flat = [(float(v), layer, head) for layer, row in enumerate(grid) for head, v in enumerate(row)]
    flat.sort(key=lambda s: (-s[0], s[1], s[2]))
    return [RankedHead(layer=layer, head=head, kv_head=head // groups, score=s) for s, layer, head in flat[:top]]
