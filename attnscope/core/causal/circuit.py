"""The ``circuit`` computation: edge attribution over prompt pairs, checked by edge patching.

The graph is ``attnscope.results.graph``: upstream nodes ``input`` (``resid_pre.0``, the
embeddings after any scale), ``a{l}.h{h}`` (``head_out.l``) and ``m{l}`` (``mlp_out.l``);
downstream inputs each head's Q input and each KV head's K and V inputs (``q_in.l``,
``k_in.l``, ``v_in.l`` of ``capture.hooks``: the residual stream before the attention's input
norm, one input per head, K/V never copied per query head), each MLP's input (``resid_mid.l``,
the input of the MLP's norm) and the logits' input (``resid_post`` of the last layer, the final
norm's input). The residual stream at every input is the sum of the upstream outputs before it
plus the o_proj biases of the layers before it (:func:`bias_at`): an MLP's own bias is part of
its output.

Scores (per pair, then averaged over pairs; summed over positions):
- ``eap``: (clean output - corrupt output of the upstream node) . (the metric's gradient at the
  downstream input on the clean run): the first-order estimate of how much the metric drops when
  the edge alone carries the corrupt value (the EAP-IG library's estimate, sign turned so that an
  edge that carries the clean behaviour scores positive).
- ``eap-ig``: the same with the gradient averaged over ``steps`` runs whose input embeddings are
  ``corrupt + k/steps (clean - corrupt)``, k = 1..steps (EAP-IG, inputs variant): one step is eap.
- ``ifr``: the information-flow importance of each upstream output in the sum at the input, on the
  clean run (flow's proximity, normalised over the parts at each position), summed over positions.
- ``random``: standard normal scores from the seed.

Edge patching (MIB): each downstream input is the sum of its upstream outputs, taken from the run
in progress for edges in the circuit and from the corrupt run for the others, plus the bias; the
norm is applied to that sum. An input whose edges are all in the circuit is left as the model
computes it, and one whose edges are all out gets the corrupt run's input as the corrupt run
had it, so the whole graph gives the clean metric exactly and the empty one the corrupt metric
exactly. This module does not read files other than the pairs file and does not print.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import torch

from attnscope.capture import anatomy, hooks
from attnscope.capture.anatomy import Anatomy
from attnscope.core.causal.flow import _proximity
from attnscope.core.causal.pairs import Pair, Read, read_pairs
from attnscope.core.causal.stack import frozen
from attnscope.core.prompt.params import CIRCUIT_PARAMS, validate
from attnscope.errors import AttnscopeError, os_error
from attnscope.model import Loaded
from attnscope.results import derive
from attnscope.results.circuit import (
    FRACTIONS,
    CheckedEdge,
    CircuitEdge,
    CircuitResult,
    CurvePoint,
    Evaluation,
    Method,
    MethodRun,
    Pairs,
    SkippedPair,
)
from attnscope.results.graph import Graph, GraphKind, prune

Tensor = torch.Tensor


@dataclass(frozen=True)
class CircuitConfig:
    """The options of one ``circuit`` run."""

    methods: tuple[Method, ...] = ("eap-ig",)
    graph: GraphKind = "gqa"
    steps: int = 5
    batch_size: int = 8
    bootstrap: int = 1000
    seed: int = 0
    check: int = 0
    limit: int | None = None  # use at most this many pairs
    fractions: tuple[float, ...] = FRACTIONS
    evaluate: str | None = None  # a circuit file ({"edges": [{from, to, input}]}): patch exactly its edges


def check_config(config: CircuitConfig) -> None:
    """Refuse options no run could use (the declaration in ``core.prompt.params``, before a load)."""
    for method in config.methods:
        validate(CIRCUIT_PARAMS, method=method)
    if not config.methods and config.evaluate is None:
        raise AttnscopeError("circuit_no_method", arg="method")
    validate(
        CIRCUIT_PARAMS,
        graph=config.graph,
        steps=config.steps,
        bootstrap=config.bootstrap,
        check=config.check,
        limit=config.limit,
        batch_size=config.batch_size,
    )


def graph_of(body: Anatomy, kind: GraphKind) -> Graph:
    """The graph of a loaded model; an error where the layers are not the pre-norm layout it needs."""
    problem = body.flow_problem() or body.stack_problem()
    if problem is not None:
        raise AttnscopeError("circuit_layout", why=problem)
    for layer in body.layers:
        if layer.fused or layer.norms.placement != "pre" or layer.o is None:
            raise AttnscopeError("circuit_layer_kind", layer=layer.index, kind=body.model_type)
    if kind == "mib" and body.groups > 1:
        raise AttnscopeError("circuit_mib_scoring", n_kv=body.n_kv, n_heads=body.n_heads)
    return Graph(kind, body.n_layers, body.n_heads, body.n_kv)


def bias_at(body: Anatomy) -> list[Tensor | None]:
    """[2 * layer]: the constant in the residual stream at layer's attention input, [2 * layer + 1]
    at its MLP input, [2 * n_layers] at the logits' input: the o_proj biases of the blocks before
    (None while there is none)."""
    out: list[Tensor | None] = []
    total: Tensor | None = None
    for layer in body.layers:
        out.append(total)
        o = layer.proj("o")
        if o.bias is not None:
            total = o.bias.detach() if total is None else total + o.bias.detach()
        out.append(total)
    out.append(total)
    return out


# -- batches and one recorded run ---------------------------------------------------------------


@dataclass
class Batch:
    """Pairs of one token count: ids (B, T) of both prompts and the answer ids (B,)."""

    index: list[int]  # the pairs' places in the run's pair order
    clean: Tensor
    corrupt: Tensor
    target: Tensor
    foil: Tensor


def batches(pairs: Sequence[Pair], size: int) -> list[Batch]:
    """The pairs grouped by token count (no padding), in their order within a count."""
    by_length: dict[int, list[int]] = {}
    for i, pair in enumerate(pairs):
        by_length.setdefault(len(pair.clean), []).append(i)
    out = []
    for members in by_length.values():
        for start in range(0, len(members), size):
            part = members[start : start + size]
            out.append(
                Batch(
                    index=part,
                    clean=torch.tensor([pairs[i].clean for i in part]),
                    corrupt=torch.tensor([pairs[i].corrupt for i in part]),
                    target=torch.tensor([pairs[i].target for i in part]),
                    foil=torch.tensor([pairs[i].foil for i in part]),
                )
            )
    return out


def metric_of(logits: Tensor, batch: Batch) -> Tensor:
    """(B,): logit(target) - logit(foil) at the last position."""
    last = logits[:, -1].float()  # (B, vocab)
    rows = torch.arange(last.shape[0])
    return last[rows, batch.target] - last[rows, batch.foil]


@dataclass
class Recorded:
    """One run's upstream outputs and the residual stream at every input."""

    ups: Tensor  # (U, B, T, hidden): every upstream node's output, in the graph's order
    attn_in: list[Tensor]  # [layer] (B, T, hidden): the attention's input before its norm
    mlp_in: list[Tensor]  # [layer] (B, T, hidden): the MLP's input before its norm
    final: Tensor  # (B, T, hidden): the final norm's input
    metric: Tensor  # (B,)


