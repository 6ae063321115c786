"""GGUF files converted once into HF folders under attnscope's cache, one per dtype.

An entry ``<cache>/gguf/<sha256[:24]>-<dtype>`` holds config.json, the weights (one
model.safetensors, or shards of at most 4 GiB with model.safetensors.index.json) and the
tokenizer files, so only the first run on a file pays for dequantizing; the sha256 of each
file is remembered per (path, size, mtime) in ``<cache>/hashes.json``. A lock file next to
each entry (:func:`conversion_lock`) makes concurrent runs wait for one conversion. The
conversion streams (:func:`_stream_gguf_weights`): one tensor at a time is dequantized, cast
and written, so the float32 model is never held in memory.
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

from attnscope.errors import AttnscopeError
from attnscope.model.config import TESTED_MODEL_TYPES, attention_source, check_config, gguf_model_type
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
    """Whether ``target`` is a finished entry: its config, its weights (one file, or the index of
    its shards) and source.json, the last file a conversion writes."""
    weights = (target / "model.safetensors").is_file() or (target / "model.safetensors.index.json").is_file()
    return weights and all((target / name).is_file() for name in ("config.json", "source.json"))


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
    model_type = gguf_model_type(arch)
    if model_type in TESTED_MODEL_TYPES:
        return
    from transformers import CONFIG_MAPPING, MODEL_FOR_CAUSAL_LM_MAPPING

    config_class = CONFIG_MAPPING[model_type] if model_type in CONFIG_MAPPING else None
    model_class = MODEL_FOR_CAUSAL_LM_MAPPING.get(config_class, None) if config_class is not None else None
    if model_class is None or not attention_source(model_class):
        raise AttnscopeError("not_interface_gguf", path=path, arch=repr(arch))


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
    """Dequantize ``path`` into ``out``: config.json, the safetensors shards and the tokenizer files.

    The weights stream: one GGUF tensor at a time is dequantized (gguf's reader, as transformers
    uses it), renamed and reordered by transformers' own GGUF tables, cast to ``dtype_name`` and
    written, so a model whose float32 copy does not fit still converts. The architectures that
    transformers loads through its newer GGUF path (its ``GGUF_ARCHS``: Qwen3.5, LFM2) are
    converted by loading the whole model, as that path gives no tensor-by-tensor mapping.
    """
    import torch
    from transformers import AutoConfig, AutoTokenizer
    from transformers.integrations.gguf import is_gguf_arch_supported

    progress(Said.of("tokenizer", file=path.name))
    t0 = time.perf_counter()
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        progress(Said.of("tokenizer_done", seconds=f"{time.perf_counter() - t0:.0f}"))
        config = AutoConfig.from_pretrained(str(path.parent), gguf_file=path.name)
        check_config(config, str(path))
        arch = read_gguf_header(path).metadata.get("general.architecture")
        if isinstance(arch, str) and is_gguf_arch_supported(arch):
            config = _convert_whole(path, out, dtype_name, progress)
        else:
            _stream_gguf_weights(path, config, out, getattr(torch, dtype_name), progress)
    except AttnscopeError:
        raise
    except Exception as exc:  # gguf raises many kinds on a corrupt file
        raise AttnscopeError("gguf_unreadable_model", path=path, detail=f"{type(exc).__name__}: {exc}") from exc
    settings = config.to_dict()
    settings.pop("quantization_config", None)
    settings["dtype"] = settings["torch_dtype"] = dtype_name
    (out / "config.json").write_text(json.dumps(settings, indent=2))
    tokenizer.save_pretrained(str(out))


def _convert_whole(path: Path, out: Path, dtype_name: str, progress: Progress) -> Any:
    """The whole model loaded by transformers in ``dtype_name``, then saved; its config."""
    import torch
    from transformers import AutoModelForCausalLM

    with _gguf_bar_as_progress(progress):
        model = AutoModelForCausalLM.from_pretrained(
            str(path.parent), gguf_file=path.name, dtype=getattr(torch, dtype_name)
        )
    writer = ShardWriter(out)
    seen: set[int] = set()
    for name, tensor in model.state_dict().items():  # a tied weight once, under its first name
        if tensor.data_ptr() not in seen:
            seen.add(tensor.data_ptr())
            writer.add(name, tensor)
    writer.close()
    return model.config


def _stream_gguf_weights(path: Path, config: Any, out: Path, dtype: Any, progress: Progress) -> None:
    """Every tensor of the GGUF ``path``, one at a time: dequantized to float32 (``gguf.dequantize``),
    put in transformers' layout by its tensor processor for the architecture, named as the model
    of ``config`` names it (``get_gguf_hf_weights_map`` on a weightless copy of the model), cast to
    ``dtype`` and written to shards in ``out``. This is what ``from_pretrained(gguf_file=...)``
    does for these architectures, without holding the model: the values are the same bits.

    Tensors that a processor merges (MoE experts: gate and up into one) are kept until the next
    block starts, then written; a tensor the model has no weight for is skipped, as transformers
    skips it."""
    import numpy as np
    import torch
    from gguf import GGUFReader, dequantize
    from transformers import AutoModelForCausalLM
    from transformers.modeling_gguf_pytorch_utils import (
        TENSOR_PROCESSORS,
        TensorProcessor,
        get_gguf_hf_weights_map,
        load_gguf_checkpoint,
        read_field,
    )

    # The metadata first (its reader and the vocabulary are freed after), then the file's reader:
    # both hold every metadata field, a few hundred MB for a 152k-token vocabulary.
    settings = load_gguf_checkpoint(str(path), return_tensors=False)["config"]
    reader = GGUFReader(str(path))
    architecture = read_field(reader, "general.architecture")[0]
    processor = TENSOR_PROCESSORS.get(architecture, TensorProcessor)(config=settings)
    with torch.device("meta"):  # names and shapes only, no memory
        skeleton = AutoModelForCausalLM.from_config(config)
    mapping = get_gguf_hf_weights_map(skeleton, processor)
    wanted = set(skeleton.state_dict())
    del skeleton

    writer = ShardWriter(out)
    merged: dict[str, Any] = {}  # what a processor builds from several tensors, by model name
    parsed = {"tensors": merged}

    def put(name: str, tensor: Any) -> None:
        if name in wanted:
            writer.add(name, tensor.to(dtype) if tensor.is_floating_point() else tensor)

    def flush() -> None:
        for name in list(merged):
            put(name, merged.pop(name))

    total, block = len(reader.tensors), None
    t0 = time.perf_counter()
    for done, item in enumerate(reader.tensors):
        if done % 8 == 0:
            progress(Said.of("dequantizing", done=done, total=total, seconds=f"{time.perf_counter() - t0:.0f}"))
        this_block = item.name.split(".")[1] if item.name.startswith("blk.") else None
        if this_block != block:
            flush()
            block = this_block
        weights = _dequantized(item.data, item.tensor_type, dequantize)
        result = processor.process(
            weights=weights, name=item.name, tensor_key_mapping=mapping, parsed_parameters=parsed
        )
        if result.name is None or result.name not in mapping:
            del weights, result
            _release(reader, item)
            continue
        # a copy only where the array is not already ours (a read-only view of the file)
        put(mapping[result.name], torch.from_numpy(np.require(result.weights, requirements=["C", "W"])))
        del weights, result  # before the next tensor is unpacked: one float32 tensor at a time
        _release(reader, item)
    flush()
    writer.close()


def _release(reader: Any, item: Any) -> None:
    """Drop the pages of ``item``'s data from this process's resident set once it is converted.

    The reader maps the whole file; every page read stays resident (and counted in RSS, up to the
    file's size) until the kernel needs it back. A read-only mapping's pages are only the file's
    cached pages, so advising that they are not needed costs nothing and keeps the resident set at
    one tensor's worth. Where ``madvise`` is missing (Windows, Python without it) nothing is done."""
    import mmap

    mapped = getattr(reader.data, "_mmap", None)
    advice = getattr(mmap, "MADV_DONTNEED", None)
    if mapped is None or advice is None or not hasattr(mapped, "madvise"):
        return
    start = int(item.data_offset) // mmap.PAGESIZE * mmap.PAGESIZE
    end = int(item.data_offset) + int(item.n_bytes)
    try:
        mapped.madvise(advice, start, end - start)
    except (OSError, ValueError):
        pass


DEQUANTIZE_SLAB_BYTES = 8 * 2**20  # of GGUF data per gguf.dequantize call


def _dequantized(data: Any, kind: Any, dequantize: Callable[[Any, Any], Any]) -> Any:
    """``dequantize(data, kind)`` of one tensor's data, a slab of rows at a time, into one float32
    array. A quantization block never spans two rows, so the values are the same; but the
    temporaries numpy makes while unpacking blocks (several times the float32 size) are a slab's,
    not the whole tensor's (the 0.5B model's 152k x 896 embedding: 545 MB in float32)."""
    import numpy as np

    if data.ndim < 2 or data.nbytes <= DEQUANTIZE_SLAB_BYTES:
        return dequantize(data, kind)
    rows = max(1, DEQUANTIZE_SLAB_BYTES * data.shape[0] // data.nbytes)
    first = dequantize(data[:rows], kind)
    out = np.empty((data.shape[0], *first.shape[1:]), dtype=first.dtype)
    out[:rows] = first
    for start in range(rows, data.shape[0], rows):
        out[start : start + rows] = dequantize(data[start : start + rows], kind)
    return out


def _safetensors_files(entry: Path) -> list[Path]:
    """The weight files of a converted entry: one model.safetensors, or the shards of its index."""
    index = entry / "model.safetensors.index.json"
    if index.is_file():
        weight_map = json.loads(index.read_text())["weight_map"]
        return [entry / name for name in sorted(set(weight_map.values()))]
    return [entry / "model.safetensors"]


def _cast_cache(source: Path, out: Path, dtype_name: str) -> None:
    """A converted float32 folder, with its floating-point weights cast to ``dtype_name``, tensor by
    tensor: the float32 files are memory-mapped and only one tensor is ever held in memory (a model
    whose float32 copy does not fit still casts)."""
    import torch
    from safetensors import safe_open

    dtype = getattr(torch, dtype_name)
    writer = ShardWriter(out)
    for file in _safetensors_files(source):
        with safe_open(str(file), framework="pt") as src:
            for name in src.keys():
                tensor = src.get_tensor(name)
                writer.add(name, tensor.to(dtype) if tensor.is_floating_point() else tensor)
    writer.close()
    weights = {"model.safetensors", "model.safetensors.index.json", *(f.name for f in _safetensors_files(source))}
    for item in source.iterdir():
        if item.name not in weights and item.name != "source.json" and item.is_file():
            shutil.copy2(item, out / item.name)
    config = json.loads((out / "config.json").read_text())
    config["torch_dtype"] = dtype_name
    if "dtype" in config:  # transformers 5 writes both
        config["dtype"] = dtype_name
    (out / "config.json").write_text(json.dumps(config, indent=2))


# A shard holds at most this many bytes of weights: the 0.5B model in float32 (2.5 GB) is one
# model.safetensors, as before; a 7B model in bfloat16 (15 GB) is four shards and an index.
SHARD_BYTES = 4 * 2**30

_ST_DTYPES = {
    "float64": "F64",
    "float32": "F32",
    "float16": "F16",
    "bfloat16": "BF16",
    "int64": "I64",
    "int32": "I32",
    "int16": "I16",
    "int8": "I8",
    "uint8": "U8",
    "bool": "BOOL",
}


class ShardWriter:
    """safetensors files written one tensor at a time, as the tensors come.

    A safetensors file starts with a header naming every tensor, which is known only at the end;
    so each shard's tensor bytes go to a body file first, and :meth:`close` writes each shard as
    its header followed by its body, copied in chunks. Memory holds one tensor, never a shard.
    One shard is ``model.safetensors``; several are ``model-0000i-of-0000n.safetensors`` with a
    ``model.safetensors.index.json``, as ``save_pretrained`` writes them.
    """

    def __init__(self, out: Path, shard_bytes: int | None = None) -> None:
        self.out = out
        self.limit = SHARD_BYTES if shard_bytes is None else shard_bytes
        self.shards: list[tuple[Path, dict[str, Any]]] = []  # (body file, header)
        self.size = 0  # bytes in the current shard
        self.body: Any = None
        self.names: set[str] = set()

    def add(self, name: str, tensor: Any) -> None:
        import torch

        if name in self.names:
            raise AttnscopeError("gguf_twice", path=self.out, name=name)
        self.names.add(name)
        kind = _ST_DTYPES[str(tensor.dtype).removeprefix("torch.")]
        data = tensor.detach().contiguous().reshape(-1).view(torch.uint8).numpy()
        if self.body is None or (self.size and self.size + data.nbytes > self.limit):
            self._start()
        self.body.write(data.data)
        header = self.shards[-1][1]
        header[name] = {
            "dtype": kind,
            "shape": list(tensor.shape),
            "data_offsets": [self.size, self.size + data.nbytes],
        }
        self.size += data.nbytes

    def _start(self) -> None:
        if self.body is not None:
            self.body.close()
        body = self.out / f".shard{len(self.shards)}.body"
        self.body = body.open("wb")
        self.shards.append((body, {"__metadata__": {"format": "pt"}}))
        self.size = 0

    def close(self) -> None:
        import struct

        if self.body is None:
            self._start()
        self.body.close()
        count = len(self.shards)
        names = (
            ["model.safetensors"]
            if count == 1
            else [f"model-{i + 1:05d}-of-{count:05d}.safetensors" for i in range(count)]
        )
        weight_map: dict[str, str] = {}
        total = 0
        for (body, header), name in zip(self.shards, names, strict=True):
            raw = json.dumps(header, separators=(",", ":")).encode()
            raw += b" " * (-len(raw) % 8)
            with (self.out / name).open("wb") as fh, body.open("rb") as src:
                fh.write(struct.pack("<Q", len(raw)))
                fh.write(raw)
                shutil.copyfileobj(src, fh, 1 << 24)
            body.unlink()
            for key, value in header.items():
                if key != "__metadata__":
                    weight_map[key] = name
                    total += value["data_offsets"][1] - value["data_offsets"][0]
        if count > 1:
            index = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
            (self.out / "model.safetensors.index.json").write_text(json.dumps(index, indent=2))
