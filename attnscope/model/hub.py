"""The Hugging Face hub: whether to contact it, its cache, and its errors in our words.

``hub_local_only`` probes the hub's endpoint once per process, so an offline machine reads
hub ids from the local cache at once instead of waiting through huggingface_hub's retries.
``cached_config`` finds a hub id's config.json in that cache without any network. The
``quiet`` helpers silence the libraries' own logging, which would otherwise reach stderr.
"""

from __future__ import annotations

import functools
import logging
import os
import warnings
from pathlib import Path

from attnscope.errors import AttnscopeError

PROXY_VARS = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")
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
    if any(os.environ.get(name) for name in PROXY_VARS):
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


def hub_error(model_id: str, exc: BaseException) -> AttnscopeError:
    """What a failed hub download means: no such revision, no such (or a gated) repo, or offline."""
    from huggingface_hub import errors as hub_errors

    chain: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and len(chain) < 8:
        chain.append(cur)
        cur = cur.__cause__ or cur.__context__
    if any(isinstance(e, hub_errors.RevisionNotFoundError) for e in chain):
        return AttnscopeError("hub_revision", model=repr(model_id), arg="revision")
    if any(isinstance(e, (hub_errors.RepositoryNotFoundError, hub_errors.GatedRepoError)) for e in chain):
        return AttnscopeError("hub_missing", model=repr(model_id))
    return offline_error(model_id)


def offline_error(model_id: str) -> AttnscopeError:
    """The hub cannot be reached and ``model_id`` is not cached: say how to use a model on disk."""
    offline = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0")
    return AttnscopeError("hub_offline" if offline else "hub_unreachable", model=repr(model_id), arg="model")


def cached_config(model_id: str, revision: str | None) -> Path | None:
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


def quiet_hub() -> None:
    """No retry chatter from huggingface_hub on stderr (without importing transformers)."""
    logging.getLogger("huggingface_hub").setLevel(logging.ERROR)


def quiet_transformers() -> None:
    """No logging, progress bars or warnings from transformers (and huggingface_hub) on stderr."""
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    quiet_hub()
    warnings.filterwarnings("ignore", module="transformers")