def _upstream_names(body: Anatomy) -> list[str]:
    return ["resid_pre.0", "head_out.*", "mlp_out.*"]


def _fill_ups(graph: Graph, values: dict[str, Tensor], ups: Tensor, start: int, stop: int) -> None:
    """ups[start:stop] from a run's head_out / mlp_out reads (index 0, input, is the caller's)."""
    span = graph.n_heads + 1
    for u in range(max(start, 1), stop):
        layer, slot = divmod(u - 1, span)
        if slot < graph.n_heads:
            ups[u] = values[f"head_out.{layer}"][:, :, slot]
        else:
            ups[u] = values[f"mlp_out.{layer}"]


def record(body: Anatomy, graph: Graph, ids: Tensor, batch: Batch) -> Recorded:
    """One forward over ``ids`` keeping what the graph needs."""
    n = body.n_layers
    with hooks.Run(body) as run:
        run.read(*_upstream_names(body), "resid_pre.*", "resid_mid.*", f"resid_post.{n - 1}")
        out = run.forward(ids, torch.ones_like(ids), full=True, inference=False)
    first = run["resid_pre.0"]
    ups = first.new_empty((len(graph.upstream), *first.shape))
    ups[0] = first
    _fill_ups(graph, run.values, ups, 1, len(graph.upstream))
    return Recorded(
        ups=ups,
        attn_in=[run[f"resid_pre.{i}"] for i in range(n)],
        mlp_in=[run[f"resid_mid.{i}"] for i in range(n)],
        final=run[f"resid_post.{n - 1}"],
        metric=metric_of(out.logits, batch).detach(),
    )


