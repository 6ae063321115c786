"""Load a model and its tokenizer: the device and dtype choice, then ``from_pretrained``.

A GGUF file is first converted into the cache (``attnscope.model.gguf_cache``) and loaded
from there. The model comes back in eval mode with transformers' sdpa attention; switching
it to attnscope's capturing attention is the capture side's step
(``attnscope.capture.engine.prepare``). Nothing here prints: transient progress goes
through ``progress``, lines a user must see through ``notice`` and ``warn``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attnscope.errors import AttnscopeError
from attnscope.model import hub
from attnscope.model.config import check_config, head_dim, layer_kinds, model_shape
from attnscope.model.gguf_cache import converted
from attnscope.model.said import Progress, Said, noop
from attnscope.model.tokenizer import check_vocab
from attnscope.results.common import ModelInfo

DEVICES = ("auto", "cpu", "cuda", "mps")
DTYPES = ("auto", "float32", "bfloat16", "float16")


@dataclass
class Loaded:
    """A loaded model with its tokenizer and the facts the results report."""

    model: Any  # a transformers PreTrainedModel
    tokenizer: Any
    info: ModelInfo
    source: str  # "hub", "folder" or "gguf"
    path: str  # what from_pretrained was finally given


def pick_device(device: str) -> str:
    """The device to run on: ``device`` itself, or for "auto" cuda, then mps, then cpu."""
    import torch

    if device not in DEVICES:
        raise AttnscopeError("unknown_device", arg="device", value=repr(device), choices=", ".join(DEVICES))
    if device == "auto":
        if torch.cuda.is_available():
            return "cuda"
        if torch.backends.mps.is_available():
            return "mps"
        return "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise AttnscopeError("no_cuda", arg="device")
    if device == "mps" and not torch.backends.mps.is_available():
        raise AttnscopeError("no_mps", arg="device")
    return device


# float32 on the CPU needs the weights (4 bytes each) and this much more again for the run itself.
FP32_HEADROOM = 1.25


def available_memory() -> int | None:
    """Bytes of memory the system can still give (MemAvailable in /proc/meminfo); None where unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def weight_count(spec: str, kind: str) -> int | None:
    """How many weights a folder's safetensors or a GGUF file holds, from their headers alone; None
    where that cannot be read without loading (a hub id, a .bin checkpoint)."""
    import json
    import struct

    if kind == "gguf":
        from attnscope.model.gguf_header import read_gguf_header

        try:
            shapes = list(read_gguf_header(Path(spec)).tensors.values())
        except AttnscopeError:
            return None
    elif kind == "folder":
        shapes = []
        for file in sorted(Path(spec).glob("*.safetensors")):
            try:
                with open(file, "rb") as fh:
                    size = struct.unpack("<Q", fh.read(8))[0]
                    header = json.loads(fh.read(size))
            except (OSError, ValueError, struct.error):
                return None
            shapes += [v["shape"] for k, v in header.items() if k != "__metadata__" and isinstance(v, dict)]
        if not shapes:
            return None
    else:
        return None
    total = 0
    for shape in shapes:
        n = 1
        for d in shape:
            n *= int(d)
        total += n
    return total


def pick_dtype(
    dtype: str, device: str, warn: Progress = noop, weights: int | None = None, notice: Progress = noop
) -> Any:
    """The torch dtype for ``dtype`` on ``device``. "auto" is bfloat16 on CUDA; on the CPU it is
    float32, unless ``weights`` (their count) in float32 would not fit in the memory available,
    where it is bfloat16 (half the bytes) and ``notice`` says so."""
    import torch

    if dtype not in DTYPES:
        raise AttnscopeError("unknown_dtype", arg="dtype", value=repr(dtype), choices=", ".join(DTYPES))
    if dtype == "auto":
        if device == "cuda":
            return torch.bfloat16
        free = available_memory()
        if weights and free and weights * 4 * FP32_HEADROOM > free:
            gb = 1024**3
            notice(Said.of("auto_bfloat16", need=f"{weights * 4 / gb:.1f}", free=f"{free / gb:.1f}"))
            return torch.bfloat16
        return torch.float32
    if dtype == "float16" and device == "cpu":
        warn(Said.of("float16_cpu"))
    return getattr(torch, dtype)


def _cannot_load(spec: str, detail: object, kind: str, path: str) -> AttnscopeError:
    """The model failed to load; for a GGUF, the cached conversion is named, with how to redo it."""
    if kind == "gguf":
        return AttnscopeError("cannot_load_damaged", spec=spec, detail=detail, folder=path)
    return AttnscopeError("cannot_load", spec=spec, detail=detail)


