"""Named hook points on a model's anatomy: read, edit and keep gradients at the model's own modules.

Every activation an analysis needs has one name, in the spirit of TransformerLens's
``run_with_cache`` / ``run_with_hooks`` and nnsight's ``.input`` / ``.output``, but each point is
a forward (pre-)hook on a module the model itself runs (``capture.anatomy`` says which), or the
attention function ``capture.engine`` registers; nothing of the model is re-implemented. Layer
``l`` counts from 0; ``*`` in place of the layer names every layer (``"resid_post.*"``).

====================  ===================  ====================================================
name                  shape                what it is
====================  ===================  ====================================================
``resid_pre.l``       (B, T, hidden)       block l's input (the residual stream before it)
``resid_mid.l``       (B, T, hidden)       between attention and MLP: the input of the MLP's
                                           norm (of the MLP where the layer norms outputs);
                                           none in a parallel layer (Cohere)
``resid_post.l``      (B, T, hidden)       block l's output
``attn_in.l``         (B, T, hidden)       the attention block's input (after its pre-norm)
``attn_out.l``        (B, T, hidden)       the attention block's output (before any post-norm)
``z.l``               (B, T, H, D)         each query head's output before o_proj
``head_out.l``        (B, T, H, hidden)    each head's contribution: its slice of o_proj's input
                                           through its columns of o_proj (o_proj's output is
                                           their sum plus the bias)
``q_in.l``            (B, T, H, hidden)    the residual stream each query head's q_proj slice reads,
                                           before the layer's attention input norm (one view per
                                           head, no copy); an edit or a kept gradient gives each
                                           head its own input, the norm applied to it
``k_in.l``, ``v_in.l``  (B, T, KV, hidden)   the same for k_proj and v_proj, one per KV head (never
                                           per query head)
``k_proj.l``          (B, T, KV, D)        what k_proj wrote, per KV head (before RoPE)
``v_proj.l``          (B, T, KV, D)        what v_proj wrote, per KV head
``q.l``               (B, H, T, D)         the query after RoPE, per query head
``k.l``, ``v.l``      (B, KV, T, D)        key after RoPE and value, per KV head (never copied
                                           per query head: head h reads KV head h // groups)
``rows.l``            (B, H, P, T)         the attention rows at the run's positions, exact,
                                           fp32 on the CPU (read only)
``mask.l``            (B, 1|H, T, T)       the mask the layer handed its attention (read only,
                                           in ``run.masks[l]``: None where it is plain causal)
``attn_weights.l``    (B, H, T, T)         the weights the attention module itself returned (its
                                           second output): only transformers' eager attention
                                           returns them, so only in ``forward(eager=True)``
                                           (read only; absent where the module returned none)
``mlp_out.l``         (B, T, hidden)       the MLP's output (before any post-norm)
``logits``            (B, T, vocab)        the model's logits (its scale and soft-cap included)
====================  ===================  ====================================================

One context object holds a run::

    with hooks.Run(anatomy.of(model), positions=...) as run:
        run.read("resid_pre.*", "rows.3")       # kept (detached) in run[name]
        run.edit("z.2", fn)                     # fn(value) -> the value used from there on
        run.grad("resid_mid.1")                 # kept in the graph (run[name]); run.gradient(name) after backward
        run.watch("resid_post.*", fn)           # fn(layer, value) as each is computed, nothing kept
        out = run.forward(input_ids, attention_mask)

Module points act on any forward made inside the block (also a caller's own layer-by-layer
replay); ``q``/``k``/``v``/``rows`` act through the engine, in :meth:`Run.forward`. Reads keep what
the model computed (a view, no copy, unless ``cpu``); an edit returns the new value (per-head
points: the same (…, heads, D) shape). A read of a module's input (``resid_pre.l``, ``attn_in.l``)
also keeps the keyword arguments the module was called with (``run.calls[name]``: its mask, its
rotary embeddings); a read of ``q``/``k``/``v`` keeps the layer's softmax settings and mask
(``run.settings[l]``, ``run.masks[l]``). ``forward(stop=True)`` stops after the last layer a
point names. Runs do not nest (the engine's capture in progress is a context variable). This module does not tokenize or print.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import torch

from attnscope.capture import engine
from attnscope.capture.anatomy import Anatomy, Layer
from attnscope.errors import AttnscopeError

Edit = Callable[[torch.Tensor], torch.Tensor]

# name -> (module of the layer, "input" | "output" | "weights" (its second output), per head: "q" | "kv" | None)
_MODULE_POINTS: dict[str, tuple[Callable[[Layer], Any], str, str | None]] = {
    "resid_pre": (lambda layer: layer.block, "input", None),
    "resid_mid": (
        lambda layer: layer.norms.mlp_pre or (None if layer.norms.placement == "parallel" else layer.mlp),
        "input",
        None,
    ),
    "resid_post": (lambda layer: layer.block, "output", None),
    "attn_in": (lambda layer: layer.mixer, "input", None),
    "attn_out": (lambda layer: layer.mixer, "output", None),
    "mlp_out": (lambda layer: layer.mlp, "output", None),
    "z": (lambda layer: layer.o, "input", "q"),
    "k_proj": (lambda layer: layer.k, "output", "kv"),
    "v_proj": (lambda layer: layer.v, "output", "kv"),
    "attn_weights": (lambda layer: layer.attn, "weights", None),
}
_ENGINE_POINTS = ("q", "k", "v")
_INPUT_POINTS = ("q_in", "k_in", "v_in")  # each head's own projection input, before the attention's input norm
POINTS = (*_MODULE_POINTS, "head_out", *_INPUT_POINTS, *_ENGINE_POINTS, "mask", "rows", "logits")


@dataclass(frozen=True)
class Point:
    """One named point: its kind (``resid_pre``, ...) and layer (None for ``logits``)."""

    kind: str
    layer: int | None

    @property
    def name(self) -> str:
        return self.kind if self.layer is None else f"{self.kind}.{self.layer}"


def points(body: Anatomy, name: str) -> list[Point]:
    """The points ``name`` stands for (``kind.l``, ``kind.*`` or ``logits``); an error for any other name."""
    kind, _, layer = name.partition(".")
    if kind not in POINTS or (kind == "logits") != (layer == ""):
        raise AttnscopeError("hook_unknown", name=name, points=", ".join(POINTS))
    if kind == "logits":
        return [Point(kind, None)]
    if layer == "*":
        indices = [i.index for i in body.layers if _has(body, kind, i)]
    elif layer.isdigit() and int(layer) < body.n_layers:
        indices = [int(layer)]
    else:
        raise AttnscopeError("hook_layer", name=name, last=body.n_layers - 1)
    return [Point(kind, i) for i in indices]


def _has(body: Anatomy, kind: str, layer: Layer) -> bool:
    """Whether ``layer`` has the point ``kind`` (a linear-attention layer has no q, k, v, rows, heads)."""
    if kind in _MODULE_POINTS:
        return _MODULE_POINTS[kind][0](layer) is not None
    if kind in _INPUT_POINTS:
        return layer.norms.attn_pre is not None and getattr(layer, kind[0]) is not None
    return layer.attn is not None and (kind != "head_out" or layer.o is not None)


class Run:
    """One context of reads, edits and kept gradients at named points (see the module docstring).

    ``positions`` (B, P): the query positions of the ``rows`` points (None: the last of each call).
    ``cpu``: reads are copied to the CPU as they are taken.
    """

    def __init__(self, body: Anatomy, *, positions: torch.Tensor | None = None, cpu: bool = False) -> None:
        self.anatomy = body
        self.positions = positions
        self.cpu = cpu
        self.values: dict[str, torch.Tensor] = {}
        self.calls: dict[str, dict[str, Any]] = {}
        self.settings: dict[int, engine.Settings] = {}
        self.masks: dict[int, torch.Tensor | None] = {}
        self.captured: engine.Captured | None = None
        self._kept: dict[str, tuple[torch.Tensor, torch.Size | None]] = {}
        self._handles: list[Any] = []
        self._taps: dict[int, list[Callable[[engine.Handed], None]]] = {}
        self._rows: set[int] = set()
        self._kept_layers: set[int] = set()  # layers whose q, k, v or z are kept (the memory guard counts them)
        self._module_layers: set[int] = set()  # layers of the module points (stop=True stops after the last)
        self._logits = False
        self._stash: dict[int, torch.Tensor] = {}  # each layer's attention-norm input, for the q/k/v_in points
        self._norming = False
        self._grads = 0
        self._open = False

    def __enter__(self) -> Run:
        self._open = True
        return self

    def __exit__(self, *exc: object) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
        self._open = False

    def __getitem__(self, name: str) -> torch.Tensor:
        return self.values[name]

    # -- asking for points ---------------------------------------------------------------

    def read(self, *names: str) -> None:
        """Keep the value of each point (``run[name]``), detached."""
        for name in names:
            for point in points(self.anatomy, name):
                self._add(point, "read", None)

    def watch(self, name: str, fn: Callable[[int | None, torch.Tensor], None]) -> None:
        """Hand ``fn(layer, value)`` each value at the points of ``name`` as it is computed, keeping
        nothing (a reduction that needs one layer at a time)."""
        for point in points(self.anatomy, name):
            self._add(point, "watch", functools.partial(_watched, fn, point.layer))

    def edit(self, name: str, fn: Edit) -> None:
        """From the next forward on, the value at each point of ``name`` is ``fn(value)``."""
        for point in points(self.anatomy, name):
            self._add(point, "edit", fn)

    def grad(self, name: str) -> None:
        """Keep the value at each point of ``name`` in the graph; :meth:`gradient` after a backward."""
        for point in points(self.anatomy, name):
            self._add(point, "grad", None)

    def gradient(self, name: str) -> torch.Tensor:
        """The gradient at a point kept by :meth:`grad`, in the point's shape (None before a backward)."""
        kept, shape = self._kept[name]
        got = kept.grad
        if got is None:
            raise AttnscopeError("hook_no_gradient", name=name)
        return got if shape is None else got.view(shape)

    def _add(self, point: Point, action: str, fn: Edit | None) -> None:
        if not self._open:
            raise RuntimeError("hook points are asked for inside `with hooks.Run(...) as run:`")
        self._grads += action == "grad"
        if point.kind not in ("rows", "mask", *_ENGINE_POINTS, "logits"):
            assert point.layer is not None
            self._module_layers.add(point.layer)
        if point.kind in ("rows", "mask", "attn_weights") and action != "read":
            raise AttnscopeError("hook_read_only", kind=point.kind)
        if point.kind in (*_ENGINE_POINTS, "z") and point.layer is not None:
            self._kept_layers.add(point.layer)
        if point.kind == "rows":
            assert point.layer is not None
            self._rows.add(point.layer)
        elif point.kind in (*_ENGINE_POINTS, "mask"):
            assert point.layer is not None
            self._taps.setdefault(point.layer, []).append(self._tap(point, action, fn))
        elif point.kind == "logits":
            self._logits = True
            self._handles.append(self.anatomy.model.register_forward_hook(self._logits_hook(point, action, fn)))
        elif point.kind == "head_out":
            self._handles.append(self._head_out(point, action, fn))
        elif point.kind in _INPUT_POINTS:
            self._handles.extend(self._proj_in(point, action, fn))
        else:
            self._handles.append(self._module_hook(point, action, fn))

    # -- what each point does -------------------------------------------------------------

    def _act(self, name: str, x: torch.Tensor, action: str, fn: Edit | None, width: int | None) -> torch.Tensor:
        """Read, edit or keep the gradient of ``x``; per head (``width`` = head_dim) it is seen as (..., n, D)."""
        seen = x if width is None else x.view(*x.shape[:-1], -1, width)  # (..., n * D) -> (..., n, D)
        if action == "read":
            self.values[name] = seen.detach().cpu() if self.cpu else seen.detach()
            return x
        if action == "watch":
            assert fn is not None
            fn(seen)
            return x
        if action == "edit":
            assert fn is not None
            new = fn(seen)
            return new if width is None else new.reshape(x.shape)
        kept = x if x.requires_grad else x.detach().requires_grad_(True)
        kept.retain_grad()
        self._kept[name] = (kept, None if width is None else seen.shape)
        self.values[name] = seen.detach()
        return kept

    def _module_hook(self, point: Point, action: str, fn: Edit | None) -> Any:
        assert point.layer is not None
        layer = self.anatomy.layers[point.layer]
        get, where, per_head = _MODULE_POINTS[point.kind]
        module = get(layer)
        if module is None:
            raise AttnscopeError("hook_missing", layer=point.layer, model_type=self.anatomy.model_type, kind=point.kind)
        width = self.anatomy.head_dim if per_head else None
        name = point.name
        if where == "input":

            def before(_m: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
                x = args[0] if args else kwargs["hidden_states"]
                if action == "read":
                    self.calls[name] = {k: v for k, v in kwargs.items() if k != "hidden_states"}
                new = self._act(name, x, action, fn, width)
                if new is x:
                    return None
                if args:
                    return (new, *args[1:]), kwargs
                return args, {**kwargs, "hidden_states": new}

            return module.register_forward_pre_hook(before, with_kwargs=True)

        if where == "weights":

            def returned(_m: Any, _args: Any, out: Any) -> None:
                weights = out[1] if isinstance(out, tuple) and len(out) > 1 else None
                if isinstance(weights, torch.Tensor):
                    self._act(name, weights, action, fn, None)

            return module.register_forward_hook(returned)

        def after(_m: Any, _args: Any, out: Any) -> Any:
            x = out[0] if isinstance(out, tuple) else out
            new = self._act(name, x, action, fn, width)
            if new is x:
                return None
            return (new, *out[1:]) if isinstance(out, tuple) else new

        return module.register_forward_hook(after)

    def _head_out(self, point: Point, action: str, fn: Edit | None) -> Any:
        """Each head's contribution, computed from o_proj's own input and weight; an edit or a kept
        gradient makes o_proj's output their sum (plus the bias)."""
        assert point.layer is not None
        o_proj, n_heads = self.anatomy.writer(point.layer, "the head_out point")
        d = self.anatomy.head_dim
        name = point.name

        def after(_m: Any, args: tuple[Any, ...], out: torch.Tensor) -> Any:
            z = args[0].view(*args[0].shape[:-1], n_heads, d)  # (B, T, H*D) -> (B, T, H, D)
            w = o_proj.weight.view(o_proj.out_features, n_heads, d)  # (hidden, H, D)
            parts = torch.einsum("bthd,ohd->btho", z, w)  # (B, T, H, hidden)
            new = self._act(name, parts, action, fn, None)
            if action == "read":
                return None
            summed = new.sum(dim=2)  # (B, T, hidden)
            return summed if o_proj.bias is None else summed + o_proj.bias

        return o_proj.register_forward_hook(after)

    def _proj_in(self, point: Point, action: str, fn: Edit | None) -> list[Any]:
        """A q/k/v projection's input per head, before the layer's attention input norm: a pre-hook on
        that norm keeps its input; the projection's hook hands it on as one view per head and, for
        an edit or a kept gradient, computes the projection from each head's own (normed) input."""
        assert point.layer is not None
        layer = self.anatomy.layers[point.layer]
        norm, proj = layer.norms.attn_pre, getattr(layer, point.kind[0])
        if norm is None or proj is None:
            raise AttnscopeError("hook_missing", layer=point.layer, model_type=self.anatomy.model_type, kind=point.kind)
        d, index, name = self.anatomy.head_dim, point.layer, point.name
        n = proj.out_features // d

        def keep(_m: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            if not self._norming:
                self._stash[index] = args[0] if args else kwargs["hidden_states"]

        def after(_m: Any, _args: Any, out: torch.Tensor) -> Any:
            x = self._stash[index]
            seen = x.unsqueeze(-2).expand(*x.shape[:-1], n, x.shape[-1])  # (B, T, hidden) -> (B, T, n, hidden)
            new = self._act(name, seen, action, fn, None)
            if action in ("read", "watch"):
                return None
            self._norming = True
            try:
                normed = norm(new)  # (B, T, n, hidden): the model's own norm, per head
            finally:
                self._norming = False
            w = proj.weight.view(n, d, proj.in_features)  # (n, D, hidden)
            heads = torch.einsum("btni,ndi->btnd", normed, w)  # (B, T, n, D)
            if proj.bias is not None:
                heads = heads + proj.bias.view(n, d)
            return heads.reshape(*heads.shape[:-2], n * d)  # (B, T, n * D)

        return [
            norm.register_forward_pre_hook(keep, with_kwargs=True),
            proj.register_forward_hook(after),
        ]

    def _tap(self, point: Point, action: str, fn: Edit | None) -> Callable[[engine.Handed], None]:
        kind, name = point.kind, point.name

        def tap(handed: engine.Handed) -> None:
            if action == "read":
                s = handed.settings
                sinks = None if s.sinks is None else s.sinks.detach().cpu()
                self.settings[handed.layer] = engine.Settings(s.scaling, s.sliding_window, s.softcap, sinks)
                mask = handed.mask
                self.masks[handed.layer] = (
                    None if mask is None else (mask.detach().cpu() if self.cpu else mask.detach())
                )
            if kind == "mask":
                return
            x = {"q": handed.query, "k": handed.key, "v": handed.value}[kind]
            new = self._act(name, x, action, fn, None)
            if kind == "q":
                handed.query = new
            elif kind == "k":
                handed.key = new
            else:
                handed.value = new

        return tap

    def _logits_hook(self, point: Point, action: str, fn: Edit | None) -> Callable[..., Any]:
        def after(_m: Any, _args: Any, out: Any) -> Any:
            new = self._act(point.name, out.logits, action, fn, None)
            if new is not out.logits:
                out.logits = new
            return None

        return after

    # -- the forward ----------------------------------------------------------------------

    def request(self, stop: bool = False) -> engine.Request:
        """The engine's request for this run's ``q``/``k``/``v``/``rows`` points."""
        taps = {layer: _chain(fns) for layer, fns in self._taps.items()}
        return engine.Request(
            positions=self.positions,
            layers=frozenset(self._rows),
            stop=stop,
            taps=taps,
            kept=frozenset(self._kept_layers),
        )

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        *,
        stop: bool = False,
        inference: bool = True,
        full: bool = False,
        eager: bool = False,
        **kwargs: Any,
    ) -> Any:
        """One forward with every point of this run in place: the decoder's, or the whole causal LM's
        (``full``, or when a ``logits`` point is asked for); its output is returned (None where it
        stopped). No gradient is kept unless a :meth:`grad` point asks for one; ``inference`` False
        runs under ``no_grad`` instead of ``inference_mode`` (what it keeps may then meet autograd
        later). ``stop``: stop after the last layer an engine point names (or a module point, where one
        comes later). ``eager``: on transformers' eager attention instead of the capturing one (a
        reference: the module points act, ``q``/``k``/``v``/``rows``/``mask`` are not reached)."""
        model = self.anatomy.model
        module = model if self._logits or full else self.anatomy.decoder
        mode: Literal["inference", "no_grad", "grad"] = (
            "grad" if self._grads else "inference" if inference else "no_grad"
        )
        request = self.request(stop and not self._logits)
        last = max(self._module_layers, default=-1)
        handle = None
        if request.stop and last >= max(request.wanted, default=-1):  # a module point comes last: stop after its block
            request.stop = False
            handle = self.anatomy.layers[last].block.register_forward_hook(_stop)
        try:
            out, captured = engine.forward(
                model, module, input_ids, attention_mask, request, mode, eager=eager, **kwargs
            )
        finally:
            if handle is not None:
                handle.remove()
        self.captured = captured
        for layer in self._rows:
            self.values[f"rows.{layer}"] = captured.rows[layer]
        return out


def _watched(fn: Callable[[int | None, torch.Tensor], None], layer: int | None, x: torch.Tensor) -> torch.Tensor:
    fn(layer, x)
    return x


def _stop(*_: Any) -> None:
    raise engine.StopForward


def capture(
    body: Anatomy,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    names: list[str],
    *,
    positions: torch.Tensor | None = None,
    cpu: bool = False,
    stop: bool = False,
) -> Run:
    """One forward that reads ``names`` (a run of reads only); the values stay in the returned run."""
    with Run(body, positions=positions, cpu=cpu) as run:
        run.read(*names)
        run.forward(input_ids, attention_mask, stop=stop)
    return run


def _chain(fns: list[Callable[[engine.Handed], None]]) -> Callable[[engine.Handed], None]:
    if len(fns) == 1:
        return fns[0]

    def tap(handed: engine.Handed) -> None:
        for fn in fns:
            fn(handed)

    return tap