# -- scoring ------------------------------------------------------------------------------------


def _gradients(body: Anatomy, batch: Batch, embeddings: Tensor | None) -> dict[str, Tensor]:
    """The metric's gradient (summed over the batch) at every downstream input: ``q.l`` (B, T, H,
    hidden), ``k.l``/``v.l`` (B, T, KV, hidden), ``mlp.l`` and ``logits`` (B, T, hidden); the run's
    input embeddings replaced by ``embeddings`` where given."""
    n = body.n_layers
    zeros: dict[str, Tensor] = {}

    def add_zero(name: str) -> Callable[[Tensor], Tensor]:
        def fn(x: Tensor) -> Tensor:
            zeros[name] = torch.zeros_like(x, requires_grad=True)
            return x + zeros[name]

        return fn

    with torch.enable_grad(), frozen(body.model), hooks.Run(body) as run:
        if embeddings is not None:
            run.edit("resid_pre.0", lambda _x: embeddings)
        for kind in ("q", "k", "v"):
            run.grad(f"{kind}_in.*")
        for layer in range(n):
            run.edit(f"resid_mid.{layer}", add_zero(f"mlp.{layer}"))
        run.edit(f"resid_post.{n - 1}", add_zero("logits"))
        out = run.forward(batch.clean, torch.ones_like(batch.clean), full=True)
        metric_of(out.logits, batch).sum().backward()  # type: ignore[no-untyped-call]
        grads = {f"{kind}.{layer}": run.gradient(f"{kind}_in.{layer}") for kind in "qkv" for layer in range(n)}
    for name, z in zeros.items():
        assert z.grad is not None
        grads[name] = z.grad
    return grads


def blocks(graph: Graph) -> list[tuple[str, int, list[int]]]:
    """The downstream inputs in runs of one kind and layer: (kind, layer, rows)."""
    out: list[tuple[str, int, list[int]]] = []
    for i, d in enumerate(graph.downstream):
        if out and out[-1][0] == d.input and out[-1][1] == d.layer:
            out[-1][2].append(i)
        else:
            out.append((d.input, d.layer, [i]))
    return out


def _contract(graph: Graph, delta: Tensor, grads: dict[str, Tensor]) -> npt.NDArray[np.float64]:
    """(E,) scores: each edge's upstream delta (U, B, T, hidden) dotted with its input's gradient."""
    out = np.zeros(graph.n_edges, dtype=np.float64)
    flat = delta.flatten(1, 2)  # (U, B*T, hidden)
    for kind, layer, rows in blocks(graph):
        if kind in ("q", "k", "v"):
            g = grads[f"{kind}.{layer}"].flatten(0, 1)  # (B*T, n, hidden)
        else:
            g = grads["logits" if kind == "logits" else f"mlp.{layer}"].flatten(0, 1).unsqueeze(1)  # (B*T, 1, hidden)
        n_up = graph.downstream[rows[0]].n_up
        scores = torch.einsum("uph,pnh->nu", flat[:n_up], g).double().numpy()  # (n, n_up)
        for j, r in enumerate(rows):
            start = int(graph.offsets[r])
            out[start : start + n_up] = scores[j]
    return out


def score_batch(body: Anatomy, graph: Graph, batch: Batch, method: Method, steps: int) -> npt.NDArray[np.float64]:
    """(E,): the batch's scores summed over its pairs (eap, eap-ig or ifr)."""
    clean = record(body, graph, batch.clean, batch)
    if method == "ifr":
        return _ifr(body, graph, clean)
    corrupt = record(body, graph, batch.corrupt, batch)
    delta = clean.ups - corrupt.ups  # (U, B, T, hidden)
    if method == "eap":
        return _contract(graph, delta, _gradients(body, batch, None))
    total = np.zeros(graph.n_edges, dtype=np.float64)
    start, end = corrupt.ups[0], clean.ups[0]
    for k in range(1, steps + 1):
        embeddings = start + (end - start) * (k / steps)
        total += _contract(graph, delta, _gradients(body, batch, embeddings))
    return total / steps


