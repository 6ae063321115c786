"""One loaded model's anatomy: the one place that knows where its parts are and what they do.

:func:`of` builds an :class:`Anatomy` once per model (``capture.engine.prepare`` builds it, and it
is kept on the model) and every analysis asks it: the decoder and its layers; per layer the
attention module with its q/k/v/o projections (or the fact that q, k and v are one fused
projection), the MLP, the norms and where they sit (``pre``, ``post``, ``sandwich``, ``parallel``),
the attention kind (``full``, ``sliding`` with its window, ``linear``); the head counts
(``n_heads``, ``n_kv``, ``groups``), ``head_dim``, ``hidden``, ``max_positions`` and each layer's
``rope_parameters``; the final norm and the logits head with the
family's scale and soft-cap (:meth:`Anatomy.logits`); the rotary embedding. The refusal checks
live here too, each returning the reason a family cannot run an analysis (:meth:`Anatomy.stack_problem`,
:meth:`Anatomy.flow_problem`, :meth:`Anatomy.recompute_problem`, :func:`head_writer`).

It reads modules and config; it never runs a forward (``capture.hooks`` does, through the points
named on this anatomy) and never re-implements a layer. Layers count from 0; query head ``h``
reads KV head ``h // groups``.
"""

from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass
from typing import Any, Literal

import torch

from attnscope.errors import AttnscopeError
from attnscope.model.config import head_dim as config_head_dim
from attnscope.model.config import layer_kinds

Placement = Literal["pre", "post", "sandwich", "parallel"]
_ATTR = "_attnscope_anatomy"  # where the anatomy is kept on the model


@dataclass(frozen=True)
class Norms:
    """A layer's norms by what they touch: the attention's input (``attn_pre``) and output
    (``attn_post``), the MLP's input (``mlp_pre``) and output (``mlp_post``); None where there is none."""

    attn_pre: torch.nn.Module | None
    attn_post: torch.nn.Module | None
    mlp_pre: torch.nn.Module | None
    mlp_post: torch.nn.Module | None

    @property
    def placement(self) -> Placement:
        """``pre`` (Qwen, Llama), ``post`` (OLMo 2), ``sandwich`` (Gemma 2/3, GLM-4: both) or
        ``parallel`` (Cohere: attention and MLP read the same normed input)."""
        pre = self.attn_pre is not None or self.mlp_pre is not None
        post = self.attn_post is not None or self.mlp_post is not None
        if self.attn_pre is not None and self.mlp_pre is None and not post:
            return "parallel"
        if pre and post:
            return "sandwich"
        return "post" if post else "pre"


@dataclass(frozen=True)
class RmsNorm:
    """A norm that is ``gain * x / rms(x)`` (``rms(x) = sqrt(mean(x²) + eps)``, one scale per
    position): Gemma's ``(1 + weight)`` or the plain ``weight`` as gain. With a real forward's
    per-position scale ``1 / rms(x_i)`` frozen, it is the diagonal map ``gain * scale_i`` on each
    position's vector, linear in that vector's parts (what ``core.causal.flow`` splits)."""

    name: str  # the layer's attribute holding it (post_attention_layernorm, ...)
    gain: torch.Tensor  # (hidden,), fp32 on the CPU
    eps: float

    def scale(self, x: torch.Tensor) -> torch.Tensor:
        """(..., hidden) -> (..., 1): ``1 / sqrt(mean(x²) + eps)`` of the norm's real input ``x``, in fp32."""
        x = x.float()
        return torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)


