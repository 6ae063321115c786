"""Find and load a model: a hub id, a local HF folder, or a ``.gguf`` file.

This is the only module that touches the disk or the hub. It picks the device and
dtype, loads the tokenizer and the model, and caches GGUF conversions under the user
cache dir (safetensors plus the tokenizer files, keyed by the file's sha256 and the
dtype) so that only the first run pays for dequantizing; a lock file next to each cache
entry makes concurrent runs wait for one conversion. ``model_shape`` reads what can be
checked before loading (the path, the config's layer and head counts) without importing
torch. It does not compute attention and does not print: transient progress goes through
the ``progress`` callback, lines a user must see through ``notice``.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import shutil
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attnscope.errors import AttnscopeError, ExitCode
from attnscope.results.common import ModelInfo

DEFAULT_MODEL = "Qwen/Qwen2.5-0.5B-Instruct"
DEVICES = ("auto", "cpu", "cuda", "mps")
DTYPES = ("auto", "float32", "bfloat16", "float16")
# Architectures whose attention goes through transformers' AttentionInterface with
# the same (query, key, value, mask, scaling) contract as Qwen2.
SUPPORTED_MODEL_TYPES = ("qwen2", "qwen3", "llama", "mistral", "qwen2_moe", "qwen3_moe", "olmo2", "gemma")

Progress = Callable[[str], None]


# The progress, notice and warning lines loading sends, in English. Each goes out as a ``Said``:
# a str (this English line, for Python callers) that also carries its key and values, so the
# CLI can word it in the reader's language (render catalogues, ``progress.KEY``; a test keeps
# these lines equal to the English catalogue's).
LINES = {
    "float16_cpu": "warning: float16 on CPU is slow and loses precision; attention rows are still computed in fp32",
    "hashing": "hashing {file}",
    "dequantizing": "dequantizing GGUF tensors: {done}/{total} ({seconds} s)",
    "dequantizing_n": "dequantizing GGUF tensors: {done} ({seconds} s)",
    "waiting": "another attnscope process is converting {file}; waiting for it to finish ({lock})",
    "waiting_pid": "another attnscope process (pid {pid}) is converting {file}; waiting for it to finish ({lock})",
    "reused": "{file}: using the cache entry the other process converted",
    "casting": "casting the float32 cache of {file} to {dtype} once, into {target}",
    "first_use": "first use of {file}: converting it once to {dtype} (about {seconds} s; later runs take seconds) "
    "into {target}",
    "first_use_size": "first use of {file}: converting it once to {dtype} (about {seconds} s; later runs take "
    "seconds) into {target}, about {gb} GB",
    "converted": "converted {file} in {seconds} s; cache: {target}",
    "tokenizer": "converting the tokenizer of {file}",
    "tokenizer_done": "tokenizer converted in {seconds} s; dequantizing weights",
    "reading_tokenizer": "reading the tokenizer from {file}",
    "loading": "loading {model}",
    "loaded": "loaded in {seconds} s ({device}, {dtype})",
}


class Said(str):
    """A line for the user as a code with its data: ``key`` (in ``LINES``) and ``values``. As a
    str it is the English line."""

    key: str
    values: dict[str, str]

    def __new__(cls, key: str, **values: object) -> Said:
        words = {name: str(value) for name, value in values.items()}
        said = super().__new__(cls, LINES[key].format(**words))
        said.key, said.values = key, words
        return said


# Measured (bench/run.py --first-hour, idle 2-core machine): a first run on the 469 MiB
# Qwen2.5-Coder-0.5B q4_k_m GGUF takes 112-117 s, of which ~14 s is a warm run's load and forward.
GGUF_CONVERT_MB_PER_S = 4.5


def default_model() -> str:
    return os.environ.get("ATTNSCOPE_MODEL") or DEFAULT_MODEL


def cache_root() -> Path:
    env = os.environ.get("ATTNSCOPE_CACHE")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "attnscope"


@dataclass
class Loaded:
    """A model ready for capture, with the tokenizer and the facts the results report."""

    model: Any  # a transformers PreTrainedModel
    tokenizer: Any
    info: ModelInfo
    source: str  # "hub", "folder" or "gguf"
    path: str  # what from_pretrained was finally given


def _noop(_: str) -> None:
    pass


def pick_device(device: str) -> str:
    import torch

    if device not in DEVICES:
        raise AttnscopeError(f"unknown --device {device!r}; use one of {', '.join(DEVICES)}")
    if device == "auto":
        if torch.cuda.is_available():
            return "cuda"
        if torch.backends.mps.is_available():
            return "mps"
        return "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise AttnscopeError("--device cuda: no CUDA GPU is available here; use --device cpu", ExitCode.RESOURCE)
    if device == "mps" and not torch.backends.mps.is_available():
        raise AttnscopeError("--device mps: MPS is not available here; use --device cpu", ExitCode.RESOURCE)
    return device


def pick_dtype(dtype: str, device: str, warn: Progress = _noop) -> Any:
    import torch

    if dtype not in DTYPES:
        raise AttnscopeError(f"unknown --dtype {dtype!r}; use one of {', '.join(DTYPES)}")
    if dtype == "auto":
        return torch.bfloat16 if device == "cuda" else torch.float32
    if dtype == "float16" and device == "cpu":
        warn(Said("float16_cpu"))
    return getattr(torch, dtype)


def file_sha256(path: Path, progress: Progress = _noop) -> str:
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
    progress(Said("hashing", file=path.name))
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


def _quiet_transformers() -> None:
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    logging.getLogger("huggingface_hub").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", module="transformers")


_PROXY_VARS = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")
HUB_PROBE_TIMEOUT_S = 3.0


@functools.lru_cache(maxsize=1)
def hub_local_only() -> bool:
    """Whether hub ids must be read from the local cache only, without contacting the hub.

    True when HF_HUB_OFFLINE is set, or when a TCP connect to the hub's endpoint fails within
    a few seconds. Without this, an offline machine waits through huggingface_hub's retries
    (25 s for ``info``, 50 s for ``tokens`` here) before the one-line error, and a model that
    is in the cache loads only after them. Behind a proxy the probe cannot tell, so the hub is
    tried as usual.
    """
    if os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0"):
        return True
    if any(os.environ.get(name) for name in _PROXY_VARS):
        return False
    import socket
    from urllib.parse import urlsplit

    from huggingface_hub import constants

    url = urlsplit(constants.ENDPOINT)
    if not url.hostname:
        return False
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        socket.create_connection((url.hostname, port), timeout=HUB_PROBE_TIMEOUT_S).close()
    except OSError:
        return True
    return False


def _hub_error(model_id: str, exc: BaseException) -> AttnscopeError:
    from huggingface_hub import errors as hub_errors

    chain: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and len(chain) < 8:
        chain.append(cur)
        cur = cur.__cause__ or cur.__context__
    if any(isinstance(e, hub_errors.RevisionNotFoundError) for e in chain):
        return AttnscopeError(f"model {model_id!r}: that --revision does not exist on the hub", ExitCode.MODEL)
    if any(isinstance(e, (hub_errors.RepositoryNotFoundError, hub_errors.GatedRepoError)) for e in chain):
        return AttnscopeError(
            f"no model {model_id!r} on the Hugging Face hub (or it is gated or private)", ExitCode.MODEL
        )
    return offline_error(model_id)


def offline_error(model_id: str) -> AttnscopeError:
    """The hub cannot be reached and ``model_id`` is not cached: say how to use a model on disk."""
    offline = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0")
    why = "HF_HUB_OFFLINE is set" if offline else "the Hugging Face hub cannot be reached"
    return AttnscopeError(
        f"{why} and {model_id!r} is not in the local cache; use a model on disk instead: "
        "--model PATH, where PATH is an HF model folder (with config.json) or a .gguf file, "
        "or export ATTNSCOPE_MODEL=PATH once for every command",
        ExitCode.MODEL,
    )


def _check_vocab(tokenizer: Any, spec: str) -> Any:
    """A folder with no tokenizer files still gets an empty tokenizer from transformers; refuse it."""
    if len(tokenizer) <= len(getattr(tokenizer, "all_special_tokens", []) or []):
        raise AttnscopeError(
            f"{spec}: no tokenizer files (tokenizer.json, or vocab.json and merges.txt), so the text cannot be tokenized",
            ExitCode.MODEL,
        )
    return tokenizer


def _damaged(kind: str, path: str) -> str:
    """For a GGUF, the cached conversion failed to load: say where it is and how to redo it."""
    if kind != "gguf":
        return ""
    return f"; the cached conversion in {path} looks damaged: delete that folder and run again to reconvert"


def _check_config(config: Any, name: str) -> None:
    from transformers import MODEL_FOR_CAUSAL_LM_MAPPING

    model_type = getattr(config, "model_type", "?")
    # BERT, RoBERTa, Whisper... are registered for causal LM only as decoders; a saved
    # encoder (architectures: BertModel, BertForMaskedLM) is not one.
    archs = list(getattr(config, "architectures", None) or [])
    encoder_only = (
        model_type not in SUPPORTED_MODEL_TYPES
        and bool(archs)
        and not any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in archs)
    )
    if type(config) not in MODEL_FOR_CAUSAL_LM_MAPPING or encoder_only:
        what = f" ({', '.join(archs)})" if archs else ""
        raise AttnscopeError(f"{name}: a {model_type!r} model{what} is not a causal language model", ExitCode.MODEL)
    if model_type not in SUPPORTED_MODEL_TYPES:
        raise AttnscopeError(
            f"{name}: attnscope does not capture {model_type!r} attention; supported: "
            f"{', '.join(SUPPORTED_MODEL_TYPES)}",
            ExitCode.MODEL,
        )


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
                    progress(Said("dequantizing", done=done, total=total, seconds=seconds))
                else:
                    progress(Said("dequantizing_n", done=done, seconds=seconds))
            yield item

    gguf_utils.tqdm = counted
    try:
        yield
    finally:
        gguf_utils.tqdm = original


def _check_gguf_architecture(path: Path) -> None:
    """Refuse an unsupported architecture from the GGUF header, before minutes of dequantizing."""
    from attnscope.ggufheader import read_gguf_header  # a header scan: no tensor data, well under a second

    try:
        arch = read_gguf_header(path).metadata.get("general.architecture")
    except AttnscopeError:  # unreadable: the conversion reports it with the reason
        return
    if not isinstance(arch, str):
        return
    model_type = arch[: -len("moe")] + "_moe" if arch.endswith("moe") else arch  # GGUF's qwen2moe is qwen2_moe
    if model_type not in SUPPORTED_MODEL_TYPES:
        raise AttnscopeError(
            f"{path}: attnscope does not capture {arch!r} attention (the GGUF's general.architecture); "
            f"supported: {', '.join(SUPPORTED_MODEL_TYPES)}",
            ExitCode.MODEL,
        )


def _cache_complete(target: Path) -> bool:
    return all((target / name).is_file() for name in ("config.json", "model.safetensors", "source.json"))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, owned by someone else
        return True
    return True


@contextlib.contextmanager
def _conversion_lock(lock_path: Path, on_wait: Progress) -> Iterator[None]:
    """Hold ``lock_path`` while one process converts; others wait here (``on_wait`` once).

    With ``fcntl`` (Linux, macOS) the lock is ``flock`` on the file: the kernel releases it
    when its holder dies, so a lock file left by a killed run never blocks the next one. The
    holder removes the file when done; a waiter that then holds a removed file's lock opens
    the path again (the inode check), so two runs never hold the lock at once. Elsewhere an ``O_EXCL`` file carrying the holder's pid is
    the lock; a file whose pid is dead, or older than an hour, is stale and taken over.
    """
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        with _pid_file_lock(lock_path, on_wait):
            yield
        return
    waited = False
    while True:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not waited:
                on_wait(os.pread(fd, 64, 0).decode(errors="replace").strip())
                waited = True
            fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            same = os.fstat(fd).st_ino == os.stat(lock_path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)  # its holder removed the file: this lock guards nothing; take the path's
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        lock_path.unlink(missing_ok=True)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


@contextlib.contextmanager
def _pid_file_lock(lock_path: Path, on_wait: Progress) -> Iterator[None]:  # pragma: no cover - Windows
    waited = False
    while True:
        try:
            fd = os.open(lock_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            try:
                holder = lock_path.read_text().strip()
                age = time.time() - lock_path.stat().st_mtime
            except OSError:
                continue
            if (holder.isdigit() and not _pid_alive(int(holder))) or age > 3600:
                lock_path.unlink(missing_ok=True)  # stale: its holder is gone
                continue
            if not waited:
                on_wait(holder)
                waited = True
            time.sleep(0.5)
            continue
        os.write(fd, f"{os.getpid()}\n".encode())
        os.close(fd)
        break
    try:
        yield
    finally:
        lock_path.unlink(missing_ok=True)


def _gguf_cache(path: Path, dtype_name: str, progress: Progress, notice: Progress = _noop) -> Path:
    """Convert a GGUF file once into an HF folder (config, safetensors, tokenizer), per dtype.

    A float16/bfloat16 entry is cast from the file's float32 entry when there is one (seconds;
    bit-identical to dequantizing again, which casts the same float32 values), else converted
    from the GGUF itself (about 90 s for the 0.5B model on 2 cores). Concurrent runs take the
    lock ``<entry>.lock`` in turn: the first converts, the others wait and then load its entry.
    Leftover ``<entry>.tmp<pid>`` folders of killed runs are removed under the lock.
    """
    digest = file_sha256(path, progress)
    target = cache_root() / "gguf" / f"{digest[:24]}-{dtype_name}"
    if _cache_complete(target):
        return target
    _check_gguf_architecture(path)
    source = target.with_name(f"{digest[:24]}-float32")
    lock = target.with_name(target.name + ".lock")

    def waiting(holder: str) -> None:
        if holder:
            notice(Said("waiting_pid", pid=holder, file=path.name, lock=lock))
        else:
            notice(Said("waiting", file=path.name, lock=lock))

    with _conversion_lock(lock, waiting):
        if _cache_complete(target):  # the other process finished it while we waited
            progress(Said("reused", file=path.name))
            return target
        for stale in target.parent.glob(target.name + ".tmp*"):  # left by a killed run
            shutil.rmtree(stale, ignore_errors=True)
        t0 = time.perf_counter()
        tmp = target.with_name(target.name + f".tmp{os.getpid()}")
        tmp.mkdir(parents=True)
        try:
            if dtype_name != "float32" and _cache_complete(source):
                notice(Said("casting", file=path.name, dtype=dtype_name, target=target))
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
        progress(Said("converted", file=path.name, seconds=f"{time.perf_counter() - t0:.0f}", target=target))
    return target


def _first_use_line(path: Path, target: Path, dtype_name: str) -> Said:
    """One line for a cold cache: what is done, about how long it takes, where it goes, how big."""
    size_mb = path.stat().st_size / 2**20
    seconds = max(5, int(round(size_mb / GGUF_CONVERT_MB_PER_S, -1)))
    bytes_per = {"float32": 4, "bfloat16": 2, "float16": 2}.get(dtype_name, 4)
    gb = None
    try:
        from attnscope.ggufheader import read_gguf_header

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
        return Said("first_use", file=path.name, dtype=dtype_name, seconds=seconds, target=target)
    return Said("first_use_size", file=path.name, dtype=dtype_name, seconds=seconds, target=target, gb=gb)


def _convert_gguf(path: Path, out: Path, dtype_name: str, progress: Progress) -> None:
    """Dequantize ``path`` into ``out``: config.json, model.safetensors and the tokenizer files."""
    import torch
    from safetensors.torch import save_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    progress(Said("tokenizer", file=path.name))
    t0 = time.perf_counter()
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        progress(Said("tokenizer_done", seconds=f"{time.perf_counter() - t0:.0f}"))
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
    _check_config(model.config, str(path))
    config = model.config.to_dict()
    config.pop("quantization_config", None)
    config["torch_dtype"] = dtype_name
    (out / "config.json").write_text(json.dumps(config, indent=2))
    save_model(model, str(out / "model.safetensors"))  # save_pretrained refuses GGUF-loaded models
    tokenizer.save_pretrained(str(out))


def _cast_cache(source: Path, out: Path, dtype_name: str) -> None:
    """A converted float32 folder, with its floating-point weights cast to ``dtype_name``."""
    import torch
    from safetensors.torch import load_file, save_file

    dtype = getattr(torch, dtype_name)
    tensors = load_file(str(source / "model.safetensors"))
    save_file(
        {name: t.to(dtype) if t.is_floating_point() else t for name, t in tensors.items()},
        str(out / "model.safetensors"),
        metadata={"format": "pt"},
    )
    for item in source.iterdir():
        if item.name not in ("model.safetensors", "source.json") and item.is_file():
            shutil.copy2(item, out / item.name)
    config = json.loads((out / "config.json").read_text())
    config["torch_dtype"] = dtype_name
    if "dtype" in config:  # transformers 5 writes both
        config["dtype"] = dtype_name
    (out / "config.json").write_text(json.dumps(config, indent=2))


def load_tokenizer(model: str | None = None, revision: str | None = None, progress: Progress = _noop) -> Any:
    """Only the tokenizer (for commands that need no weights)."""
    shape = model_shape(model, revision)  # a bad path, or offline and not cached: fails before torch
    spec, kind = shape.spec, shape.kind
    from transformers import AutoTokenizer

    _quiet_transformers()
    try:
        if kind == "gguf":
            path = Path(spec)
            digest = file_sha256(path)
            entries = (cache_root() / "gguf").glob(f"{digest[:24]}-*")  # also lock files and temp folders
            cached = next((e for e in entries if _cache_complete(e)), None)
            if cached is not None and (cached / "tokenizer_config.json").is_file():
                return AutoTokenizer.from_pretrained(str(cached))
            progress(Said("reading_tokenizer", file=path.name))
            return AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        return _check_vocab(
            AutoTokenizer.from_pretrained(spec, revision=revision, local_files_only=hub_local_only()), spec
        )
    except AttnscopeError:
        raise
    except OSError as exc:
        if kind == "hub":
            raise _hub_error(spec, exc) from exc
        raise AttnscopeError(f"{spec}: no tokenizer could be loaded ({exc})", ExitCode.MODEL) from exc
    except Exception as exc:
        raise AttnscopeError(
            f"{spec}: no tokenizer could be loaded ({type(exc).__name__}: {exc})", ExitCode.MODEL
        ) from exc


def resolve(model: str | None) -> tuple[str, str]:
    """(spec, kind) where kind is 'hub', 'folder' or 'gguf'; a clear error for a missing path."""
    spec = model or default_model()
    path = Path(spec).expanduser()
    looks_local = spec.startswith((".", "/", "~")) or spec.lower().endswith(".gguf") or spec.count("/") > 1
    if path.is_file():
        if path.suffix.lower() == ".gguf":
            return str(path), "gguf"
        raise AttnscopeError(f"{spec}: a model file must be a .gguf file (or pass an HF folder)", ExitCode.MODEL)
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise AttnscopeError(f"{spec}: folder has no config.json, so it is not an HF model folder", ExitCode.MODEL)
        return str(path), "folder"
    if looks_local:
        raise AttnscopeError(f"{spec}: no such file or folder", ExitCode.MODEL)
    return spec, "hub"


@dataclass(frozen=True)
class ModelShape:
    """What can be checked before loading, read without torch: the model's path and kind,
    and its config's counts (None where the config is not at hand, e.g. a hub id not cached)."""

    spec: str
    kind: str  # "hub", "folder" or "gguf"
    num_hidden_layers: int | None = None
    num_attention_heads: int | None = None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _hub_cached_config(model_id: str, revision: str | None) -> Path | None:
    """config.json of a hub id in the local Hugging Face cache, found without any network."""
    from huggingface_hub import constants

    repo = Path(constants.HF_HUB_CACHE) / ("models--" + model_id.replace("/", "--"))
    ref = revision or "main"
    commit = ref
    ref_file = repo / "refs" / ref
    if ref_file.is_file():
        commit = ref_file.read_text().strip()
    config = repo / "snapshots" / commit / "config.json"
    return config if config.is_file() else None