def _ifr(body: Anatomy, graph: Graph, clean: Recorded) -> npt.NDArray[np.float64]:
    """Information-flow importances: the share of each upstream output in the sum at each input
    (flow's proximity, over the parts and the bias at each position), summed over positions."""
    bias = bias_at(body)
    out = np.zeros(graph.n_edges, dtype=np.float64)
    shares: dict[tuple[int, str], Tensor] = {}
    for i, d in enumerate(graph.downstream):
        where = (
            2 * d.layer if d.input in ("q", "k", "v") else 2 * d.layer + 1 if d.input == "mlp" else 2 * body.n_layers
        )
        key = (where, "x")
        if key not in shares:
            x = (
                clean.attn_in[d.layer]
                if d.input in ("q", "k", "v")
                else clean.mlp_in[d.layer]
                if d.input == "mlp"
                else clean.final
            )
            parts = clean.ups[: d.n_up].double()  # (n, B, T, hidden)
            x = x.double()
            x_norm = x.abs().sum(-1)  # (B, T)
            prox = _proximity(x_norm, (x - parts).abs().sum(-1))  # (n, B, T)
            total = prox.sum(0)
            b = bias[where]
            if b is not None:
                total = total + _proximity(x_norm, (x - b.double()).abs().sum(-1))
            shares[key] = (prox / total.clamp_min(1e-30)).sum(dim=(1, 2))  # (n,) summed over the batch and positions
        start = int(graph.offsets[i])
        out[start : start + d.n_up] = shares[key].numpy()
    return out


# -- edge patching ------------------------------------------------------------------------------


class Patcher:
    """Edge-patched runs of one batch against its corrupt run (see the module docstring)."""

    def __init__(self, body: Anatomy, graph: Graph, batch: Batch, corrupt: Recorded) -> None:
        self.body, self.graph, self.batch, self.corrupt = body, graph, batch, corrupt
        self.bias = bias_at(body)
        self._sums: dict[int, Tensor] = {}

    def corrupt_sum(self, n_up: int) -> Tensor:
        """The sum of the corrupt run's first ``n_up`` upstream outputs (B, T, hidden)."""
        if n_up not in self._sums:
            self._sums[n_up] = self.corrupt.ups[:n_up].sum(0)
        return self._sums[n_up]

    def metric(self, keep: npt.NDArray[np.bool_]) -> Tensor:
        """(B,): the metric with the edges of ``keep`` (E,) from this run and the rest corrupt."""
        body, graph, corrupt = self.body, self.graph, self.corrupt
        n = body.n_layers
        cur = torch.empty_like(corrupt.ups)
        diff = torch.empty_like(corrupt.ups)  # this run's output - the corrupt run's, per upstream node
        filled = [0]  # upstream outputs of this run in cur (and diff) so far

        def delta(run: hooks.Run, n_up: int) -> Tensor:
            start = filled[0]
            if start == 0:
                cur[0] = run["resid_pre.0"]
            _fill_ups(graph, run.values, cur, max(start, 1), n_up)
            if n_up > start:
                diff[start:n_up] = cur[start:n_up] - corrupt.ups[start:n_up]
                filled[0] = n_up
            return diff[:n_up]  # a view: each difference computed once a run

        def mixed(run: hooks.Run, rows: list[int], bias: Tensor | None) -> Tensor:
            """(B, T, n, hidden): bias + corrupt sum + the circuit's deltas, for the inputs ``rows``."""
            n_up = graph.downstream[rows[0]].n_up
            c = torch.tensor(
                np.stack([keep[graph.offsets[r] : graph.offsets[r] + n_up] for r in rows]), dtype=cur.dtype
            )  # (n, U')
            base = self.corrupt_sum(n_up) if bias is None else self.corrupt_sum(n_up) + bias
            return base.unsqueeze(-2) + torch.einsum("nu,ubth->btnh", c, delta(run, n_up))

        status = self._status(keep)
        with hooks.Run(body) as run:
            run.read(*_upstream_names(body))
            for layer in range(n):
                self._attention(run, layer, status, mixed)
                self._mlp(run, layer, status, mixed)
            self._input(run, f"resid_post.{n - 1}", len(graph.downstream) - 1, corrupt.final, status, mixed)
            out = run.forward(self.batch.clean, torch.ones_like(self.batch.clean), full=True)
        return metric_of(out.logits, self.batch)

    def _status(self, keep: npt.NDArray[np.bool_]) -> list[str]:
        """Per downstream input: all (every edge in), none or mixed."""
        out = []
        for i in range(len(self.graph.downstream)):
            part = keep[self.graph.offsets[i] : self.graph.offsets[i + 1]]
            out.append("all" if part.all() else "none" if not part.any() else "mixed")
        return out

    def _attention(self, run: hooks.Run, layer: int, status: list[str], mixed: Any) -> None:
        graph, body = self.graph, self.body
        rows = {
            kind: [i for i, d in enumerate(graph.downstream) if d.layer == layer and d.input == kind] for kind in "qkv"
        }
        states = {s for kind in "qkv" for r in rows[kind] for s in [status[r]]}
        if states == {"all"}:
            return
        corrupt_in = self.corrupt.attn_in[layer]
        if states == {"none"}:
            norm = body.layers[layer].norms.attn_pre
            assert norm is not None
            normed = norm(corrupt_in)  # the corrupt run's own attention input, computed as it was
            run.edit(f"attn_in.{layer}", lambda _x: normed)
            return
        bias = self.bias[2 * layer]
        for kind in "qkv":
            mine = rows[kind]
            if all(status[r] == "all" for r in mine):
                continue

            def fn(seen: Tensor, mine: list[int] = mine) -> Tensor:
                new = seen.clone()  # (B, T, n, hidden)
                todo = [j for j, r in enumerate(mine) if status[r] == "mixed"]
                if todo:
                    new[:, :, todo] = mixed(run, [mine[j] for j in todo], bias)
                for j, r in enumerate(mine):
                    if status[r] == "none":
                        new[:, :, j] = corrupt_in
                return new

            run.edit(f"{kind}_in.{layer}", fn)

    def _mlp(self, run: hooks.Run, layer: int, status: list[str], mixed: Any) -> None:
        row = next(i for i, d in enumerate(self.graph.downstream) if d.layer == layer and d.input == "mlp")
        self._input(run, f"resid_mid.{layer}", row, self.corrupt.mlp_in[layer], status, mixed)

    def _input(self, run: hooks.Run, point: str, row: int, corrupt_in: Tensor, status: list[str], mixed: Any) -> None:
        """An MLP's or the logits' input: left, the corrupt run's, or the patched sum."""
        if status[row] == "all":
            return
        if status[row] == "none":
            run.edit(point, lambda _x: corrupt_in)
            return
        d = self.graph.downstream[row]
        bias = self.bias[2 * d.layer + 1] if d.input == "mlp" else self.bias[-1]
        run.edit(point, lambda _x: mixed(run, [row], bias)[:, :, 0])


