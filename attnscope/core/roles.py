"""Head roles: previous-token, duplicate-token, induction and sink scores for every layer and head.

The input is a prompt, or N random token ids repeated twice (the induction test of
Olsson et al. 2022), optionally after the tokenizer's BOS. One forward captures every
layer's full attention pattern (``engine.run`` with every query position), held on the
CPU as (layer, head, query_pos, key_pos); that is L x H x T x T, so this is for
sequences of a few hundred tokens (the memory guard refuses more).

Scores, per head, with A the (T, T) pattern:

- previous-token, duplicate-token, induction: TransformerLens' ``detect_head`` with its
  defaults (error measure ``mul``, no BOS or current-token exclusion):
  ``sum(A * P) / sum(A)`` with P the role's 0/1 detection pattern: P[i, i-1] = 1;
  P[i, j] = 1 when j < i and ids[j] == ids[i]; and the duplicate pattern shifted one key
  to the right (P[i, j] = 1 when ids[j-1] == ids[i], j - 1 < i).
- sink: Gu et al. 2024, "When attention sink emerges in language models" (released code
  ``eval_sink_open_source.py``, ``compute_attention_sink``): the importance of key k is
  ``sum_i A[i, k] / (T - k)``, the key's weight averaged over the queries that can see
  it; a head counts as a sink head when the importance of key 0 exceeds epsilon = 0.3.

This module does not load models and does not print.
"""

from __future__ import annotations

from typing import Any

import torch

from attnscope.capture import anatomy, engine
from attnscope.core.common import every_layer
from attnscope.core.prompt.params import ROLES_PARAMS, validate
from attnscope.core.prompt.tokens import check_length, encode
from attnscope.errors import AttnscopeError
from attnscope.model import Loaded
from attnscope.results.common import ResultWarning, Token
from attnscope.results.derive import roles_numbers
from attnscope.results.roles import ROLES, RoleScores, RolesResult

SINK_EPSILON = 0.3  # Gu et al. 2024's threshold
DEFAULT_LENGTH = 50
DEFAULT_TOP = 5


def previous_token_pattern(n: int) -> torch.Tensor:
    """(T, T) with 1 at [i, i - 1]."""
    return torch.diag(torch.ones(n - 1), diagonal=-1)


def duplicate_token_pattern(ids: torch.Tensor) -> torch.Tensor:
    """(T, T) with 1 at [i, j] when j < i and ids[j] == ids[i]."""
    same = ids[:, None] == ids[None, :]  # (T, T): [query, key]
    return torch.tril(same, diagonal=-1).float()


def induction_pattern(ids: torch.Tensor) -> torch.Tensor:
    """(T, T) with 1 at [i, j] when the key before j is an earlier copy of the query: ids[j-1] == ids[i], j-1 < i."""
    dup = duplicate_token_pattern(ids)
    out = torch.zeros_like(dup)
    out[:, 1:] = dup[:, :-1]  # key j takes the duplicate mark of key j - 1
    return out


def detection_score(patterns: torch.Tensor, detection: torch.Tensor) -> torch.Tensor:
    """TransformerLens' ``mul`` score: patterns (..., T, T), detection (T, T) -> (...)."""
    return (patterns * detection).sum(dim=(-2, -1)) / patterns.sum(dim=(-2, -1))


def sink_score(patterns: torch.Tensor) -> torch.Tensor:
    """Gu et al.'s importance of key 0: patterns (..., T, T) -> (...), the mean of column 0 over all T queries."""
    return patterns[..., :, 0].mean(dim=-1)


def scores(patterns: torch.Tensor, ids: torch.Tensor) -> dict[str, torch.Tensor]:
    """Every role's (L, H) grid from patterns (L, H, T, T) and the token ids (T,)."""
    n = ids.shape[0]
    return {
        "previous_token": detection_score(patterns, previous_token_pattern(n)),
        "duplicate_token": detection_score(patterns, duplicate_token_pattern(ids)),
        "induction": detection_score(patterns, induction_pattern(ids)),
        "sink": sink_score(patterns),
    }