def model_shape(model: str | None = None, revision: str | None = None) -> ModelShape:
    """Resolve ``model`` and read its layer and head counts the fast way, without torch.

    A missing path, a folder without config.json, and a hub id that is neither reachable nor
    cached are errors here, in well under a second. A GGUF's counts come from its header
    (``attnscope.ggufheader``), a folder's from config.json, a hub id's from the cached
    config.json when there is one (otherwise the counts stay None and loading checks them).
    """
    spec, kind = resolve(model)
    if kind == "gguf":
        from attnscope.ggufheader import read_gguf_header

        try:
            meta = read_gguf_header(Path(spec)).metadata
        except AttnscopeError:  # unreadable: loading reports it with the reason
            return ModelShape(spec, kind)
        arch = meta.get("general.architecture")
        return ModelShape(
            spec,
            kind,
            num_hidden_layers=_count(meta.get(f"{arch}.block_count")),
            num_attention_heads=_count(meta.get(f"{arch}.attention.head_count")),
        )
    if kind == "hub":
        config_path = _hub_cached_config(spec, revision)
        if config_path is None:
            if hub_local_only():
                raise offline_error(spec)
            return ModelShape(spec, kind)
    else:
        config_path = Path(spec) / "config.json"
    try:
        doc = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # unreadable: loading reports it with the reason
        return ModelShape(spec, kind)
    text = doc.get("text_config", doc) if isinstance(doc, dict) else {}
    if not isinstance(text, dict):
        return ModelShape(spec, kind)
    return ModelShape(
        spec,
        kind,
        num_hidden_layers=_count(text.get("num_hidden_layers")),
        num_attention_heads=_count(text.get("num_attention_heads")),
    )