# -- the whole run ------------------------------------------------------------------------------


@dataclass
class _Scored:
    method: Method
    scores: npt.NDArray[np.float64]


def _score(loaded: Loaded, graph: Graph, groups: list[Batch], method: Method, config: CircuitConfig, n: int) -> _Scored:
    if method == "random":
        return _Scored(method, np.random.default_rng(config.seed).standard_normal(graph.n_edges))
    body = anatomy.of(loaded.model)
    total = np.zeros(graph.n_edges, dtype=np.float64)
    for batch in groups:
        total += score_batch(body, graph, batch, method, config.steps)
    return _Scored(method, total / n)


def _circuits(
    graph: Graph, scores: npt.NDArray[np.float64], fractions: Sequence[float]
) -> list[tuple[int, npt.NDArray[np.bool_]]]:
    """(chosen, kept edges) at each fraction: the top edges by |score|, pruned."""
    out = []
    for fraction in fractions:
        chosen = derive.chosen_count(fraction, graph.n_edges)
        selected = np.zeros(graph.n_edges, dtype=bool)
        selected[derive.top_edges(scores, chosen)] = True
        out.append((chosen, prune(graph, selected)))
    return out


def read_circuit(path: str) -> list[tuple[str, str, str]]:
    """The edges of a circuit file, ``{"edges": [{"from", "to", "input"}, ...]}`` (other keys, such
    as a score, are ignored): (from, to, input) each; an error for a file that is not one."""
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except OSError as exc:
        raise os_error("evaluate", path, exc) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise AttnscopeError("circuit_file_json", arg="evaluate", path=path, why=str(exc)) from None
    edges = doc.get("edges") if isinstance(doc, dict) else None
    if not isinstance(edges, list):
        raise AttnscopeError("circuit_file_edges", arg="evaluate", path=path)
    if not edges:
        raise AttnscopeError("circuit_file_empty", arg="evaluate", path=path)
    out = []
    for n, edge in enumerate(edges):
        ok = isinstance(edge, dict) and all(isinstance(edge.get(k), str) for k in ("from", "to", "input"))
        if not ok:
            raise AttnscopeError("circuit_file_edge", arg="evaluate", path=path, n=n)
        out.append((edge["from"], edge["to"], edge["input"]))
    return out


