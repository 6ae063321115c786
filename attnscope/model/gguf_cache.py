"""GGUF files converted once into HF folders under attnscope's cache, one per dtype.

An entry ``<cache>/gguf/<sha256[:24]>-<dtype>`` holds config.json, model.safetensors and
the tokenizer files, so only the first run on a file pays for dequantizing; the sha256 of
each file is remembered per (path, size, mtime) in ``<cache>/hashes.json``. A lock file
next to each entry (:func:`conversion_lock`) makes concurrent runs wait for one conversion.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from attnscope.errors import AttnscopeError, ExitCode
from attnscope.model.config import TESTED_MODEL_TYPES, attention_source, check_config
from attnscope.model.gguf_header import read_gguf_header
from attnscope.model.reference import cache_root
from attnscope.model.said import Progress, Said, noop

# Measured (bench/run.py --first-hour, idle 2-core machine): a first run on the 469 MiB
# Qwen2.5-Coder-0.5B q4_k_m GGUF takes 112-117 s, of which ~14 s is a warm run's load and forward.
GGUF_CONVERT_MB_PER_S = 4.5
STALE_LOCK_S = 3600  # a lock file this old is taken over whoever holds it


def file_sha256(path: Path, progress: Progress = noop) -> str:
    """sha256 of a file, remembered per (path, size, mtime) so a 500 MB GGUF is hashed once."""
    st = path.stat()
    index_path = cache_root() / "hashes.json"
    key = f"{path.resolve()}:{st.st_size}:{st.st_mtime_ns}"
    try:
        index = json.loads(index_path.read_text())
    except (OSError, ValueError):
        index = {}
    if isinstance(index, dict) and isinstance(index.get(key), str):
        return str(index[key])
    progress(Said.of("hashing", file=path.name))
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 22), b""):
            digest.update(chunk)
    value = digest.hexdigest()
    if not isinstance(index, dict):
        index = {}
    index[key] = value
    try:
        index_path.parent.mkdir(parents=True, exist_ok=True)
        index_path.write_text(json.dumps(index))
    except OSError:
        pass
    return value


def cache_complete(target: Path) -> bool:
    return all((target / name).is_file() for name in ("config.json", "model.safetensors", "source.json"))


def cached_entry(path: Path) -> Path | None:
    """A complete cache entry of the GGUF file ``path``, in any dtype, or None."""
    digest = file_sha256(path)
    entries = (cache_root() / "gguf").glob(f"{digest[:24]}-*")  # also lock files and temp folders
    return next((e for e in entries if cache_complete(e)), None)


def _pid_alive(pid: int) -> bool:
    if os.name == "nt":  # os.kill(pid, 0) would end the process there; only the lock's age tells
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, owned by someone else
        return True
    return True


@contextlib.contextmanager
def conversion_lock(lock_path: Path, on_wait: Callable[[str], None]) -> Iterator[None]:
    """Hold ``lock_path`` while one process converts; others wait here (``on_wait`` once, with
    the holder's pid as the lock file gives it, or "").

    The lock is the file itself, created with ``O_EXCL`` (atomic on every platform) and
    carrying its holder's pid; the holder removes it when done. A lock file whose pid is no
    longer running (a killed run), or that is older than an hour, is stale and taken over.
    """
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    waited = False
    while True:
        try:
            fd = os.open(lock_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            try:
                holder = lock_path.read_text().strip()
                age = time.time() - lock_path.stat().st_mtime
            except OSError:  # removed meanwhile: try again
                continue
            if (holder.isdigit() and not _pid_alive(int(holder))) or age > STALE_LOCK_S:
                lock_path.unlink(missing_ok=True)  # stale: its holder is gone
                continue
            if not waited:
                on_wait(holder)
                waited = True
            time.sleep(0.5)
            continue
        try:
            os.write(fd, f"{os.getpid()}\n".encode())
        finally:
            os.close(fd)
        break
    try:
        yield
    finally:
        lock_path.unlink(missing_ok=True)


@contextlib.contextmanager
def _gguf_bar_as_progress(progress: Progress) -> Iterator[None]:
    """transformers draws its own tqdm bar while dequantizing a GGUF, and it stays on screen;
    replace it with counts sent to ``progress`` (one transient line on a terminal)."""
    try:
        import transformers.modeling_gguf_pytorch_utils as gguf_utils
    except ImportError:  # pragma: no cover - another transformers layout
        yield
        return
    original = getattr(gguf_utils, "tqdm", None)
    if original is None:
        yield
        return

    def counted(items: Any, *_: Any, **__: Any) -> Iterator[Any]:
        total = len(items) if hasattr(items, "__len__") else None
        t0 = time.perf_counter()
        for done, item in enumerate(items):
            if done % 8 == 0:
                seconds = f"{time.perf_counter() - t0:.0f}"
                if total:
                    progress(Said.of("dequantizing", done=done, total=total, seconds=seconds))
                else:
                    progress(Said.of("dequantizing_n", done=done, seconds=seconds))
            yield item

    gguf_utils.tqdm = counted
    try:
        yield
    finally:
        gguf_utils.tqdm = original


def _check_gguf_architecture(path: Path) -> None:
    """Refuse an unsupported architecture from the GGUF header, before minutes of dequantizing."""
    try:
        arch = read_gguf_header(path).metadata.get("general.architecture")  # a header scan, well under a second
    except AttnscopeError:  # unreadable: the conversion reports it with the reason
        return
    if not isinstance(arch, str):
        return
    model_type = arch[: -len("moe")] + "_moe" if arch.endswith("moe") else arch  # GGUF's qwen2moe is qwen2_moe
    if model_type in TESTED_MODEL_TYPES:
        return
    from transformers import CONFIG_MAPPING, MODEL_FOR_CAUSAL_LM_MAPPING

    config_class = CONFIG_MAPPING[model_type] if model_type in CONFIG_MAPPING else None
    model_class = MODEL_FOR_CAUSAL_LM_MAPPING.get(config_class, None) if config_class is not None else None
    if model_class is None or not attention_source(model_class):
        raise AttnscopeError(
            f"{path}: a {arch!r} model (the GGUF's general.architecture) does not run its attention through "
            "transformers' attention interface, so attnscope cannot capture it",
            ExitCode.MODEL,
        )


def converted(path: Path, dtype_name: str, progress: Progress = noop, notice: Progress = noop) -> Path:
    """Convert a GGUF file once into an HF folder (config, safetensors, tokenizer), per dtype.

    A float16/bfloat16 entry is cast from the file's float32 entry when there is one (seconds;
    bit-identical to dequantizing again, which casts the same float32 values), else converted
    from the GGUF itself (about 90 s for the 0.5B model on 2 cores). Concurrent runs take the
    lock ``<entry>.lock`` in turn: the first converts, the others wait and then load its entry.
    Leftover ``<entry>.tmp<pid>`` folders of killed runs are removed under the lock.
    """
    digest = file_sha256(path, progress)
    target = cache_root() / "gguf" / f"{digest[:24]}-{dtype_name}"
    if cache_complete(target):
        return target
    _check_gguf_architecture(path)
    source = target.with_name(f"{digest[:24]}-float32")
    lock = target.with_name(target.name + ".lock")

    def waiting(holder: str) -> None:
        if holder:
            notice(Said.of("waiting_pid", pid=holder, file=path.name, lock=lock))
        else:
            notice(Said.of("waiting", file=path.name, lock=lock))

    with conversion_lock(lock, waiting):
        if cache_complete(target):  # the other process finished it while we waited
            progress(Said.of("reused", file=path.name))
            return target
        for stale in target.parent.glob(target.name + ".tmp*"):  # left by a killed run
            shutil.rmtree(stale, ignore_errors=True)
        t0 = time.perf_counter()
        tmp = target.with_name(target.name + f".tmp{os.getpid()}")
        tmp.mkdir(parents=True)
        try:
            if dtype_name != "float32" and cache_complete(source):
                notice(Said.of("casting", file=path.name, dtype=dtype_name, target=target))
                _cast_cache(source, tmp, dtype_name)
            else:
                notice(_first_use_line(path, target, dtype_name))
                _convert_gguf(path, tmp, dtype_name, progress)
            (tmp / "source.json").write_text(json.dumps({"gguf": str(path.resolve()), "sha256": digest}))
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        shutil.rmtree(target, ignore_errors=True)  # a damaged, incomplete entry
        tmp.rename(target)
        progress(Said.of("converted", file=path.name, seconds=f"{time.perf_counter() - t0:.0f}", target=target))
    return target


def _first_use_line(path: Path, target: Path, dtype_name: str) -> Said:
    """One line for a cold cache: what is done, about how long it takes, where it goes, how big."""
    size_mb = path.stat().st_size / 2**20
    seconds = max(5, int(round(size_mb / GGUF_CONVERT_MB_PER_S, -1)))
    bytes_per = {"float32": 4, "bfloat16": 2, "float16": 2}.get(dtype_name, 4)
    gb = None
    try:
        numel = 0
        for shape in read_gguf_header(path).tensors.values():
            n = 1
            for d in shape:
                n *= d
            numel += n
        gb = f"{numel * bytes_per / 1e9:.1f}"
    except AttnscopeError:
        pass
    if gb is None:
        return Said.of("first_use", file=path.name, dtype=dtype_name, seconds=seconds, target=target)
    return Said.of("first_use_size", file=path.name, dtype=dtype_name, seconds=seconds, target=target, gb=gb)


def _convert_gguf(path: Path, out: Path, dtype_name: str, progress: Progress) -> None:
    """Dequantize ``path`` into ``out``: config.json, model.safetensors and the tokenizer files."""
    import torch
    from safetensors.torch import save_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    progress(Said.of("tokenizer", file=path.name))
    t0 = time.perf_counter()
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        progress(Said.of("tokenizer_done", seconds=f"{time.perf_counter() - t0:.0f}"))
        with _gguf_bar_as_progress(progress):
            model = AutoModelForCausalLM.from_pretrained(
                str(path.parent), gguf_file=path.name, dtype=getattr(torch, dtype_name)
            )
    except AttnscopeError:
        raise
    except Exception as exc:  # gguf raises many kinds on a corrupt file
        raise AttnscopeError(
            f"{path}: not a readable GGUF model; is the file complete? ({type(exc).__name__}: {exc})",
            ExitCode.MODEL,
        ) from exc
    check_config(model.config, str(path))
    config = model.config.to_dict()
    config.pop("quantization_config", None)
    config["torch_dtype"] = dtype_name
    (out / "config.json").write_text(json.dumps(config, indent=2))
    save_model(model, str(out / "model.safetensors"))  # save_pretrained refuses GGUF-loaded models
    tokenizer.save_pretrained(str(out))


def _cast_cache(source: Path, out: Path, dtype_name: str) -> None:
    """A converted float32 folder, with its floating-point weights cast to ``dtype_name``, tensor by
    tensor: the float32 file is memory-mapped and only one tensor is ever held in memory (a model
    whose float32 copy does not fit still casts)."""
    import torch
    from safetensors import safe_open

    dtype = getattr(torch, dtype_name)
    cast_to = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16"}[dtype]
    with safe_open(str(source / "model.safetensors"), framework="pt") as src:
        names = list(src.keys())
        plan = []
        for name in names:
            piece = src.get_slice(name)
            kind = piece.get_dtype()
            plan.append((name, piece.get_shape(), cast_to if kind in ("F64", "F32", "F16", "BF16") else kind))

        def tensors() -> Iterator[Any]:
            for name in names:
                tensor = src.get_tensor(name)
                yield tensor.to(dtype) if tensor.is_floating_point() else tensor

        _stream_safetensors(out / "model.safetensors", plan, tensors())
    for item in source.iterdir():
        if item.name not in ("model.safetensors", "source.json") and item.is_file():
            shutil.copy2(item, out / item.name)
    config = json.loads((out / "config.json").read_text())
    config["torch_dtype"] = dtype_name
    if "dtype" in config:  # transformers 5 writes both
        config["dtype"] = dtype_name
    (out / "config.json").write_text(json.dumps(config, indent=2))


_ST_SIZES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1, "BOOL": 1}


def _stream_safetensors(path: Path, plan: list[tuple[str, list[int], str]], tensors: Iterator[Any]) -> None:
    """Write a safetensors file one tensor at a time: the header from ``plan`` (name, shape,
    safetensors dtype), then each tensor of ``tensors`` (the same order) as it comes."""
    import struct

    import torch

    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, shape, kind in plan:
        size = _ST_SIZES[kind]
        for d in shape:
            size *= int(d)
        header[name] = {"dtype": kind, "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as fh:
        fh.write(struct.pack("<Q", len(raw)))
        fh.write(raw)
        for (name, _, _), tensor in zip(plan, tensors, strict=True):
            data = tensor.contiguous().view(-1).view(torch.uint8).numpy().tobytes()
            start, end = header[name]["data_offsets"]
            if len(data) != end - start:
                raise AttnscopeError(f"{path}: tensor {name} has {len(data)} bytes, expected {end - start}")
            fh.write(data)