def _load_error(exc: Exception, spec: str, kind: str, path: str) -> AttnscopeError:
    """What a failed ``from_pretrained`` of ``spec`` means: the hub's own message for a hub id,
    else the failure itself (and, for a GGUF, the cached conversion to delete)."""
    if isinstance(exc, OSError):
        if kind == "hub":
            return hub.hub_error(spec, exc)
        return _cannot_load(spec, exc, kind, path)
    # ValueError, safetensors' SafetensorError on a truncated file, ...
    detail = f"{type(exc).__name__}: {exc}"
    if "ignore_mismatched_sizes" in detail:  # transformers points at a report it logged, which is silenced
        if kind != "gguf":
            return AttnscopeError("cannot_load_shapes", spec=spec)
        detail = "its weights do not have the shapes its config.json describes"
    return _cannot_load(spec, detail, kind, path)


def load(
    model: str | None = None,
    *,
    revision: str | None = None,
    device: str = "auto",
    dtype: str = "auto",
    device_map: str | None = None,
    progress: Progress = noop,
    warn: Progress = noop,
    notice: Progress = noop,
    tokenizer: Any = None,
) -> Loaded:
    """Load the tokenizer and the model of ``model`` (a hub id, folder or .gguf file; None: the default).

    ``progress`` gets transient steps; ``notice`` the lines a user should see however
    stderr is connected (a cold GGUF cache: what is done and about how long; waiting for
    another process's conversion); ``warn`` a warning about the chosen dtype. ``tokenizer``:
    one already loaded for this model (``load_tokenizer``, for the checks before the load); it
    is used when it came from the folder the model loads from, else the tokenizer loads again.
    """
    shape = model_shape(model, revision)  # a bad path, or offline and not cached: fails before torch
    spec, kind = shape.spec, shape.kind
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    hub.quiet_transformers()
    dev = pick_device(device) if device_map is None else "cpu"
    import torch

    # Under a device_map the weights land on GPUs when there are any (bf16), else on the CPU (fp32).
    sharded_on = "cuda" if torch.cuda.is_available() else "cpu"
    weights = weight_count(spec, kind) if dtype == "auto" and device_map is None and dev == "cpu" else None
    torch_dtype = pick_dtype(dtype, dev if device_map is None else sharded_on, warn, weights, notice)
    dtype_name = str(torch_dtype).removeprefix("torch.")
    t0 = time.perf_counter()
    path = spec
    if kind == "gguf":
        path = str(converted(Path(spec), dtype_name, progress, notice))
    progress(Said.of("loading", model=spec))
    options: dict[str, Any] = {"revision": revision, "local_files_only": hub.hub_local_only()} if kind == "hub" else {}
    try:
        config = AutoConfig.from_pretrained(path, **options)
        check_config(config, spec)
        if getattr(tokenizer, "name_or_path", None) != path:  # a tokenizer file is read once per run
            tokenizer = AutoTokenizer.from_pretrained(path, **options)
        tokenizer = check_vocab(tokenizer, spec)
        # sdpa where the family supports it; eager otherwise (soft-capping, sink logits). The
        # capture switches either to its own attention before any forward.
        from transformers import MODEL_FOR_CAUSAL_LM_MAPPING

        model_class = MODEL_FOR_CAUSAL_LM_MAPPING[type(config)]
        impl = "sdpa" if getattr(model_class, "_supports_sdpa", False) else "eager"
        kwargs: dict[str, Any] = {"dtype": torch_dtype, "attn_implementation": impl, **options}
        if device_map is not None:
            kwargs["device_map"] = device_map
        net = AutoModelForCausalLM.from_pretrained(path, **kwargs)
    except AttnscopeError:
        raise
    except Exception as exc:
        raise _load_error(exc, spec, kind, path) from exc
    if device_map is None:
        net = net.to(dev)
    net.eval()
    cfg = net.config
    info = ModelInfo(
        id=spec,
        num_hidden_layers=int(cfg.num_hidden_layers),
        num_attention_heads=int(cfg.num_attention_heads),
        num_key_value_heads=int(getattr(cfg, "num_key_value_heads", None) or cfg.num_attention_heads),
        dtype=dtype_name,
        device=str(next(net.parameters()).device) if device_map is None else f"device_map={device_map}",
        model_type=str(cfg.model_type),
        head_dim=head_dim(cfg),
        layer_kinds=layer_kinds(cfg.to_dict()),
        sliding_window=_window(cfg),
        sink_logits=any(name.endswith("self_attn.sinks") for name, _ in net.named_parameters()),
    )
    progress(Said.of("loaded", seconds=f"{time.perf_counter() - t0:.1f}", device=info.device, dtype=dtype_name))
    return Loaded(model=net, tokenizer=tokenizer, info=info, source=kind, path=path)


def _window(config: Any) -> int | None:
    """The sliding window of a config whose layers have one, in keys."""
    window = getattr(config, "sliding_window", None)
    return window if isinstance(window, int) and window > 0 and "sliding" in layer_kinds(config.to_dict()) else None