def random_ids(tokenizer: Any, length: int, seed: int) -> list[int]:
    """``length`` token ids drawn uniformly (seeded) from the ordinary vocabulary, no special tokens."""
    base = int(getattr(tokenizer, "vocab_size", 0) or len(tokenizer))
    special = set(getattr(tokenizer, "all_special_ids", []) or [])
    pool = torch.tensor([i for i in range(base) if i not in special])
    gen = torch.Generator().manual_seed(seed)
    picks = torch.randint(0, pool.shape[0], (length,), generator=gen)
    return [int(i) for i in pool[picks]]


def random_tokens(tokenizer: Any, ids: list[int]) -> tuple[list[Token], str]:
    """Token records for ids that were not cut from a text: each token decoded alone, laid end to end.

    Random ids often hold parts of a UTF-8 character, so the text is for reading only
    (``decode`` per token, invalid bytes shown as U+FFFD); every token is a word of its own.
    """
    specials = set(getattr(tokenizer, "all_special_ids", []) or [])
    tokens: list[Token] = []
    at = 0
    for i, tid in enumerate(ids):
        piece = tokenizer.decode([tid])
        label = piece.replace("\n", "↵") if piece.strip() else repr(piece)
        tokens.append(
            Token(
                index=i,
                id=int(tid),
                text=piece,
                start=at,
                end=at + len(piece),
                word=i,
                label=label,
                special=tid in specials,
            )
        )
        at += len(piece)
    return tokens, "".join(t.text for t in tokens)


def patterns(loaded: Loaded, ids: list[int]) -> torch.Tensor:
    """(L, H, T, T) fp32: every layer's full attention pattern for one sequence."""
    input_ids = torch.tensor([ids])  # (1, T)
    n = len(ids)
    layers = every_layer(loaded.info, "roles")
    got = engine.run(
        loaded.model,
        input_ids,
        torch.ones_like(input_ids),
        engine.Request(positions=torch.arange(n)[None, :], layers=frozenset(layers)),
    )
    engine.check_finite(got.rows)
    return torch.stack([got.rows[layer][0] for layer in layers])  # (L, H, T, T)


def roles(
    loaded: Loaded,
    prompt: str | None = None,
    *,
    length: int = DEFAULT_LENGTH,
    seed: int = 0,
    top: int = DEFAULT_TOP,
) -> RolesResult:
    """Everything ``attnscope roles`` does: random repeated tokens (no prompt) or the prompt's tokens."""
    validate(ROLES_PARAMS, top=top)
    info = loaded.info
    tokenizer = loaded.tokenizer
    max_pos = anatomy.of(loaded.model).max_positions
    if prompt is None:
        validate(ROLES_PARAMS, length=length)
        bos_id = getattr(tokenizer, "bos_token_id", None)
        half = random_ids(tokenizer, length, seed)
        ids = ([int(bos_id)] if isinstance(bos_id, int) else []) + half + half
        check_length(len(ids), max_pos)
        tokens, text = random_tokens(tokenizer, ids)
        source = "random"
        bos = isinstance(bos_id, int)
        used_seed: int | None = seed
    else:
        enc = encode(tokenizer, prompt)
        if len(enc.ids) < 2:
            raise AttnscopeError("roles_short")
        check_length(len(enc.ids), max_pos)
        ids, tokens, text = enc.ids, enc.tokens, enc.text
        length, source, bos, used_seed = len(ids), "prompt", False, None
    got = scores(patterns(loaded, ids), torch.tensor(ids))
    grids = RoleScores(**{role: got[role].tolist() for role in ROLES})
    ranking, sink_rate = roles_numbers(grids, anatomy.of(loaded.model).groups, top, SINK_EPSILON)
    return RolesResult(
        model=info,
        source=source,  # type: ignore[arg-type]
        text=text,
        length=length,
        seed=used_seed,
        bos=bos,
        tokens=tokens,
        scores=grids,
        top=ranking,
        sink_threshold=SINK_EPSILON,
        sink_rate=sink_rate,
        warnings=[ResultWarning(code="mixed_windows_length", count=len(ids), value=info.sliding_window)]
        if info.mixes_windows(len(ids))
        else [],
    )
