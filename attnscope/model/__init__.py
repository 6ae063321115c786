"""Models: what a model reference means, reading its config, and loading it. No analysis here.

One module per job:

* ``reference``: a hub id, a local HF folder or a ``.gguf`` file; the default model; the cache root.
* ``hub``: whether the hub can be reached, a hub id's cached config, hub errors in our words.
* ``gguf_header``: a GGUF file's metadata and tensor shapes, scanned without tensor data.
* ``gguf_cache``: GGUF files converted once into HF folders under the cache, behind one lock.
* ``config``: the counts checked before loading (``model_shape``) and the config reads of ``info``.
* ``tokenizer``: a model's tokenizer alone.
* ``loader``: the device and dtype choice, and the model with its tokenizer (``Loaded``).
* ``said``: what loading tells the user, as catalogue keys and values (``Said``).

Importing this package does not import torch or transformers; the functions that need
them import them when called. This package never imports ``attnscope.capture`` or any
analysis: preparing a loaded model for capture is the capture side's step.
"""

from __future__ import annotations

from attnscope.model.config import (
    PLAIN_GGUF_ARCHITECTURES,
    REQUIRED,
    TESTED_MODEL_TYPES,
    ModelShape,
    check_config,
    gguf_config,
    has_chat_template,
    layer_kinds,
    model_shape,
    read_config,
    rope_bases,
)
from attnscope.model.gguf_cache import file_sha256
from attnscope.model.gguf_header import GGUFHeader, read_gguf_header
from attnscope.model.loader import DEVICES, DTYPES, Loaded, load, pick_device, pick_dtype
from attnscope.model.reference import DEFAULT_MODEL, cache_root, default_model, resolve
from attnscope.model.said import Progress, Said
from attnscope.model.tokenizer import load_tokenizer

__all__ = [
    "DEFAULT_MODEL",
    "DEVICES",
    "DTYPES",
    "PLAIN_GGUF_ARCHITECTURES",
    "REQUIRED",
    "TESTED_MODEL_TYPES",
    "GGUFHeader",
    "Loaded",
    "ModelShape",
    "Progress",
    "Said",
    "cache_root",
    "check_config",
    "default_model",
    "file_sha256",
    "gguf_config",
    "has_chat_template",
    "layer_kinds",
    "load",
    "load_tokenizer",
    "model_shape",
    "pick_device",
    "pick_dtype",
    "read_config",
    "read_gguf_header",
    "resolve",
    "rope_bases",
]