def load(
    model: str | None = None,
    *,
    revision: str | None = None,
    device: str = "auto",
    dtype: str = "auto",
    device_map: str | None = None,
    progress: Progress = _noop,
    warn: Progress = _noop,
    notice: Progress = _noop,
) -> Loaded:
    """Load tokenizer and model, switched to attnscope's capturing attention.

    ``progress`` gets transient steps; ``notice`` the lines a user should see however
    stderr is connected (a cold GGUF cache: what is done and about how long; waiting for
    another process's conversion).
    """
    shape = model_shape(model, revision)  # a bad path, or offline and not cached: fails before torch
    spec, kind = shape.spec, shape.kind
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    from attnscope.core import capture

    _quiet_transformers()
    dev = pick_device(device) if device_map is None else "cpu"
    import torch

    # Under --device-map the weights land on GPUs when there are any (bf16), else on the CPU (fp32).
    sharded_on = "cuda" if torch.cuda.is_available() else "cpu"
    torch_dtype = pick_dtype(dtype, dev if device_map is None else sharded_on, warn)
    dtype_name = str(torch_dtype).removeprefix("torch.")
    t0 = time.perf_counter()
    path = spec
    if kind == "gguf":
        path = str(_gguf_cache(Path(spec), dtype_name, progress, notice))
    progress(Said("loading", model=spec))
    hub: dict[str, Any] = {"revision": revision, "local_files_only": hub_local_only()} if kind == "hub" else {}
    try:
        config = AutoConfig.from_pretrained(path, **hub)
        _check_config(config, spec)
        tokenizer = _check_vocab(AutoTokenizer.from_pretrained(path, **hub), spec)
        kwargs: dict[str, Any] = {"dtype": torch_dtype, "attn_implementation": "sdpa", **hub}
        if device_map is not None:
            kwargs["device_map"] = device_map
        net = AutoModelForCausalLM.from_pretrained(path, **kwargs)
    except AttnscopeError:
        raise
    except OSError as exc:
        if kind == "hub":
            raise _hub_error(spec, exc) from exc
        raise AttnscopeError(f"{spec}: cannot load the model ({exc}){_damaged(kind, path)}", ExitCode.MODEL) from exc
    except Exception as exc:  # ValueError, safetensors' SafetensorError on a truncated file, ...
        detail = f"{type(exc).__name__}: {exc}"
        if "ignore_mismatched_sizes" in detail:  # transformers points at a report it logged, which is silenced
            detail = "its weights do not have the shapes its config.json describes"
        raise AttnscopeError(f"{spec}: cannot load the model ({detail}){_damaged(kind, path)}", ExitCode.MODEL) from exc
    if device_map is None:
        net = net.to(dev)
    net.eval()
    capture.prepare(net)
    cfg = net.config
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    info = ModelInfo(
        id=spec,
        num_hidden_layers=int(cfg.num_hidden_layers),
        num_attention_heads=int(cfg.num_attention_heads),
        num_key_value_heads=int(getattr(cfg, "num_key_value_heads", None) or cfg.num_attention_heads),
        dtype=dtype_name,
        device=str(next(net.parameters()).device) if device_map is None else f"device_map={device_map}",
        model_type=str(cfg.model_type),
        head_dim=int(head_dim),
    )
    progress(Said("loaded", seconds=f"{time.perf_counter() - t0:.1f}", device=info.device, dtype=dtype_name))
    return Loaded(model=net, tokenizer=tokenizer, info=info, source=kind, path=path)