def rms_norm(module: torch.nn.Module, name: str) -> RmsNorm | None:
    """``module`` as an :class:`RmsNorm`, or None where it is not one. Its eps and weight are read
    from the module (``eps`` or ``variance_epsilon``, a weight per dimension, no bias), and the gain
    is whichever of ``weight`` and ``1 + weight`` makes ``gain * x / rms(x)`` the module's own
    output on a probe vector."""
    eps = getattr(module, "eps", getattr(module, "variance_epsilon", None))
    weight = getattr(module, "weight", None)
    if not isinstance(eps, (int, float)) or not isinstance(weight, torch.Tensor) or weight.dim() != 1:
        return None
    if isinstance(getattr(module, "bias", None), torch.Tensor):
        return None
    probe = torch.linspace(-1.0, 2.0, weight.numel(), dtype=torch.float32)
    with torch.inference_mode():
        out = module(probe.to(weight.device, weight.dtype)[None])[0].float().cpu()  # (hidden,)
    probe = probe.to(weight.dtype).float()  # the values the module saw
    tol = 1e-5 if weight.dtype == torch.float32 else 2e-2
    plain = weight.detach().float().cpu()
    for gain in (plain, 1.0 + plain):
        ours = gain * probe * torch.rsqrt(probe.pow(2).mean() + float(eps))
        if torch.allclose(out, ours, rtol=tol, atol=tol):
            return RmsNorm(name, gain, float(eps))
    return None


def _norms(block: torch.nn.Module) -> Norms:
    """Which of the layer's norm modules sits where, from the names transformers gives them
    (``post_attention_layernorm`` is the MLP's input norm in a pre-norm layer, the attention's
    output norm in Gemma's sandwich and in OLMo 2's post-norm layers)."""

    def get(name: str) -> torch.nn.Module | None:
        module = getattr(block, name, None)
        return module if isinstance(module, torch.nn.Module) else None

    first, second = get("input_layernorm"), get("post_attention_layernorm")
    if get("pre_feedforward_layernorm") is not None:  # Gemma 2/3: norms on both sides of each block
        return Norms(first, second, get("pre_feedforward_layernorm"), get("post_feedforward_layernorm"))
    if first is None:  # OLMo 2, EXAONE 4: the blocks' outputs are normed, not their inputs
        return Norms(None, second, None, get("post_feedforward_layernorm"))
    return Norms(first, get("post_self_attn_layernorm"), second, get("post_mlp_layernorm"))


def _linear(module: Any, name: str) -> torch.nn.Linear | None:
    got = getattr(module, name, None)
    return got if isinstance(got, torch.nn.Linear) else None


@dataclass(frozen=True)
class Layer:
    """One decoder layer. ``attn`` is its ``self_attn`` (None in a linear-attention layer, whose
    mixer is ``linear_attn``); ``q``/``k``/``v``/``o`` its projections, ``qkv`` the one fused
    projection where q, k and v are not separate (Phi-3); ``layer_type`` the config's own name
    for its attention (``full_attention``, ...), ``kind`` attnscope's (full, sliding, linear),
    ``window`` the sliding window in keys."""

    index: int
    block: torch.nn.Module
    attn: torch.nn.Module | None
    mixer: torch.nn.Module | None
    q: torch.nn.Linear | None
    k: torch.nn.Linear | None
    v: torch.nn.Linear | None
    o: torch.nn.Linear | None
    qkv: torch.nn.Linear | None
    mlp: torch.nn.Module | None
    norms: Norms
    layer_type: str
    kind: str
    window: int | None

    @property
    def fused(self) -> bool:
        """q, k and v come out of one projection (no separate q_proj, k_proj, v_proj)."""
        return self.attn is not None and (self.q is None or self.k is None or self.v is None)

    def proj(self, name: Literal["q", "k", "v", "o"]) -> torch.nn.Linear:
        """The ``{name}_proj`` linear layer; an error where the layer has none (``Anatomy.stack_problem``
        says so before any analysis gets here)."""
        got = {"q": self.q, "k": self.k, "v": self.v, "o": self.o}[name]
        if got is None:
            raise AttnscopeError("no_proj", layer=self.index, name=name)
        return got

    def scaling(self, default: float) -> float:
        """The attention module's score scale, ``default`` (1/sqrt(head_dim)) where it keeps none."""
        return float(getattr(self.attn, "scaling", default))


