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
    "generate.title": "{model}: the answer, token by token",
    "generate.selection": "Rows of {layers} layer(s) × {heads} head(s); the model has {n_layers} layers × {n_heads} heads.",
    "generate.greedy": "Greedy: each step takes the most likely token.",
    "generate.sampled": "Sampled at temperature {temperature} with seed {seed}.",
    "generate.stop_eos": "It stopped at the end-of-answer token after {n} new token(s).",
    "generate.stop_max": "It stopped at the limit of {n} new token(s).",
    "generate.prompt": "Prompt: {n} tokens.",
    "generate.answer": "Answer",
    "generate.col_step": "#",
    "generate.col_token": "token",
    "generate.col_prob": "prob",
    "generate.col_words": "top keys (mean of the selected heads)",
    "generate.col_heads": "heads on the prompt",
    "generate.where": "Where each answer token looked (the row of the position that produced it)",
    "generate.shares": "Share of each segment, for layers {groups}",
    "generate.sink": "(sink)",
    "generate.in_answer": "(answer)",
    "generate.sink_note": "(sink): position 0, where heads park weight they do not need, the attention sink.",
    "generate.heads_note": "Heads on the prompt: the weight a head's row puts on the prompt's own text (not position 0, not template tokens).",
    "generate.prob_note": "prob: the token's probability in the distribution it was drawn from.",
    "generate.cached": "Every row was captured in the cached decode step that produced the token: one query, the cache's keys.",
    "generate.more_steps": "{shown} of {total} answer tokens detailed; choose others with --steps (e.g. 0-4,10).",
    # == end generate ==
    # == segments and chat template (issue 15) ==
    "segments.template": "template",
    "segments.system": "system",
    "segments.system_inserted": "system (inserted)",
    "segments.user": "user {turn}",
    "segments.assistant": "assistant {turn}",
    "segments.prompt": "prompt",
    "segments.answer": "answer",
    "segments.warn_inserted": "The template inserted a system message you did not write: “{text}”",
    "segments.warn_reencode": "Tokenizing the rendered text again gives other ids than apply_chat_template(tokenize=True): special tokens were split or doubled.",
    "segments.warn_no_generation_prompt": "The template added no generation prompt: nothing marks where the answer starts.",
    "segments.rendered": "The text the chat template made, each token labelled by segment:",
    "segments.col_segment": "segment",
    "segments.counts": "{n} segment(s): {list}",
    # == end segments ==
    # == first hour: progress, cache, width (issue 12) ==
    # == end first hour ==
}
