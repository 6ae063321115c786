"""The English catalogue: every word the views print, keyed by view.

Keep the keys in the same order as the other language's catalogue; a test fails when
a key exists in one and not the other. Each view's keys sit in its own section.
"""

MESSAGES: dict[str, str] = {
    # == common ==
    "common.sum": "sum",
    # == end common ==
    # == tokens ==
    # == end tokens ==
    # == weights ==
    # == end weights ==
    # == mask ==
    # == end mask ==
    # == heads ==
    # == end heads ==
    # == matrix ==
    # == end matrix ==
    # == info ==
    # == end info ==
    # == trace ==
    # == end trace ==
    # == explain ==
    # == end explain ==
    # == rope ==
    # == end rope ==
    # == reuse ==
    # == end reuse ==
    # == roles (issue 13) ==
    "roles.source_random": "{length} random tokens repeated twice ({total} tokens, seed {seed})",
    "roles.source_random_bos": "BOS + {length} random tokens repeated twice ({total} tokens, seed {seed})",
    "roles.source_prompt": "the prompt's {total} tokens",
    "roles.model": "model {id}: {layers} layers x {heads} heads ({kv_heads} KV heads)",
    "roles.top_title": "top {top} heads per role (layer, head, score)",
    "roles.role.previous_token": "previous token",
    "roles.role.duplicate_token": "duplicate token",
    "roles.role.induction": "induction",
    "roles.role.sink": "attention sink",
    "roles.sink_rate": "sink heads (score > {eps}): {over} of {heads} ({rate:.1f}%)",
    "roles.scores_note": (
        "previous token, duplicate token, induction: the share of the head's whole pattern on the "
        "role's pattern (TransformerLens detect_head, mul). attention sink: weight on position 0, "
        "averaged over all queries (Gu et al. 2024)."
    ),
    "roles.grid_title": "layers x heads, shaded 0~1 (darker: higher)",
    # == end roles ==
    # == measure norm (issue 13) ==
    # == end measure norm ==
    # == figures (issue 14) ==
    # == end figures ==
    # == explore page (issue 14) ==
    # == end explore page ==
    # == generate (issue 15) ==
    # == end generate ==
    # == segments and chat template (issue 15) ==
    # == end segments ==
    # == first hour: progress, cache, width (issue 12) ==
    # == end first hour ==
}