class Anatomy:
    """What a loaded causal LM is made of (see the module docstring); built by :func:`of`."""

    def __init__(self, model: Any) -> None:
        self.model = model
        base = getattr(model, "model", None)
        self.decoder: Any = base if isinstance(base, torch.nn.Module) else model
        config: Any = getattr(self.decoder, "config", None) or getattr(model, "config", None)
        self.config = config
        self.model_type = str(getattr(config, "model_type", "") or type(model).__name__)
        self.n_heads = int(getattr(config, "num_attention_heads", 0) or 0)
        self.n_kv = int(getattr(config, "num_key_value_heads", None) or self.n_heads)
        self.groups = self.n_heads // self.n_kv if self.n_kv else 1
        self.head_dim = config_head_dim(config) if self.n_heads else 0
        self.hidden = int(getattr(config, "hidden_size", 0) or 0)
        self.max_positions: int | None = getattr(config, "max_position_embeddings", None)  # None: no limit known
        norm = getattr(self.decoder, "norm", None)
        self.final_norm: torch.nn.Module | None = norm if isinstance(norm, torch.nn.Module) else None
        head = getattr(model, "lm_head", None)
        self.lm_head: torch.nn.Module | None = head if isinstance(head, torch.nn.Module) else None
        scale = getattr(model, "logit_scale", None)  # Cohere multiplies by it
        self.logit_scale: float | None = float(scale) if isinstance(scale, (int, float)) else None
        divide = getattr(config, "logits_scaling", None)  # Granite divides by it
        self.logits_scaling: float | None = float(divide) if isinstance(divide, (int, float)) and divide else None
        cap = getattr(config, "final_logit_softcapping", None)  # Gemma 2/3
        self.softcap: float | None = float(cap) if isinstance(cap, (int, float)) and cap else None
        self.residual_multiplier = getattr(config, "residual_multiplier", None)
        rotary = getattr(self.decoder, "rotary_emb", None)
        self.rotary: torch.nn.Module | None = rotary if isinstance(rotary, torch.nn.Module) else None
        blocks = getattr(self.decoder, "layers", None)
        self.has_layers = isinstance(blocks, torch.nn.ModuleList)
        listed = list(blocks) if isinstance(blocks, torch.nn.ModuleList) else []
        self.layers: tuple[Layer, ...] = tuple(self._layers(listed, config))

    def _layers(self, blocks: list[torch.nn.Module], config: Any) -> list[Layer]:
        as_dict = config.to_dict() if hasattr(config, "to_dict") else {}
        kinds = layer_kinds(as_dict)
        types = getattr(config, "layer_types", None)
        window = getattr(config, "sliding_window", None)
        out = []
        for index, block in enumerate(blocks):
            attn = getattr(block, "self_attn", None)
            attn = attn if isinstance(attn, torch.nn.Module) else None
            mixer = attn if attn is not None else getattr(block, "linear_attn", None)
            kind = kinds[index] if index < len(kinds) else "full"
            layer_type = str(types[index]) if isinstance(types, list) and index < len(types) else "full_attention"
            mlp = getattr(block, "mlp", None)
            out.append(
                Layer(
                    index=index,
                    block=block,
                    attn=attn,
                    mixer=mixer if isinstance(mixer, torch.nn.Module) else None,
                    q=_linear(attn, "q_proj"),
                    k=_linear(attn, "k_proj"),
                    v=_linear(attn, "v_proj"),
                    o=_linear(attn, "o_proj"),
                    qkv=_linear(attn, "qkv_proj"),
                    mlp=mlp if isinstance(mlp, torch.nn.Module) else None,
                    norms=_norms(block),
                    layer_type=layer_type,
                    kind=kind,
                    window=window if kind == "sliding" and isinstance(window, int) and window > 0 else None,
                )
            )
        return out

    @property
    def n_layers(self) -> int:
        return len(self.layers)

    @property
    def kinds(self) -> list[str]:
        return [layer.kind for layer in self.layers]

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device  # type: ignore[no-any-return]

    # -- the logits head ---------------------------------------------------------------------

    def norm_module(self) -> torch.nn.Module:
        """The final norm; an error where the decoder has none."""
        if self.final_norm is None:
            raise AttnscopeError("no_final_norm", model=type(self.model).__name__)
        return self.final_norm

    def head_module(self) -> torch.nn.Module:
        """The logits head; an error where the model has none (not a causal LM)."""
        if self.lm_head is None:
            raise AttnscopeError("no_lm_head", model=type(self.model).__name__)
        return self.lm_head

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        """(..., hidden) raw residual stream -> (..., vocab) logits via final norm + lm_head, then what
        the model's own head does to its logits: a scale (Cohere's ``logit_scale``, Granite's
        ``logits_scaling``) and final soft-capping (Gemma 2/3's ``final_logit_softcapping``).
        Gradients flow through it (``ablate --approx``)."""
        logits: torch.Tensor = self.head_module()(self.norm_module()(x))
        if self.logit_scale is not None:
            logits = logits * self.logit_scale
        if self.logits_scaling is not None:
            logits = logits / self.logits_scaling
        if self.softcap is not None:
            logits = torch.tanh(logits / self.softcap) * self.softcap
        return logits

    # -- rotary embeddings -------------------------------------------------------------------

    @property
    def rope_per_type(self) -> bool:
        """Whether each layer type has a RoPE of its own (Gemma 3, OLMo 3 in transformers 5): the
        rotary_emb is called with the layer's type and ``config.rope_parameters`` is keyed by type."""
        return self.rotary is not None and "layer_type" in inspect.signature(self.rotary.forward).parameters

    def rope_parameters(self, index: int) -> dict[str, Any]:
        """Layer ``index``'s RoPE parameters (``rope_theta``, ``rope_type``, ...): its layer type's own
        entry of ``config.rope_parameters`` where each type has one, else that one dict."""
        rope = getattr(self.config, "rope_parameters", None)
        if not isinstance(rope, dict):
            return {}
        own = rope.get(self.layers[index].layer_type) if 0 <= index < len(self.layers) else None
        if isinstance(own, dict):
            return own
        return {} if rope and all(isinstance(v, dict) for v in rope.values()) else rope

    def inv_freq(self, index: int) -> torch.Tensor | None:
        """The rotary_emb's speeds for layer ``index`` (its type's ``{type}_inv_freq`` where each type
        has its own), or None where the module keeps none."""
        name = f"{self.layers[index].layer_type}_inv_freq" if self.rope_per_type else "inv_freq"
        got = getattr(self.rotary, name, None)
        return got if isinstance(got, torch.Tensor) else None

    def cos_sin(self, positions: list[int], index: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The model's own rotary_emb for layer ``index`` at arbitrary positions: cos, sin each
        (len(positions), D), fp32 (called with the layer's type where each type has its own RoPE)."""
        if self.rotary is None:
            raise AttnscopeError("rope_no_rotary", model=type(self.model).__name__)
        device = self.device
        pos = torch.tensor([positions], device=device)  # (1, N)
        kind = {"layer_type": self.layers[index].layer_type} if self.rope_per_type else {}
        with torch.inference_mode():
            cos, sin = self.rotary(torch.zeros(1, dtype=torch.float32, device=device), pos, **kind)  # each (1, N, D)
        return cos[0].float().cpu(), sin[0].float().cpu()

    def qk_norm(self, index: int, which: Literal["q", "k"]) -> tuple[torch.nn.Module, bool] | None:
        """Layer ``index``'s ``q_norm`` or ``k_norm`` between the projection and RoPE, and whether it
        norms each head apart (a weight of head_dim, or (heads, head_dim): Qwen 3, Gemma 3, Cohere)
        rather than the whole projection (a weight of heads x head_dim: OLMo 2/3); None where the
        layer has none, or one of another shape."""
        attn = self.layers[index].attn
        module = getattr(attn, f"{which}_norm", None)
        weight = getattr(module, "weight", None)
        if not isinstance(module, torch.nn.Module) or not isinstance(weight, torch.Tensor):
            return None
        n = self.n_heads if which == "q" else self.n_kv
        if weight.shape[-1] == self.head_dim:
            return module, True
        if weight.dim() == 1 and weight.numel() == n * self.head_dim:
            return module, False
        return None

    # -- refusal checks: each returns why an analysis cannot run, or None ----------------------

    def stack_problem(self) -> AttnscopeError | None:
        """Why ``core.causal.stack.Stack`` cannot run this model's layers one by one, or None when it can.

        A sweep calls each decoder layer with the arguments the model's own forward gave it (its
        mask, its rotary embeddings, whatever the family passes), and edits ``k_proj``, ``v_proj``
        and ``o_proj``: a layer without those modules (a fused qkv projection) or of a kind other
        than full or sliding attention (a linear-attention layer) is not supported.
        """
        types = set(getattr(self.config, "layer_types", None) or ["full_attention"])
        other = sorted(types - {"full_attention", "sliding_attention"})
        if other:
            return AttnscopeError("why_layer_types", kind=self.model_type, types=", ".join(other))
        for layer in self.layers:
            missing = [name for name in ("k_proj", "v_proj", "o_proj") if not hasattr(layer.attn, name)]
            if missing:
                return AttnscopeError("why_attn_modules", kind=self.model_type, names=", ".join(missing))
        return None

    def flow_problem(self) -> AttnscopeError | None:
        """Why the layers are not ``x_mid = x + P(attn(...))``, ``x_out = x_mid + P(mlp(x_mid...))``
        (the layout ``core.flow`` decomposes), or None when they are. ``P`` is the identity (a
        pre-norm layer) or a post-block :class:`RmsNorm` (:meth:`post_norms`); a parallel block, a
        post-block norm of another kind and a scaled residual are refused."""
        for layer in self.layers:
            missing = [name for name, part in (("self_attn", layer.attn), ("mlp", layer.mlp)) if part is None]
            if missing:
                return AttnscopeError(
                    "why_layer_missing", layer=layer.index, kind=self.model_type, names=", ".join(missing)
                )
            if layer.norms.placement == "parallel":
                return AttnscopeError("why_parallel", kind=self.model_type)
            for module in (layer.norms.attn_post, layer.norms.mlp_post):
                if module is not None and rms_norm(module, "") is None:
                    return self._block_norm(layer, module)
        multiplier = self.residual_multiplier
        if multiplier not in (None, 1, 1.0):
            return AttnscopeError("why_residual_scale", kind=self.model_type, value=multiplier)
        return None

    def post_norms(self, index: int) -> tuple[RmsNorm | None, RmsNorm | None]:
        """Layer ``index``'s norms on the attention's and on the MLP's output, as :class:`RmsNorm`
        (None where the layer has none); an error where one is a norm of another kind
        (:meth:`flow_problem` says so before a forward)."""
        layer = self.layers[index]
        out: list[RmsNorm | None] = []
        for module in (layer.norms.attn_post, layer.norms.mlp_post):
            got = None if module is None else rms_norm(module, _name_in(layer.block, module))
            if module is not None and got is None:
                raise AttnscopeError("flow_layout", message=self._block_norm(layer, module))
            out.append(got)
        return out[0], out[1]

    def _block_norm(self, layer: Layer, module: torch.nn.Module) -> AttnscopeError:
        return AttnscopeError(
            "why_block_norm",
            layer=layer.index,
            kind=self.model_type,
            name=_name_in(layer.block, module),
            cls=type(module).__name__,
        )

    def recompute_problem(self, index: int) -> str | None:
        """Why q and k of layer ``index`` are not RoPE of a plain q_proj / k_proj output (what
        ``explain`` and ``rope`` recompute), or None when they are."""
        layer = self.layers[index] if 0 <= index < len(self.layers) else None
        attn = None if layer is None else layer.attn
        if layer is None or attn is None:
            return "it has no layers[N].self_attn"
        if layer.q is None or layer.k is None or layer.v is None:
            return "it projects q, k and v with one fused layer (no separate q_proj, k_proj, v_proj)"
        for which in ("q", "k"):
            if isinstance(getattr(attn, f"{which}_norm", None), torch.nn.Module) and self.qk_norm(index, which) is None:
                return f"its {which}_norm between the projection and RoPE has a weight of neither head_dim nor heads x head_dim"
        own_dim = int(getattr(attn, "head_dim", 0) or 0)
        if self.n_heads and own_dim and layer.q.out_features != self.n_heads * own_dim:
            return "its q_proj also makes a gate for each head's output"
        return self._rope_problem(attn, own_dim, index)

    def _rope_problem(self, attn: torch.nn.Module, own_dim: int, index: int) -> str | None:
        """Why the layer's RoPE is not the model's rotary_emb over every dim of a head, or None."""
        rope = self.rope_parameters(index)
        partial = rope.get("partial_rotary_factor")
        partial = partial if partial is not None else getattr(self.config, "partial_rotary_factor", 1.0)
        if isinstance(partial, (int, float)) and partial < 1.0:
            return f"it rotates only part of each head (partial_rotary_factor {partial:g})"
        if getattr(attn, "use_rope", True) in (False, 0):
            return "this layer applies no RoPE at all (a NoPE layer)"
        # EXAONE 4 rotates only where `self.sliding_window is None or self.is_sliding`
        if getattr(attn, "is_sliding", None) is False and getattr(attn, "sliding_window", None) is not None:
            return "this layer applies no RoPE at all (a NoPE layer)"
        if self.rotary is None:
            return "it has no rotary_emb module on the decoder to call"
        cos, sin = self.cos_sin([1, 2], index)  # (2, D)
        width = cos.shape[-1]
        if own_dim and width != own_dim:
            return f"its rotary_emb gives cos/sin for {width} of the {own_dim} dims of a head, applied its own way"
        if not _half_split(attn, cos, sin):
            return "its apply_rotary_pos_emb pairs the dims of a head otherwise than i with i + d/2 (interleaved)"
        return None

    def recomputable(self, index: int, what: str = "this command") -> torch.nn.Module:
        """Layer ``index``'s attention module, when ``what`` (explain, rope) can recompute its q and k
        as ``RoPE(q_proj(x))``, ``RoPE(k_proj(x))`` (through the layer's :meth:`qk_norm` where it has
        one); otherwise one error saying which step it lacks."""
        why = self.recompute_problem(index)
        if why is not None:
            raise AttnscopeError("rope_recompute", what=what, layer=index, model_type=self.model_type, why=why)
        attn = self.layers[index].attn
        assert attn is not None
        return attn

    def writer(self, index: int, what: str) -> tuple[torch.nn.Linear, int]:
        """Layer ``index``'s o_proj and query-head count (:func:`head_writer`)."""
        return head_writer(self.layers[index].attn, self.head_dim, what)


def head_writer(module: Any, head_dim: int, what: str) -> tuple[torch.nn.Linear, int]:
    """The attention module's o_proj and its number of query heads, where what a key adds through
    head h is ``alpha_ij f_h(x_j)``; an error naming ``what`` needs it otherwise."""
    o_proj = getattr(module, "o_proj", None)
    weight = getattr(o_proj, "weight", None)
    if not isinstance(o_proj, torch.nn.Linear) or not isinstance(weight, torch.Tensor):
        raise AttnscopeError("capture_no_o_proj", module=type(module).__name__, what=what)
    n_heads = int(weight.shape[1]) // head_dim
    q_proj = getattr(module, "q_proj", None)
    if isinstance(q_proj, torch.nn.Linear) and q_proj.out_features == 2 * n_heads * head_dim:
        raise AttnscopeError("capture_gated", module=type(module).__name__, what=what)
    return o_proj, n_heads


def _half_split(attn: torch.nn.Module, cos: torch.Tensor, sin: torch.Tensor) -> bool:
    """Whether the modeling module's own ``apply_rotary_pos_emb`` is ``x cos + rotate_half(x) sin``
    with dim i paired with i + d/2 (true where the module has none to ask), on a probe vector."""
    fn = getattr(sys.modules.get(type(attn).__module__), "apply_rotary_pos_emb", None)
    if not callable(fn):
        return True
    half = cos.shape[-1] // 2
    x = torch.linspace(-1.0, 1.0, 2 * cos.shape[-1]).view(1, 1, 2, -1)  # (1, 1, 2, D)
    ours = x * cos + torch.cat((-x[..., half:], x[..., :half]), dim=-1) * sin
    with torch.inference_mode():
        theirs = fn(x, x, cos[None], sin[None])[0]
    return bool(torch.allclose(theirs.float(), ours, atol=1e-6))


def _name_in(block: torch.nn.Module, module: torch.nn.Module) -> str:
    """The attribute of ``block`` that holds ``module``."""
    return next((name for name, child in block.named_children() if child is module), type(module).__name__)


def of(model: Any) -> Anatomy:
    """The model's anatomy, built on the first call and kept on the model."""
    got = model.__dict__.get(_ATTR) if hasattr(model, "__dict__") else None
    if isinstance(got, Anatomy) and got.model is model:
        return got
    built = Anatomy(model)
    if hasattr(model, "__dict__"):
        model.__dict__[_ATTR] = built
    return built