def evaluation_edges(graph: Graph, path: str, edges: Sequence[tuple[str, str, str]]) -> npt.NDArray[np.bool_]:
    """(E,) the edges a circuit file names; an error naming the first edge the graph lacks."""
    keep = np.zeros(graph.n_edges, dtype=bool)
    index = graph.index
    for source, target, kind in edges:
        e = index.get((source, target, kind))
        if e is None:
            raise AttnscopeError(
                "circuit_edge_unknown",
                arg="evaluate",
                path=path,
                edge=f"{source} -> {target} <{kind}>",
                graph=graph.kind,
            )
        keep[e] = True
    return keep


def circuit(loaded: Loaded, pairs: str, *, config: CircuitConfig | None = None) -> CircuitResult:
    """Score every edge of the model's graph over the pairs in ``pairs`` (a JSONL file) by each of
    ``config.methods`` and measure the faithfulness of the top edges at each of ``config.fractions``
    by edge patching; with ``config.evaluate``, the faithfulness of exactly the edges given."""
    config = config or CircuitConfig()
    check_config(config)
    body = anatomy.of(loaded.model)
    graph = graph_of(body, config.graph)
    read = read_pairs(pairs, loaded.tokenizer, config.limit)
    keep_given = (
        evaluation_edges(graph, config.evaluate, read_circuit(config.evaluate)) if config.evaluate is not None else None
    )
    groups = batches(read.pairs, config.batch_size)
    n = len(read.pairs)
    scored = [_score(loaded, graph, groups, method, config, n) for method in config.methods]
    plans = [_circuits(graph, s.scores, config.fractions) for s in scored]
    checked: list[int] = (
        [int(e) for e in derive.top_edges(scored[0].scores, min(config.check, graph.n_edges))]
        if scored and config.check
        else []
    )
    clean, corrupt = np.zeros(n), np.zeros(n)
    points = [[np.zeros(n) for _ in plan] for plan in plans]
    check_metric = [np.zeros(n) for _ in checked]
    given = np.zeros(n)
    for batch in groups:
        corrupt_run = record(body, graph, batch.corrupt, batch)
        clean_run = record(body, graph, batch.clean, batch)
        clean[batch.index] = clean_run.metric.numpy()
        corrupt[batch.index] = corrupt_run.metric.numpy()
        patcher = Patcher(body, graph, batch, corrupt_run)
        with torch.inference_mode():
            for m, plan in enumerate(plans):
                for p, (_, keep) in enumerate(plan):
                    points[m][p][batch.index] = patcher.metric(keep).numpy()
            for c, e in enumerate(checked):
                everything = np.ones(graph.n_edges, dtype=bool)
                everything[e] = False
                check_metric[c][batch.index] = patcher.metric(everything).numpy()
            if keep_given is not None:
                given[batch.index] = patcher.metric(keep_given).numpy()
    return _result(
        loaded, graph, read, config, scored, plans, clean, corrupt, points, checked, check_metric, keep_given, given
    )


