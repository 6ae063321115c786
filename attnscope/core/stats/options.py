"""The options of ``attnscope stats``, declared once: :class:`StatsConfig`.

Everything else is read off its fields. Each field says, in its metadata, whether the numbers
depend on it (it goes into a checkpoint's fingerprint, so a resumed run refuses a checkpoint
made with another value) and whether the result records it (``StatsResult.options``, a
:class:`~attnscope.results.stats.StatsOptions`); the rest only say how and where the run goes.
The chat template is a :class:`~attnscope.core.prompt.spec.ChatSpec`, as in every analysis.
Pure Python; no torch. This module does not print.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, fields
from typing import Any

from attnscope.core.prompt.params import STATS_POS, InputFormat, check_stats
from attnscope.core.prompt.spec import ChatSpec, Indices, shown
from attnscope.results.stats import Engine, Pos, StatsOptions, stat_names
from attnscope.results.weights import Measure

DEFAULT_SHARD_SIZE = 32
DEFAULT_BOOTSTRAP = 200
DEFAULT_RETRIES = 3  # engine "ray": restarts of a worker that died, and retries of its shard

_NUMBERS = {"fingerprint": True, "recorded": True}  # the numbers depend on it
_CARRIED = {"recorded": True}  # how the run was carried out: recorded, but the numbers do not depend on it


@dataclass(frozen=True)
class StatsConfig:
    """How ``stats`` runs: what the numbers depend on, how the work is carried out, and where
    it is kept. Frozen; the library's defaults are the CLI's."""

    field: str = dataclasses.field(default="prompt", metadata=_NUMBERS)  # the JSON field holding the prompt
    max_tokens: int | None = dataclasses.field(
        default=None, metadata=_NUMBERS
    )  # cut longer prompts to this many tokens
    pos: Pos | int = dataclasses.field(
        default="all", metadata=_NUMBERS
    )  # the query positions, as --pos: "all" (every one from 1), "last" (= "-1"), "5", "-2", "1,3,5-8"
    measure: Measure = dataclasses.field(default="weight", metadata=_NUMBERS)  # "norm" adds norm_sink
    bootstrap: int = dataclasses.field(default=DEFAULT_BOOTSTRAP, metadata=_NUMBERS)  # bootstrap replicates
    seed: int = dataclasses.field(default=0, metadata=_NUMBERS)  # the bootstrap's seed
    shard_size: int = dataclasses.field(default=DEFAULT_SHARD_SIZE, metadata=_NUMBERS)  # input lines per shard
    batch_size: int = dataclasses.field(default=1, metadata=_CARRIED)  # prompts padded and run together per forward
    engine: Engine = dataclasses.field(default="local", metadata=_CARRIED)  # in this process, or on Ray Data actors
    workers: int = dataclasses.field(default=1, metadata=_CARRIED)  # Ray workers (1 for the local engine)
    address: str | None = None  # engine "ray": the cluster to join (HOST:PORT or auto); None starts one
    retries: int = DEFAULT_RETRIES  # engine "ray": restarts of a worker that died, and reruns of its shard
    checkpoint: str | None = None  # a folder: every finished shard is saved there
    resume: bool = False  # go on from ``checkpoint``, skipping the shards it holds
    strict: bool = False  # stop at the first bad line instead of skipping it
    input_format: InputFormat = "auto"  # lines: one prompt per line; jsonl: JSON Lines

    def check(self, chat: ChatSpec | None) -> None:
        """Refuse a value no run can use, before any file is read or any model loads (the declaration
        ``core.prompt.params.STATS_PARAMS``; pure Python, so the CLI asks it before torch is imported)."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        check_stats(
            values,
            resume=self.resume,
            checkpoint=self.checkpoint,
            messages=chat is not None and chat.messages is not None,
        )

    def positions(self) -> Indices | None:
        """The query positions ``pos`` names, each counted in every prompt (negative from its end);
        None: every position from 1."""
        return STATS_POS.parse("pos", self.pos)

    def pos_key(self) -> Pos:
        """``pos`` as the result and a checkpoint record it: ``all``, ``last`` for -1 (so ``--pos -1``
        resumes a checkpoint of ``--pos last``), else the positions written back (``1,3,5-8``)."""
        items = self.positions()
        if items is None:
            return "all"
        return "last" if list(items) == [-1] else shown(items)

    def names(self, chat: ChatSpec | None) -> tuple[str, ...]:
        """The statistics the run computes, in the order they are stored."""
        return stat_names(chat is not None, self.measure == "norm")

    def fingerprint(self, chat: ChatSpec | None, **facts: Any) -> dict[str, Any]:
        """What the numbers depend on, as a checkpoint's manifest records it: ``facts`` (the model,
        the input file) and every field marked so, with the chat."""
        out = dict(facts)
        out.update({f.name: getattr(self, f.name) for f in fields(self) if f.metadata.get("fingerprint")})
        out["pos"] = self.pos_key()
        out.update(_chat_values(chat))
        return out

    def record(self, chat: ChatSpec | None) -> StatsOptions:
        """The options as the result records them."""
        values = {f.name: getattr(self, f.name) for f in fields(self) if f.metadata.get("recorded")}
        return StatsOptions(**{**values, "pos": self.pos_key()}, **_chat_values(chat))


def _chat_values(chat: ChatSpec | None) -> dict[str, Any]:
    return {"chat": chat is not None, "system": None if chat is None else chat.system}


__all__ = ["DEFAULT_BOOTSTRAP", "DEFAULT_RETRIES", "DEFAULT_SHARD_SIZE", "InputFormat", "Measure", "StatsConfig"]
