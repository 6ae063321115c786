"""The worker of ``attnscope stats``: a loaded model turns one shard of prompts into a :class:`Partial`.

Both engines run this code: the local engine calls :meth:`StatsWorker.shard` in-process, and
the Ray engine (``core.stats.ray_engine``) wraps the same class in the callable Ray Data gives each
actor, so the two cannot drift. A shard's prompts are tokenized (chat template and segments
from ``core.prompt.tokens``), cut to ``max_tokens``, right-padded into batches of ``batch_size`` and
captured in one forward per batch (``capture.engine`` with every query position of every
layer); each layer's rows are reduced as soon as they exist (``core.stats.reduce``) and each
layer's output hidden states give the massive-activation numbers. Prompts are merged into the
shard's aggregates in line order, so a result does not depend on the batch size beyond
floating-point rounding. A line that cannot be used (too few tokens, a bad chat) is skipped
with its reason; nothing here prints.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from attnscope.capture import anatomy, engine, hooks
from attnscope.core.common import every_layer, pad_id
from attnscope.core.prompt.spec import ChatSpec, resolve, shown
from attnscope.core.prompt.tokens import encode_prompt
from attnscope.core.stats.aggregates import Partial, add_massive, add_prompt, poisson_weights
from attnscope.core.stats.options import StatsConfig
from attnscope.core.stats.reduce import BatchFacts, Peaks, hidden_peaks, layer_values, per_prompt
from attnscope.errors import AttnscopeError, encoded
from attnscope.model import Loaded
from attnscope.results.segments import Message
from attnscope.results.stats import SEGMENT_KINDS


@dataclass(frozen=True)
class Item:
    """One usable input line: a prompt, or (with chat) the messages of a conversation."""

    line: int
    prompt: str | None = None
    messages: tuple[Message, ...] | None = None


@dataclass(frozen=True)
class _Ready:
    line: int
    ids: list[int]
    kinds: list[int] | None  # each token's segment kind (index into SEGMENT_KINDS), with chat
    positions: list[int] | None  # the query positions counted (None: every one from 1)


class StatsWorker:
    """A loaded model, the options and the chat; :meth:`shard` is the whole job of one shard."""

    def __init__(self, loaded: Loaded, options: StatsConfig, chat: ChatSpec | None = None) -> None:
        self.loaded = loaded
        self.options = options
        self.chat = chat
        self.names = options.names(chat)
        info = loaded.info
        self.layers = every_layer(info, "stats")
        self.hidden = anatomy.of(loaded.model).hidden
        self.max_positions = anatomy.of(loaded.model).max_positions
        self.pad = pad_id(loaded.tokenizer)
        self.positions = options.positions()

    def empty(self) -> Partial:
        info = self.loaded.info
        return Partial.empty(
            len(self.names),
            info.num_hidden_layers,
            info.num_attention_heads,
            self.options.bootstrap,
            self.hidden,
        )

    def shard(self, items: Sequence[Item]) -> Partial:
        """The aggregates of ``items`` (one shard), lines that cannot be used recorded as skipped."""
        part = self.empty()
        ready: list[_Ready] = []
        for item in items:
            try:
                got, cut = self._prepare(item)
            except AttnscopeError as exc:
                part.skipped.append((item.line, encoded(exc)))
                continue
            part.truncated += int(cut)
            part.tokens += len(got.ids)
            part.longest = np.maximum(part.longest, len(got.ids))
            ready.append(got)
        size = self.options.batch_size
        for start in range(0, len(ready), size):
            self._run(part, ready[start : start + size])
        return part

    def _prepare(self, item: Item) -> tuple[_Ready, bool]:
        s = self.options
        chat = None if self.chat is None else ChatSpec(system=self.chat.system, messages=item.messages)
        enc = encode_prompt(self.loaded.tokenizer, item.prompt, chat)
        ids = enc.ids
        cut = s.max_tokens is not None and len(ids) > s.max_tokens
        if cut:
            ids = ids[: s.max_tokens]
        if self.max_positions and len(ids) > self.max_positions:
            raise AttnscopeError("stats_line_too_long", n=len(ids), limit=self.max_positions, arg="max_tokens")
        if len(ids) < 2:
            raise AttnscopeError("stats_line_short")
        positions = None if self.positions is None else self._positions(len(ids))
        kinds = None
        if self.chat is not None:
            kind_of = {i: SEGMENT_KINDS.index(seg.kind) for seg in enc.segments for i in seg.tokens}
            kinds = [kind_of.get(i, 0) for i in range(len(ids))]
        return _Ready(line=item.line, ids=ids, kinds=kinds, positions=positions), cut

    def _positions(self, n: int) -> list[int]:
        """The asked query positions in a prompt of ``n`` tokens (after any cut); an error, which
        skips the line, when it lacks one of them (query positions count from 1)."""
        try:
            at = resolve(self.positions, n, "position")
        except AttnscopeError:
            at = []
        if not at or at[0] < 1:
            raise AttnscopeError("stats_line_no_pos", n=n, arg="pos", value=shown(self.positions))
        return at

    def _padded(self, group: list[_Ready]) -> tuple[torch.Tensor, torch.Tensor, BatchFacts]:
        """``group`` right-padded: ids and attention mask (B, T), and the reduction's facts (on the CPU)."""
        lengths = [len(r.ids) for r in group]
        width = max(lengths)
        ids = torch.full((len(group), width), self.pad, dtype=torch.long)
        mask = torch.zeros((len(group), width), dtype=torch.long)
        kinds = torch.zeros((len(group), width, len(SEGMENT_KINDS))) if self.chat is not None else None
        for b, r in enumerate(group):
            ids[b, : lengths[b]] = torch.tensor(r.ids)
            mask[b, : lengths[b]] = 1
            if kinds is not None and r.kinds is not None:
                kinds[b, torch.arange(lengths[b]), torch.tensor(r.kinds)] = 1.0
        asked = None if self.positions is None else [r.positions or [] for r in group]
        return ids, mask, BatchFacts.build(ids, lengths, asked, kinds)

    def _run(self, part: Partial, group: list[_Ready]) -> None:
        """One padded forward for ``group``; merge each prompt in order."""
        s = self.options
        names = self.names
        lengths = [len(r.ids) for r in group]
        width = max(lengths)
        ids, mask, facts_cpu = self._padded(group)
        model = self.loaded.model
        device = next(model.parameters()).device
        facts = facts_cpu.to(device)
        layers_n, heads_n = self.loaded.info.num_hidden_layers, self.loaded.info.num_attention_heads
        count = np.zeros((len(group), len(names)), np.int64)
        sums = np.zeros((len(group), len(names), layers_n, heads_n))
        m2 = np.zeros_like(sums)
        hist = np.zeros((*sums.shape, 20), np.int64)

        def consume(layer: int, rows: torch.Tensor, norms: torch.Tensor | None) -> None:
            values, counted = layer_values(rows.float(), facts, norms, names)
            if not bool(torch.isfinite(values).all()):  # a NaN or inf in a row reaches its entropy
                engine.check_finite({layer: rows.exp().cpu()})
            got = per_prompt(values, counted, names)
            count[:] = got.count
            sums[:, :, layer] = got.sums
            m2[:, :, layer] = got.m2
            hist[:, :, layer] = got.hist

        peaks: dict[int, Peaks] = {}
        body = anatomy.of(model)
        if not body.has_layers:
            raise AttnscopeError("stats_layers", model=type(model).__name__)

        def peak(layer: int | None, hidden: torch.Tensor) -> None:
            assert layer is not None
            peaks[layer] = hidden_peaks(hidden, lengths)

        request = engine.Request(
            positions=torch.arange(width)[None, :].expand(len(group), width),
            layers=frozenset(self.layers),
            norms=frozenset(self.layers) if s.measure == "norm" else frozenset(),
            stop=False,
            consume=consume,
            log_rows=True,
        )
        with hooks.Run(body) as run:
            run.watch("resid_post.*", peak)
            engine.run(model, ids, mask, request)
        if len(peaks) != layers_n:
            raise AttnscopeError("stats_hidden", got=len(peaks), n=layers_n)
        weights = poisson_weights(s.seed, np.array([r.line for r in group]), s.bootstrap)
        stacked = [peaks[layer] for layer in range(layers_n)]
        for b, r in enumerate(group):
            add_prompt(part, r.line, weights[b], count[b], sums[b], m2[b], hist[b])
            add_massive(
                part,
                r.line,
                np.array([p.top[b] for p in stacked]),
                np.array([p.dim[b] for p in stacked]),
                np.array([p.position[b] for p in stacked]),
                np.array([p.median[b] for p in stacked]),
                np.array([p.first[b] for p in stacked]),
                np.array([p.rest[b] for p in stacked]),
            )
