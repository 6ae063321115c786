"""The English catalogue: every word the views print, keyed by view.

Keep the keys in the same order as the other language's catalogue; a test fails when
a key exists in one and not the other. Each view's keys sit in its own section.
"""

MESSAGES: dict[str, str] = {
    # == common ==
    "common.sum": "sum",
    "common.model": "model {id}  {layers} layers, {heads} heads / {kv_heads} KV heads, {dtype} on {device}",
    "common.query": "query",
    "common.key": "key",
    "common.token_span": "token {where}: {labels}",
    "common.tokens_span": "tokens {where}: {labels}",
    "common.selection": "layers {layers}  heads {heads}",
    "common.layer_head": "layer {layer} head {head}",
    "common.kv_head": "KV head {kv_head}",
    "common.mean": "mean",
    "common.max": "max",
    "common.self": "<- self",
    "common.note_no_sink": "--no-sink: position 0 excluded and each row renormalised over positions {positions}",
    "common.warning.ambiguous_query": "warning: '{text}' occurs {count} times; using the first (pick one with --occurrence 1..{count})",
    "common.warning.ambiguous_key": "warning: '{text}' occurs {count} times; using the first for --key (pick one with --key-occurrence 1..{count})",
    "common.warning.sink_key_excluded": "warning: --no-sink: key token 0 is excluded, so it adds nothing to the score",
    "common.warning.padded_by_attnscope": "the tokenizer did not pad this batch itself; padded with token id {value}",
    # == end common ==
    # == tokens ==
    "tokens.summary": "{tokens} tokens, {words} words",
    "tokens.chat": "  (chat template applied)",
    "tokens.col.index": "index",
    "tokens.col.id": "id",
    "tokens.col.token": "token",
    "tokens.col.offsets": "offsets",
    "tokens.col.word": "word",
    # == end tokens ==
    # == weights ==
    "weights.query_token": "  (token {index} '{label}')",
    "weights.strip_title": "keys x layers (mean over the selected heads; darker = more)",
    "weights.strip_last_digit": "layers {layers}, header shows the last digit; ",
    "weights.strip_scale": "shading scale 0-{top}",
    "weights.chart_title": "weights the query mixes in",
    "weights.excluded": "excluded (sink)",
    "weights.partial": "{label} (to the query)",
    "weights.note_chat": "--chat: the last position ends the generation prompt; the assistant's first token is predicted here",
    "weights.note_by_word": "--by word: each word's bar is the sum of its tokens' weights",
    "weights.note_mean": "mean over {layers} layer(s) x {heads} head(s)",
    "weights.note_max": "max over {layers} layer(s) x {heads} head(s): bars need not add up to 1",
    # == end weights ==
    # == mask ==
    # == end mask ==
    # == heads ==
    "heads.summary": "{above} of {total} heads put more than 0.5 on the key",
    "heads.top_title": "top {n} of {total} heads by weight on the key",
    "heads.col.layer": "layer",
    "heads.col.head": "head",
    "heads.col.kv": "kv",
    "heads.col.score": "score",
    "heads.col.row": "row {positions}",
    "heads.col.row_binned": "row {positions} ({size}/cell, max)",
    "heads.col.elsewhere": "elsewhere",
    "heads.row_legend": "row: positions 0-query, darker = more (on the row's own scale), [key]; · = under 0.5% of the row's max",
    "heads.col.best": "best",
    "heads.heatmap_caption": "score per layer and head (darker = more), scale 0-{top}; │ separates KV groups ({kv_heads} KV heads)",
    "heads.note_score": "score = the query's weight on the key, summed over the key's {n} token(s)",
    "heads.note_last": "the query spans {n} tokens; its last token's row is used (--query-agg last)",
    "heads.note_mean": "the query spans {n} tokens; their rows are averaged (--query-agg mean)",
    # == end heads ==
    # == matrix ==
    "matrix.positions": "positions {positions} of {n}",
    "matrix.tokens": "{n} tokens",
    "matrix.by.token": "by token",
    "matrix.by.word": "by word",
    "matrix.by.block": "by block",
    "matrix.top.token": "top key",
    "matrix.top.word": "top word",
    "matrix.top.block": "top block",
    "matrix.scale": "scale 0-1: ",
    "matrix.blank": "blank <0.005   · masked: the key is after the query (causal)",
    "matrix.legend_block": "rows and columns are numbered by each block's first position; labels show its first token",
    "matrix.legend_word": "rows and columns are numbered by word",
    "matrix.note_by_word": "--by word: each cell is the mean over the row word's query tokens of the sum over the column word's key tokens; each row still sums to 1",
    "matrix.note_too_many_words": "{n} words are too many to draw; shown in blocks of tokens instead",
    "matrix.note_condensed": "condensed: {n} tokens in blocks of up to {size}; each cell is the mean over the row block's query tokens of the sum over the column block's key tokens (JSON keeps every weight)",
    "matrix.note_window": "--window {start}:{end}: the '<{start}' column is each row's weight on keys {before}",
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
    "weights.others_word": "{n} other words",
    "weights.others_token": "{n} other tokens",
    "weights.chart_title_norm": "each key's share of ||weight x f(x)||, the size of what it adds (norm / sum over keys)",
    "weights.sink": (
        "position 0 ({label}) takes {share} of the weight: an attention sink (the first position soaks up "
        "weight and adds little). --no-sink leaves it out; --measure norm weighs each key by the size of what it adds."
    ),
    "weights.sink_norm": (
        "position 0 ({label}) still takes {share} of the norm: an attention sink even by the size of what it adds. "
        "--no-sink leaves it out."
    ),
    "weights.hardest_title_word": "who looks hardest at each word (the head that puts the most on it)",
    "weights.hardest_title_token": "who looks hardest at each token (the head that puts the most on it)",
    "weights.hardest_hint": (
        "from the {count} rows above (no second run); position 0 and the query's own word are left out. "
        "attnscope heads -q QUERY -k WORD ranks every head for one word."
    ),
    "weights.completeness": (
        "completeness: the sum over heads and keys of weight x f(x) equals the o_proj output at the query; "
        "max |difference| {diff} over {layers} layer(s)"
    ),
    "weights.note_norm": (
        "--measure norm: a key's share of ||weight x f(x)|| in each layer and head (Kobayashi et al. 2020), "
        "f(x) = (x W_V + b_V) W_O of that head"
    ),
    "weights.note_by_token_hint": "--by token shows each token",
    # == end measure norm ==
    # == figures (issue 14) ==
    "figures.model": "{model}: {layers} layers, {heads} heads, {kv} KV heads",
    "figures.query": "query “{query}” (position {pos})",
    "figures.weights.title": "What the query mixes in",
    "figures.selection.mean": "mean over {layers} layer(s) × {heads} head(s)",
    "figures.selection.max": "max over {layers} layer(s) × {heads} head(s); the bars need not add up to 1",
    "figures.selection.one": "layer {layer}, head {head} (KV head {kv})",
    "figures.self": "<- self",
    "figures.sink_excluded": "excluded (sink)",
    "figures.by_word": "each word's bar sums its tokens",
    "figures.to_query": "(to the query)",
    "figures.no_sink": "position 0 excluded; each head's row renormalised over positions 1~{q}",
    "figures.strip.title": "Keys × layers: the weight on each key, mean over the selected heads",
    "figures.layer": "layer",
    "figures.head": "head",
    "figures.scale": "scale 0~{top}, darker = more",
    "figures.heads.title": "Weight from “{query}” on “{key}”, per layer and head",
    "figures.heads.best": "best",
    "figures.heads.kv": "vertical lines separate the KV groups ({kv} KV heads)",
    "figures.heads.above": "{n} of {total} heads put more than 0.5 on the key",
    "figures.matrix.title": "Layer {layer}, head {head} (KV head {kv}): every query row",
    "figures.matrix.rows": "rows: the position being computed (query); columns: the position referred to (key)",
    "figures.matrix.masked": "grey: masked, the key comes after the query",
    "figures.matrix.before": "<{start}: the row's weight on keys 0~{last}",
    "figures.matrix.by_word": "rows and columns are words",
    "figures.matrix.by_block": "rows and columns are blocks of positions, labelled by their first token",
    "figures.mask.title": "Masks: which positions each position refers to",
    "figures.mask.legend": "rows: the position being computed, columns: the position referred to, 1 = refers, . = weight 0",
    "figures.mask.causal": "causal mask only",
    "figures.mask.combined": "causal mask and padding mask",
    "figures.mask.sequence": "sequence {b}",
    "figures.mask.pad_row": "padding: its result is not used",
    "figures.mask.agrees": "agrees with the mask the model applied",
    "figures.mask.disagrees": "DIFFERS from the mask the model applied",
    "figures.trace.title": "Position {pos} “{tok}” (token id {id}) through every layer",
    "figures.trace.stage": "stage",
    "figures.trace.norm": "norm",
    "figures.trace.cos": "cos to the row before",
    "figures.trace.lens": "logit lens: top {k}",
    "figures.trace.embedding": "embedding",
    "figures.trace.after": "after layer {n}",
    # == end figures ==
    # == explore page (issue 14) ==
    "explore.title": "attnscope explore",
    "explore.lang_name": "English",
    "explore.tokens": "The prompt's tokens",
    "explore.tokens_hint": "Click a token to make it the query. The shading is the weight it gets from the query.",
    "explore.by": "Keys by",
    "explore.by_token": "token",
    "explore.by_word": "word",
    "explore.sink": "include position 0 (attention sink)",
    "explore.all": "all layers and heads",
    "explore.sel.all": "mean over all {layers} layers × {heads} heads",
    "explore.sel.layer": "layer {layer}, mean over its {heads} heads",
    "explore.chart_hint": "Click a bar to make it the key of the layers × heads grid.",
    "explore.grid.title": "Weight from “{query}” on “{key}”, per layer and head",
    "explore.grid_hint": "Click a cell to pick that head, a layer number for the mean of that layer.",
    "explore.matrix.title": "The whole causal matrix: {sel}",
    "explore.matrix_hint": "Rows: the position being computed (query); columns: the position referred to (key). Click a row to make it the query.",
    "explore.quant": "Weights are stored as whole multiples of 1/{levels}, each row rounded so that it still adds up to exactly 1: a shown weight is within {err} of the model's.",
    "explore.partial": "This prompt has {n} tokens, more than {limit}, the longest prompt whose every row this page stores. Only the rows of positions {positions} are stored: only they can be the query, and there is no matrix.",
    "explore.not_stored": "this position's row is not stored in the page",
    "explore.sink_first": "Position 0 refers only to itself: without it nothing is left.",
    "explore.nojs": "This page draws itself with JavaScript; turn it on to see the attention.",
    "explore.wrote": "wrote {path} ({size})",
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
