"""The engine of the causal commands (``ablate``, ``knockout``, ``patch``): one clean run kept
layer by layer, and sweeps of the later layers only, batched across interventions.

An intervention at layer ``l`` cannot change anything below ``l``. :class:`Stack` keeps the
residual stream at the input of every layer from one clean run, and :meth:`Stack.sweep` runs
a batch of interventions that start at different layers in one pass: a row whose
intervention sits at layer ``l`` joins the batch at layer ``l``, from the kept residual, so
no row runs the embedding or any layer below its own. The decoder layers are called as the
model calls them (its rotary embeddings, its mask, no cache), with attention routed through
the capture interface, which runs the model's own sdpa path. Edits are forward (pre-)hooks on
``o_proj`` (a head's slice of its input), ``k_proj``/``v_proj`` (a KV head's slice of their
output), or per-layer masks.

The metric is read at the last position: log P(target), or logit(target) - logit(foil).
The clean run keeps the model's logits at the last position only, and the logits of every row
of :func:`sweeps` are made at the end, many rows to one lm_head call, so that its weights are
read once for all of them rather than once per sweep.
This module does not tokenize prompts, load models or print.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from attnscope.capture import anatomy, engine, hooks
from attnscope.errors import AttnscopeError
from attnscope.results.common import Metric

RowEdit = Callable[[torch.Tensor], None]  # an in-place edit of one batch row's (T, n, D) view
# A site of a row's edit -> its hook point (capture.hooks): o_proj's input per head, k_proj's or v_proj's output per KV head.
_POINTS = {"o": "z", "k": "k_proj", "v": "v_proj"}
# At most this many bytes of fp32 logits at once, when :func:`sweeps` turns its rows' final states into metrics.
_LOGITS_BYTES = 128 << 20


def measure(logits: torch.Tensor, metric: Metric) -> torch.Tensor:
    """(B, V) logits at the last position -> (B,) metric values in fp32."""
    logits = logits.float()
    if metric.foil_id is None:
        return torch.log_softmax(logits, dim=-1)[:, metric.target_id]
    return logits[:, metric.target_id] - logits[:, metric.foil_id]


@dataclass
class Row:
    """One intervention of a sweep: it joins the batch at layer ``start`` with ``hidden`` (T, hidden),
    and at each layer of ``edits`` it edits its own batch row (``edits[layer]``: (site, edit of (T, n, D)))."""

    start: int
    hidden: torch.Tensor
    edits: dict[int, list[tuple[str, RowEdit]]] = field(default_factory=dict)
    cuts: dict[int, torch.Tensor] = field(default_factory=dict)  # layer -> (1|H, T, T) bool: edges to forbid


def unsupported(model: Any) -> AttnscopeError | None:
    """Why :class:`Stack` cannot run this model's layers one by one, or None when it can
    (``capture.anatomy.Anatomy.stack_problem``)."""
    return anatomy.of(model).stack_problem()


class Stack:
    """One prompt's clean run, kept at the input of every layer, and sweeps of the later layers.

    ``residual[l]`` (1, T, hidden) is the input of layer ``l`` (``residual[L]`` the output of
    the last); ``o_input[l]`` (1, T, heads * head_dim) is what ``o_proj`` of layer ``l`` read,
    ``k_out[l]``/``v_out[l]`` (1, T, kv_heads * head_dim) what ``k_proj``/``v_proj`` wrote.
    ``rows`` holds the last position's attention rows of every layer, (heads, T) fp32, when
    asked for.
    """

    def __init__(self, model: Any, ids: Sequence[int], *, rows: bool = False, what: str = "this command") -> None:
        engine.prepare(model)
        why = unsupported(model)
        if why is not None:
            raise AttnscopeError("causal_layerwise", message=why)
        self.model = model
        body = anatomy.of(model)
        self.anatomy = body
        self.n_layers = body.n_layers
        self.n_heads = body.n_heads
        self.n_kv = body.n_kv
        self.head_dim = body.head_dim
        self.groups = body.groups
        self.device = body.device
        self.layers: list[Any] = [layer.block for layer in body.layers]
        self.ids = torch.tensor([list(ids)], device=self.device)
        self.length = len(ids)
        self.residual: list[torch.Tensor] = []
        self.o_input: list[torch.Tensor] = []
        self.k_out: list[torch.Tensor] = []
        self.v_out: list[torch.Tensor] = []
        self.rows: list[torch.Tensor] = []
        self.calls: list[dict[str, Any]] = []  # per layer: the keyword arguments the model gave it
        self.masks: list[Any] = []  # per layer: the mask the model gave it (None: sdpa's own causal mask)
        self.clean_logits: torch.Tensor | None = None  # (1, V) fp32: the clean run's, at the last position
        with torch.no_grad():
            self._clean(rows, what)

    def _clean(self, rows: bool, what: str) -> None:
        """The model's own forward once, kept at every layer: each layer's input (the residual),
        the keyword arguments the model called it with (its mask, rotary embeddings: whatever the
        family passes), and o_proj's input, k_proj's and v_proj's outputs. Layers are later
        replayed with exactly these arguments, so the replay is the model's forward whatever the
        family does around its layers (Gemma's embedding scale, Granite's multipliers, per-layer
        rotary bases)."""
        n, last = self.n_layers, self.n_layers - 1
        with hooks.Run(self.anatomy, positions=torch.tensor([[self.length - 1]])) as run:
            run.read("resid_pre.*", f"resid_post.{last}", "z.*", "k_proj.*", "v_proj.*", *(["rows.*"] if rows else []))
            keep: dict[str, Any] = (
                {"logits_to_keep": 1} if "logits_to_keep" in inspect.signature(self.model.forward).parameters else {}
            )
            out = run.forward(self.ids, torch.ones_like(self.ids), inference=False, full=True, **keep)
        self.residual = [run[f"resid_pre.{layer}"] for layer in range(n)] + [run[f"resid_post.{last}"]]
        self.calls = [run.calls[f"resid_pre.{layer}"] for layer in range(n)]
        # (1, T, n, D) -> (1, T, n * D): views of what o_proj read and k_proj/v_proj wrote
        self.o_input = [run[f"z.{layer}"].flatten(2) for layer in range(n)]
        self.k_out = [run[f"k_proj.{layer}"].flatten(2) for layer in range(n)]
        self.v_out = [run[f"v_proj.{layer}"].flatten(2) for layer in range(n)]
        self.masks = [call.get("attention_mask") for call in self.calls]
        own = out.logits[:, -1].float()
        mine = self.logits(self.residual[-1])
        self.clean_logits = mine
        gap = float((own - mine).abs().max())
        if gap > 1e-4 * max(1.0, float(own.abs().max())):
            raise AttnscopeError("causal_logits", what=what, model_type=self.anatomy.model_type, gap=f"{gap:.2g}")
        if rows:
            assert run.captured is not None
            engine.check_finite(run.captured.rows)
            self.rows = [run[f"rows.{layer}"][0, :, 0].float() for layer in range(n)]  # (H, T)

    def layer(self, index: int, hidden: torch.Tensor, mask: Any) -> torch.Tensor:
        """Layer ``index`` on ``hidden`` (B, T, hidden), called as the model called it, with ``mask``
        in place of its own when given."""
        kwargs = dict(self.calls[index])
        if mask is not None:
            kwargs["attention_mask"] = mask
        out = self.layers[index](hidden, **kwargs)
        result: torch.Tensor = out[0] if isinstance(out, tuple) else out
        return result

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """(B, T, hidden) output of the last layer -> (B, V) fp32 logits at the last position, as the
        model's head makes them (its final norm, lm_head, logit scale and soft-cap)."""
        return self.anatomy.logits(hidden[:, -1]).float()

    def baseline(self, metric: Metric) -> float:
        """The metric on the clean run."""
        assert self.clean_logits is not None
        return float(measure(self.clean_logits, metric)[0])

    def heads_view(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, n * head_dim) -> (B, T, n, head_dim), sharing storage."""
        return x.view(x.shape[0], x.shape[1], -1, self.head_dim)

    def sweep(self, rows: Sequence[Row]) -> torch.Tensor:
        """(len(rows), hidden): each row's output of the last layer at the last position, in the
        order of ``rows``. One pass over the layers from the first row's start, each row joining
        at its own start layer; every edit touches only its own row."""
        if not rows:
            return torch.zeros(0, self.residual[0].shape[-1], device=self.device, dtype=self.residual[0].dtype)
        order = sorted(range(len(rows)), key=lambda i: rows[i].start)
        ordered = [rows[i] for i in order]
        starts = [r.start for r in ordered]
        hidden: torch.Tensor | None = None
        with torch.no_grad():
            for index in range(starts[0], self.n_layers):
                joining = [r.hidden for r in ordered if r.start == index]
                if joining:
                    new = torch.stack(joining)
                    hidden = new if hidden is None else torch.cat([hidden, new])
                assert hidden is not None
                hidden = self._step(index, hidden, ordered[: hidden.shape[0]])
            assert hidden is not None
        out = torch.empty_like(hidden[:, -1])
        out[torch.tensor(order, device=out.device)] = hidden[:, -1]  # back to the order of ``rows``
        return out

    def _step(self, index: int, hidden: torch.Tensor, rows: Sequence[Row]) -> torch.Tensor:
        """Layer ``index`` of a sweep on ``hidden`` (B, T, hidden), batch row b being ``rows[b]``, with
        each row's edits and cuts of that layer."""
        site_edits = [(b, e) for b, r in enumerate(rows) for e in r.edits.get(index, [])]
        masked = [b for b, r in enumerate(rows) if index in r.cuts]
        mask = self._mask_for(index, rows, masked) if masked else None
        if not site_edits:
            return self.layer(index, hidden, mask)
        with hooks.Run(self.anatomy) as run:
            self._row_edits(run, index, site_edits)
            return self.layer(index, hidden, mask)

    def metrics(self, finals: torch.Tensor, metric: Metric) -> list[float]:
        """The metric of each row of ``finals`` (B, hidden), the last layer's outputs at the last
        position: logits for as many rows at once as ``_LOGITS_BYTES`` allows, in blocks of even size."""
        vocab = int(self.clean_logits.shape[-1]) if self.clean_logits is not None else 1
        most = max(1, _LOGITS_BYTES // (4 * vocab))
        blocks = -(-finals.shape[0] // most)  # ceil
        block = max(1, -(-finals.shape[0] // max(1, blocks)))
        values: list[float] = []
        with torch.no_grad():
            for at in range(0, finals.shape[0], block):
                part = finals[at : at + block]
                values += measure(self.anatomy.logits(part).float(), metric).tolist()
        return values

    def _row_edits(self, run: hooks.Run, index: int, edits: list[tuple[int, tuple[str, RowEdit]]]) -> None:
        """Each row's edits of layer ``index``, at the hook point of its site, touching its own batch row."""
        for site in {site for _, (site, _) in edits}:
            mine = [(b, fn) for b, (s, fn) in edits if s == site]

            def edit(view: torch.Tensor, mine: list[tuple[int, RowEdit]] = mine) -> torch.Tensor:
                y = view.clone()  # (B, T, n, D)
                for b, fn in mine:
                    fn(y[b])
                return y

            run.edit(f"{_POINTS[site]}.{index}", edit)

    def _mask_for(self, index: int, rows: Sequence[Row], masked: list[int]) -> torch.Tensor:
        """A bool mask (B, 1|H, T, T), True = attend: the layer's own mask, with each row's cut edges forbidden."""
        from attnscope.capture import masking

        t = self.length
        given = self.masks[index]
        if given is None:
            base = torch.ones(t, t, dtype=torch.bool, device=self.device).tril()[None]
        else:
            base = masking.allows(given)[0, :, :t, :t]
        cuts = [rows[b].cuts[index] for b in masked]
        n_mask_heads = max(c.shape[0] for c in cuts)
        mask = base.expand(len(rows), n_mask_heads, t, t).clone()
        for b, cut in zip(masked, cuts, strict=True):
            mask[b] &= ~cut.expand(n_mask_heads, t, t)
        return mask


@contextlib.contextmanager
def frozen(model: torch.nn.Module) -> Iterator[None]:
    """No parameter needs a gradient inside the block (a backward then reaches activations only)."""
    params = [p for p in model.parameters() if p.requires_grad]
    for p in params:
        p.requires_grad_(False)
    try:
        yield
    finally:
        for p in params:
            p.requires_grad_(True)


def sweeps(rows: Sequence[Row], metric: Metric, stack: Stack, batch: int) -> list[float]:
    """The metric of every row, ``batch`` rows a sweep, rows taken in order of their start layer;
    the logits of all of them made at the end (:meth:`Stack.metrics`)."""
    order = sorted(range(len(rows)), key=lambda i: rows[i].start)
    finals = [stack.sweep([rows[i] for i in order[at : at + batch]]) for at in range(0, len(order), max(1, batch))]
    values = stack.metrics(torch.cat(finals), metric) if finals else []
    out = [0.0] * len(rows)
    for i, v in zip(order, values, strict=True):
        out[i] = v
    return out


def set_head(head: int, values: torch.Tensor, positions: Sequence[int] | None = None) -> Callable[[torch.Tensor], None]:
    """An edit of one row's (T, n, D) view: head ``head``'s slice becomes ``values`` (T, D), at ``positions`` only."""

    def edit(view: torch.Tensor) -> None:
        if positions is None:
            view[:, head] = values.to(view.dtype)
        else:
            where = list(positions)
            view[where, head] = values[where].to(view.dtype)

    return edit


def cut(stack: Stack, queries: list[int], keys: list[int], heads: list[int]) -> torch.Tensor:
    """(1|H, T, T) bool: True at the query -> key cells of ``heads`` (one plane when every head is cut)."""
    t = stack.length
    every = len(heads) == stack.n_heads
    out = torch.zeros(1 if every else stack.n_heads, t, t, dtype=torch.bool, device=stack.device)
    cells = torch.zeros(t, t, dtype=torch.bool, device=stack.device)
    cells[torch.tensor(queries)[:, None], torch.tensor(keys)[None, :]] = True
    for h in [0] if every else heads:
        out[h] = cells
    return out