# --- config-only reads (attnscope info): no weights, no tokenizer object --------------


def read_gguf_header(path: Path) -> Any:
    """The GGUF header (metadata and tensor shapes) of ``path``: a scan, no tensor data."""
    from attnscope.ggufheader import read_gguf_header as scan

    return scan(path)


def _quiet_hub() -> None:
    """No retry chatter from huggingface_hub on stderr (transformers is not imported here)."""
    import logging

    logging.getLogger("huggingface_hub").setLevel(logging.ERROR)


def has_chat_template(spec: str, kind: str, revision: str | None) -> bool | None:
    """Whether a hub id's or a folder's tokenizer files carry a chat template; None when they cannot be read."""
    if kind == "folder":
        folder = Path(spec)
        if (folder / "chat_template.jinja").is_file():
            return True
        try:
            doc = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return bool(isinstance(doc, dict) and doc.get("chat_template"))
    from huggingface_hub import hf_hub_download

    for name in ("chat_template.jinja", "tokenizer_config.json"):
        try:
            local = hf_hub_download(spec, name, revision=revision, local_files_only=hub_local_only())
        except Exception:  # missing file, offline, gated: all mean "cannot tell from here"
            continue
        if name.endswith(".jinja"):
            return True
        try:
            doc = json.loads(Path(local).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return bool(isinstance(doc, dict) and doc.get("chat_template"))
    return None


REQUIRED = ("num_hidden_layers", "num_attention_heads", "hidden_size", "vocab_size")


def read_config(spec: str, kind: str, revision: str | None) -> dict[str, Any]:
    """A hub id's or a folder's config.json as a dict (``info``): read directly (no torch import), or through AutoConfig when
    it leaves out fields that the config class fills with defaults."""
    try:
        if kind == "folder":
            path = Path(spec) / "config.json"
        else:
            from huggingface_hub import hf_hub_download

            _quiet_hub()
            path = Path(hf_hub_download(spec, "config.json", revision=revision, local_files_only=hub_local_only()))
        doc = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise AttnscopeError(f"{spec}: config.json is not valid JSON ({exc})", ExitCode.MODEL) from exc
    except Exception as exc:  # OSError, hub errors
        if kind == "hub":
            raise _hub_error(spec, exc) from exc
        raise AttnscopeError(f"{spec}: cannot read config.json ({exc})", ExitCode.MODEL) from exc
    if not isinstance(doc, dict):
        raise AttnscopeError(f"{spec}: config.json is not a JSON object", ExitCode.MODEL)
    text = doc.get("text_config", doc)
    if isinstance(text, dict) and all(k in text for k in REQUIRED):
        return doc
    from transformers import AutoConfig

    _quiet_transformers()
    try:
        hub: dict[str, Any] = {"revision": revision, "local_files_only": hub_local_only()} if kind == "hub" else {}
        full: dict[str, Any] = AutoConfig.from_pretrained(spec, **hub).to_dict()
    except (OSError, ValueError, KeyError) as exc:
        raise AttnscopeError(f"{spec}: cannot read config.json ({type(exc).__name__}: {exc})", ExitCode.MODEL) from exc
    return full
