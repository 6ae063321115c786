"""Result of ``attnscope reuse``: earlier K/V do not change when tokens are appended, so a cache works."""

from __future__ import annotations

from dataclasses import dataclass, field

from attnscope.results import Result
from attnscope.results.common import ModelInfo, ResultWarning, Token
from attnscope.results.trace import TopToken


@dataclass(frozen=True)
class LayerDiff:
    """Max |prefix alone - inside prefix+suffix| over the prefix positions, all heads, at one layer.

    ``max_diff_rows`` compares the prefix positions' attention rows over the prefix keys;
    ``max_future_weight`` is the largest weight any prefix position gives a suffix key (0 by the mask).
    """

    layer: int
    max_diff_k: float  # max |K alone - K inside prefix+suffix| over prefix positions and heads
    max_diff_v: float  # the same for V
    max_diff_rows: float  # the same for the prefix positions' attention rows
    max_future_weight: float  # the largest weight a prefix position gives a suffix key (exactly 0)


@dataclass(frozen=True)
class CacheCheck:
    """The suffix run on a copy of the prefix's DynamicCache against one full pass.

    ``prefix_len`` is the cache length after the prefix; ``copy_len`` the copy's length after the
    suffix; ``original_len_after`` the original cache's length afterwards (unchanged: a copy was used).
    ``max_diff_cache_k`` compares the keys the cache stored with the K captured from the prefix run.
    """

    prefix_len: int  # cache length after the prefix
    copy_len: int  # length of the copied cache after the suffix
    original_len_after: int  # length of the original cache afterwards (unchanged)
    cached: TopToken  # next token predicted through the cache copy
    full: TopToken  # next token predicted by one full pass
    max_diff_cache_k: float  # max |cached keys of layer 0 - captured K|


@dataclass(frozen=True)
class Comparisons:
    """Query-key comparisons per head per layer: T(T+1)/2 for T tokens (each query meets keys 0..itself).

    ``tokens`` is the prompt (prefix+suffix, repeated ``repeat`` times); ``doubled_tokens`` twice that.
    ``seconds``/``doubled_seconds``: measured time of one layer's attention (all heads, the model's own
    q/k/v from layer 0 through torch's sdpa), median of ``runs`` runs, on ``timed_on``.
    """

    repeat: int  # --repeat
    tokens: int
    per_head_per_layer: int  # T(T+1)/2
    doubled_tokens: int  # 2T
    doubled_per_head_per_layer: int  # 2T(2T+1)/2
    ratio: float  # doubled / single comparisons
    layers: int
    heads: int
    total: int  # comparisons over all layers and heads
    doubled_total: int  # the same at 2T
    seconds: float  # measured time of one layer's attention, all heads (median)
    doubled_seconds: float  # the same at 2T
    time_ratio: float  # doubled_seconds / seconds
    runs: int  # timed runs the median is taken over
    timed_on: str  # "cpu, 1 thread" or the device


@dataclass(frozen=True)
class ReuseResult(Result):
    SCHEMA = "attnscope.reuse/2"

    model: ModelInfo
    prefix: str  # the earlier text
    suffix: str  # the text appended to it
    text: str
    tokens: list[Token]  # prefix tokens then suffix tokens, each tokenized on its own
    prefix_tokens: int  # how many tokens the prefix has
    boundary_same: bool  # tokenizing prefix+suffix as one text gives the same ids
    per_layer: list[LayerDiff]  # prefix positions alone vs inside prefix+suffix, per layer
    max_diff_k: float  # max |ΔK| over layers
    max_diff_v: float  # max |ΔV| over layers
    max_diff_rows: float  # max |Δ rows| over layers
    max_diff_logits: float  # max |next-token logits via the cache copy - one full pass|
    cache: CacheCheck  # the KV-cache check
    comparisons: Comparisons  # the cost of doubling T
    tolerance: float
    kv_ok: bool  # prefix K, V and rows unchanged, no weight on suffix keys
    cache_ok: bool  # cached and full pass give the same next-token logits; the original cache untouched
    ok: bool
    warnings: list[ResultWarning] = field(default_factory=list)
