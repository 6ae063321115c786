"""The computational graph ``attnscope circuit`` scores: its nodes, its edges and MIB's pruning.

Upstream nodes write into the residual stream: ``input`` (the embeddings, after any scale the
model applies), ``a{l}.h{h}`` (query head h's output through its o_proj columns) and ``m{l}``
(the MLP's output). Downstream inputs read the residual stream: each query head's Q input
(``a{l}.h{h}`` ``q``), the K and V inputs, each MLP's input (``m{l}`` ``mlp``) and ``logits``.
The two graphs differ in K and V only: ``gqa`` has one K and one V input per KV head
(``a{l}.kv{g}``, read by query heads ``g * groups`` to ``(g + 1) * groups - 1``), as the model
computes; ``mib`` has one per query head (``a{l}.h{h}``), as MIB and the EAP-IG library count
them. Node names follow EAP-IG/MIB, so circuits can be exchanged with them.

An edge joins an upstream node to a downstream input that comes after it: every input of layer
l's attention reads ``input`` and every head and MLP of the layers before; layer l's MLP also
reads layer l's heads; ``logits`` reads every upstream node. Edges are ordered by downstream
input (layer by layer: the Q inputs, the K inputs, the V inputs, the MLP's, then ``logits``),
and within one by upstream node, so the upstream nodes of one input are a prefix of
:attr:`Graph.upstream`. Pure Python and numpy; nothing here runs a model or prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Literal

import numpy as np
import numpy.typing as npt

GraphKind = Literal["gqa", "mib"]
GRAPHS: tuple[GraphKind, ...] = ("gqa", "mib")
InputKind = Literal["q", "k", "v", "mlp", "logits"]
INPUT_KINDS: tuple[InputKind, ...] = ("q", "k", "v", "mlp", "logits")


@dataclass(frozen=True)
class Downstream:
    """One downstream input: its node, the input kind, its layer (n_layers for logits), the index
    of the head or KV head it feeds (None for an MLP or logits) and how many upstream nodes it reads."""

    node: str
    input: InputKind
    layer: int
    index: int | None
    n_up: int


@dataclass(frozen=True)
class Graph:
    """The graph of one model's shape (see the module docstring)."""

    kind: GraphKind
    n_layers: int
    n_heads: int
    n_kv: int

    @property
    def groups(self) -> int:
        return self.n_heads // self.n_kv

    def head(self, layer: int, head: int) -> int:
        """The upstream index of ``a{layer}.h{head}``."""
        return 1 + layer * (self.n_heads + 1) + head

    def mlp(self, layer: int) -> int:
        """The upstream index of ``m{layer}``."""
        return 1 + layer * (self.n_heads + 1) + self.n_heads

    @cached_property
    def upstream(self) -> list[str]:
        names = ["input"]
        for layer in range(self.n_layers):
            names += [f"a{layer}.h{h}" for h in range(self.n_heads)] + [f"m{layer}"]
        return names

    @cached_property
    def downstream(self) -> list[Downstream]:
        out: list[Downstream] = []
        for layer in range(self.n_layers):
            n_up = 1 + layer * (self.n_heads + 1)
            out += [Downstream(f"a{layer}.h{h}", "q", layer, h, n_up) for h in range(self.n_heads)]
            for kind in ("k", "v"):
                if self.kind == "gqa":
                    out += [Downstream(f"a{layer}.kv{g}", kind, layer, g, n_up) for g in range(self.n_kv)]  # type: ignore[arg-type]
                else:
                    out += [Downstream(f"a{layer}.h{h}", kind, layer, h, n_up) for h in range(self.n_heads)]  # type: ignore[arg-type]
            out.append(Downstream(f"m{layer}", "mlp", layer, None, n_up + self.n_heads))
        out.append(Downstream("logits", "logits", self.n_layers, None, len(self.upstream)))
        return out

    @cached_property
    def edges(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """(E,) upstream index and (E,) downstream index of every edge, in the graph's order."""
        ups = [np.arange(d.n_up, dtype=np.int64) for d in self.downstream]
        downs = [np.full(d.n_up, i, dtype=np.int64) for i, d in enumerate(self.downstream)]
        return np.concatenate(ups), np.concatenate(downs)

    @property
    def n_edges(self) -> int:
        return int(sum(d.n_up for d in self.downstream))

    @cached_property
    def offsets(self) -> npt.NDArray[np.int64]:
        """(D + 1,) where each downstream input's edges start (and the last ends)."""
        return np.concatenate([[0], np.cumsum([d.n_up for d in self.downstream])]).astype(np.int64)

    def feeds(self, d: Downstream) -> list[int]:
        """The upstream nodes a downstream input is part of: its head, its KV head's query heads,
        its MLP; none for logits."""
        if d.input == "logits":
            return []
        if d.input == "mlp":
            return [self.mlp(d.layer)]
        assert d.index is not None
        if self.kind == "gqa" and d.input in ("k", "v"):
            return [self.head(d.layer, h) for h in range(d.index * self.groups, (d.index + 1) * self.groups)]
        return [self.head(d.layer, d.index)]

    @cached_property
    def index(self) -> dict[tuple[str, str, str], int]:
        """(from, to, input) -> edge index."""
        up, down = self.edges
        names, targets = self.upstream, self.downstream
        return {(names[u], targets[d].node, targets[d].input): e for e, (u, d) in enumerate(zip(up, down, strict=True))}


def prune(graph: Graph, selected: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """The selected edges that lie on a path from ``input`` to ``logits`` through selected edges
    (MIB's ``apply_topn(..., prune=True)``): an edge is kept when its upstream node is reached
    from ``input`` and the node its input belongs to reaches ``logits``. A head is reached
    through any of its Q, K or V inputs; a ``gqa`` K or V input belongs to every query head of its
    group. ``selected`` and the answer are (E,) bools in the graph's edge order."""
    up, down = graph.edges
    targets = graph.downstream
    n_up = len(graph.upstream)
    reached = np.zeros(n_up, dtype=bool)
    reached[0] = True
    for i, d in enumerate(targets):  # a layer's heads are upstream of no input of the same attention
        start, stop = graph.offsets[i], graph.offsets[i + 1]
        if (selected[start:stop] & reached[up[start:stop]]).any():
            reached[graph.feeds(d)] = True
    alive = np.zeros(n_up, dtype=bool)  # reaches logits through selected edges
    alive_in = np.zeros(len(targets), dtype=bool)
    alive_in[-1] = True
    for i in range(len(targets) - 1, -1, -1):
        d = targets[i]
        alive_in[i] = d.input == "logits" or bool(alive[graph.feeds(d)].any())
        start, stop = graph.offsets[i], graph.offsets[i + 1]
        if alive_in[i]:
            alive[up[start:stop][selected[start:stop]]] = True
    return selected & reached[up] & alive_in[down]
