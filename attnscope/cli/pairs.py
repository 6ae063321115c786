"""``attnscope pairs``: a built-in task's prompt pairs as JSONL, for ``circuit --pairs``."""

from __future__ import annotations

from typing import Annotated, cast

import typer

from attnscope.cli.command import command


@command
def pairs_cmd(
    task: Annotated[
        str, typer.Argument(help="ioi (English, indirect object) or ko-fruit (the note's sentence, who ate what).")
    ],
    n: Annotated[int, typer.Option("--n", help="How many pairs.")] = 200,
    seed: Annotated[int, typer.Option("--seed", help="The same seed writes the same pairs.")] = 0,
) -> None:
    """Write N clean/corrupt prompt pairs of a built-in task to stdout, one JSON object a line."""
    import json
    import sys

    from attnscope.core.causal.pairs import Task, pairs

    written = pairs(cast(Task, task), n, seed)  # every pair first: nothing half-written on a bad value
    sys.stdout.write("".join(json.dumps(pair, ensure_ascii=False) + "\n" for pair in written))