def _result(
    loaded: Loaded,
    graph: Graph,
    read: Read,
    config: CircuitConfig,
    scored: list[_Scored],
    plans: list[list[tuple[int, npt.NDArray[np.bool_]]]],
    clean: npt.NDArray[np.float64],
    corrupt: npt.NDArray[np.float64],
    points: list[list[npt.NDArray[np.float64]]],
    checked: Sequence[int],
    check_metric: list[npt.NDArray[np.float64]],
    keep_given: npt.NDArray[np.bool_] | None,
    given: npt.NDArray[np.float64],
) -> CircuitResult:
    lines = [p.line for p in read.pairs]
    weights = derive.poisson_weights(config.seed, lines, config.bootstrap)
    pc, pk = [float(v) for v in clean], [float(v) for v in corrupt]
    runs = [
        _method_run(graph, s, plan, pc, pk, [list(map(float, p)) for p in pts], config.fractions, weights)
        for s, plan, pts in zip(scored, plans, points, strict=True)
    ]
    checks = [
        CheckedEdge(
            index=int(e),
            estimate=float(scored[0].scores[e]),
            pair_metric=[float(v) for v in m],
            exact=derive.check_exact(pc, [float(v) for v in m]),
        )
        for e, m in zip(checked, check_metric, strict=True)
    ]
    evaluation = _evaluation(config, keep_given, given, pc, pk, weights)
    first = runs[0] if runs else None
    return CircuitResult(
        model=loaded.info,
        graph=graph.kind,
        n_edges=graph.n_edges,
        metric="logit_diff",
        pairs=Pairs(
            path=read.path,
            lines=read.lines,
            used=lines,
            skipped=[SkippedPair(line=line, reason=reason) for line, reason in read.skipped],
            tokens=sum(len(p.clean) for p in read.pairs),
        ),
        steps=config.steps,
        seed=config.seed,
        bootstrap=config.bootstrap,
        pair_clean=pc,
        pair_corrupt=pk,
        clean=float(np.mean(clean)),
        corrupt=float(np.mean(corrupt)),
        **_first_run(first),
        compare=runs[1:],
        check=checks,
        check_correlation=derive.spearman([c.estimate for c in checks], [c.exact for c in checks]) if checks else None,
        evaluation=evaluation,
    )


def _first_run(first: MethodRun | None) -> dict[str, Any]:
    """The result's top-level fields of the first method (empty with --evaluate alone)."""
    if first is None:
        return {"method": None, "edges": [], "curve": [], "cpr": None, "cmd": None, "cpr_ci": [], "cmd_ci": []}
    return {
        "method": first.method,
        "edges": first.edges,
        "curve": first.curve,
        "cpr": first.cpr,
        "cmd": first.cmd,
        "cpr_ci": first.cpr_ci,
        "cmd_ci": first.cmd_ci,
    }


def _evaluation(
    config: CircuitConfig,
    keep_given: npt.NDArray[np.bool_] | None,
    given: npt.NDArray[np.float64],
    clean: list[float],
    corrupt: list[float],
    weights: npt.NDArray[np.float64],
) -> Evaluation | None:
    if keep_given is None or config.evaluate is None:
        return None
    pm = [float(v) for v in given]
    low, high = derive.interval(derive.replicate_faithfulness(clean, corrupt, pm, weights))
    return Evaluation(
        path=config.evaluate,
        edges=int(keep_given.sum()),
        pair_metric=pm,
        metric=float(np.mean(given)),
        faithfulness=derive.faithfulness(clean, corrupt, pm),
        ci_low=low,
        ci_high=high,
    )


def _method_run(
    graph: Graph,
    scored: _Scored,
    plan: list[tuple[int, npt.NDArray[np.bool_]]],
    clean: list[float],
    corrupt: list[float],
    points: list[list[float]],
    fractions: Sequence[float],
    weights: npt.NDArray[np.float64],
) -> MethodRun:
    numbers = derive.curve_numbers(clean, corrupt, points, fractions, weights)
    up, down = graph.edges
    names, targets = graph.upstream, graph.downstream
    edges = [
        CircuitEdge(from_=names[u], to=targets[d].node, input=targets[d].input, score=float(s))
        for u, d, s in zip(up, down, scored.scores, strict=True)
    ]
    curve = [
        CurvePoint(
            fraction=float(f),
            chosen=chosen,
            edges=int(keep.sum()),
            pair_metric=pm,
            metric=numbers.metric[i],
            faithfulness=numbers.faithfulness[i],
            ci_low=numbers.ci[i][0],
            ci_high=numbers.ci[i][1],
        )
        for i, (f, (chosen, keep), pm) in enumerate(zip(fractions, plan, points, strict=True))
    ]
    return MethodRun(
        method=scored.method,
        edges=edges,
        curve=curve,
        cpr=numbers.cpr,
        cmd=numbers.cmd,
        cpr_ci=list(numbers.cpr_ci),
        cmd_ci=list(numbers.cmd_ci),
    )
