"""Write and check docs/models.md: the decoder families attnscope is tested on, in two kinds of
evidence: the real checkpoints (:data:`REAL`, each comparison measured by a slow test in
``tests/acceptance``, which fails through :func:`assert_measured` when its number and the one
written here differ by more than a factor of 4), and the tiny random configs, from what
``tests/integration/test_families.py`` measured.

The test builds each family's tiny random model, compares its rows with eager attention and
runs every command once; it hands one :class:`Family` per model type to :func:`render` (with
``ATTNSCOPE_WRITE_MODELS_DOC=1``) or :func:`check`, which compares the committed page with the
run: the same families, layer kinds and command outcomes exactly, and each measured difference
within a factor of 4 of the one written down (float rounding differs a little between machines).

Run: ``ATTNSCOPE_WRITE_MODELS_DOC=1 python -m pytest tests/integration/test_families.py``.
This module is not imported by the CLI.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

COMMAND = "ATTNSCOPE_WRITE_MODELS_DOC=1 python -m pytest tests/integration/test_families.py"


@dataclass(frozen=True)
class Measured:
    """One comparison on a real checkpoint: what ran, on which prompt, against which reference,
    the bound its slow test asserts and the largest difference it measured (None: not recorded)."""

    key: str  # how the test names it (assert_measured)
    command: str
    prompt: str
    against: str
    bound: str  # the test fails above this
    difference: float | None  # the largest |difference| measured (0.0: equal)
    test: str  # the test that asserts it


@dataclass(frozen=True)
class Checkpoint:
    """A real checkpoint the slow tier runs, and what it measured on it."""

    model_type: str
    name: str
    shape: str
    measured: tuple[Measured, ...]


_G = "tests/acceptance/test_gemma.py"
_EAGER = "eager `output_attentions` of a fresh plain-transformers copy"
_ENGLISH = "`The cat sat on the mat because it was tired`"
_SEED = "the note's sentence `민수는 사과를 샀다. 그는 그것을 먹었다.`"
_LONG = "40 numbered copies of one English sentence (712 tokens with BOS; the query is the last one)"
_CAT = "`The cat sat on the mat` (corrupt: `dog`)"
# What tests/acceptance/test_gemma.py measured (ATTNSCOPE_RECORD_MEASURED), largest |difference|.
GEMMA_MEASURED: dict[str, float] = {
    "weights english": 7.2e-07,
    "weights seed": 7.7e-07,
    "weights long": 4.8e-06,
    "weights long, past the window": 0.0,
    "ablate": 9.8e-06,
    "knockout": 6.0e-07,
    "patch": 6.7e-06,
    "generate": 1.2e-06,
    "stats": 8.1e-07,
    "flow": 9.4e-08,
}
REAL: tuple[Checkpoint, ...] = (
    Checkpoint(
        "qwen2",
        "Qwen2.5-Coder-0.5B-Instruct (`qwen2.5-coder-0.5b-instruct-q4_k_m.gguf`, from `fetch.sh`)",
        "24 layers, 14 query heads sharing 2 KV heads (head_dim 64), full attention in every layer, no BOS",
        (
            Measured(
                "weights",
                "`weights --query 그것을`, every layer and head",
                _SEED,
                "eager `output_attentions`",
                "1e-4",
                None,
                "tests/acceptance/test_weights.py",
            ),
            Measured(
                "heads",
                "`heads --query 그것을 --key 사과를`",
                _SEED,
                "the scores summed by hand from eager rows",
                "1e-4",
                None,
                "tests/acceptance/test_heads.py",
            ),
            Measured(
                "generate",
                "`generate --chat`, 12 tokens",
                "`토마토는 과일인가요, 채소인가요?`",
                "transformers' `generate` (ids equal, greedy and sampled); eager over prompt + answer (rows)",
                "1e-4",
                None,
                "tests/acceptance/test_generate.py",
            ),
            Measured(
                "flow",
                "`flow`",
                "`민수는 사과를 샀다. 그는 그것을 먹었다. 민수가 먹은 것은`",
                "every part materialised from eager attention (completeness and importances)",
                "1e-4",
                None,
                "tests/acceptance/test_flow.py",
            ),
            Measured(
                "explain",
                "`explain --query 그것을 --layer 10 --head 3`",
                _SEED,
                "eager rows and o_proj's input",
                "1e-4",
                None,
                "tests/acceptance/test_explain.py",
            ),
            Measured(
                "mask",
                "`mask` (a real padded batch, left and right)",
                "the seed sentence and `사과를 샀다.`",
                "eager rows over the padded batch",
                "1e-4",
                None,
                "tests/acceptance/test_mask.py",
            ),
        ),
    ),
    Checkpoint(
        "gemma3_text",
        "Gemma 3 270M (`gemma-3-270m-q4_k_m.gguf`, from `fetch-gemma3.sh`)",
        "18 layers, 4 query heads sharing 1 KV head (head_dim 256), full attention at layers 5, 11, 17 "
        "and a 512-key sliding window elsewhere, q/k norms, a norm after each block, BOS prepended",
        tuple(
            Measured(key, command, prompt, against, bound, GEMMA_MEASURED.get(key), _G)
            for key, command, prompt, against, bound in (
                ("weights english", "`weights --query it`, every layer and head", _ENGLISH, _EAGER, "1e-4"),
                ("weights seed", "`weights --query 그것을`, every layer and head", _SEED, _EAGER, "1e-4"),
                ("weights long", "`weights`, every layer and head", _LONG, _EAGER, "1e-4"),
                (
                    "weights long, past the window",
                    "`weights`: the sliding layers' keys past the window",
                    _LONG,
                    f"{_EAGER} (both exactly 0)",
                    "0 (equal)",
                ),
                (
                    "ablate",
                    "`ablate --target . --layer 0,5,11,17`",
                    "`The cat sat on the mat`",
                    "a forward pre-hook zeroing the head's slice of o_proj's input, one head at a time",
                    "1e-4",
                ),
                (
                    "knockout",
                    "`knockout --query it --key cat --layers 3,4,5 --target .`",
                    _ENGLISH,
                    "eager attention with the query -> key entries of its additive mask set to -inf",
                    "1e-4",
                ),
                (
                    "patch",
                    "`patch --layer 5,17 --site head,resid,k,v --target .`",
                    _CAT,
                    "hooks copying the donor run's activation in (o_proj's input, the layer's input, k_proj/v_proj)",
                    "1e-4",
                ),
                (
                    "generate",
                    "`generate -n 4`",
                    _ENGLISH,
                    "the plain copy's greedy `generate` (ids equal); eager over prompt + answer (rows)",
                    "1e-4",
                ),
                (
                    "flow",
                    "`flow`: completeness (each layer's parts against its real output)",
                    _ENGLISH,
                    "the model's own forward; relative to the layer's largest activation (absolute: up to 2.0e-03)",
                    "1e-5 relative",
                ),
                (
                    "stats",
                    "`stats` (batches of 2, padded)",
                    "four prompts: English, the seed sentence, code, repeats",
                    "every statistic written out position by position from eager rows (means)",
                    "1e-5 + 1e-4 relative",
                ),
            )
        ),
    ),
)


def measured(model_type: str, key: str) -> Measured:
    """The comparison ``key`` written down for ``model_type``'s real checkpoint."""
    for checkpoint in REAL:
        if checkpoint.model_type == model_type:
            for m in checkpoint.measured:
                if m.key == key:
                    return m
    raise KeyError(f"docs/models.md lists no {key!r} for {model_type}")


def assert_measured(model_type: str, key: str, value: float) -> None:
    """A slow test's measured ``value`` agrees with the page: within a factor of 4 of the number
    written down (both below 1e-6 count as equal), so the page cannot drift from the tests.

    With ``ATTNSCOPE_RECORD_MEASURED=FILE`` the value is appended to FILE as a JSON line instead
    (how the numbers of :data:`REAL` are taken from a run)."""
    record = os.environ.get("ATTNSCOPE_RECORD_MEASURED")
    if record:
        with open(record, "a", encoding="utf-8") as f:
            f.write(json.dumps({"model_type": model_type, "key": key, "value": value}) + "\n")
        return
    written = measured(model_type, key).difference
    assert written is not None, f"docs/models.md records no number for {model_type} {key!r}"
    assert max(written, value) <= 4 * max(min(written, value), 1e-6), (
        f"docs/models.md says {written:.1e} for {model_type} {key!r}, the test measured {value:.1e}: "
        "update REAL in attnscope/devtools/models_doc.py and rerun "
        f"{COMMAND}"
    )


@dataclass(frozen=True)
class Family:
    """What the test measured on one family's tiny model."""

    model_type: str
    layer_kinds: list[str]
    sliding_window: int | None
    sink_logits: bool
    softcap: bool
    rows: float  # max |captured - eager| over every row (padded batch) and the CLI's --json rows
    generate: float  # max |generate's cached rows - eager over prompt + answer|
    bf16: float  # max |rows of the model in bfloat16 - eager rows in float32|
    completeness: float | None  # the norm measure's completeness max |difference|; None: refused
    commands: dict[str, str] = field(default_factory=dict)  # command -> "" (works) or its one-line refusal


def _kinds(f: Family) -> str:
    runs = []
    for kind in ("full", "sliding", "linear"):
        layers = [str(i) for i, k in enumerate(f.layer_kinds) if k == kind]
        if layers:
            label = f"sliding {f.sliding_window}" if kind == "sliding" else kind
            runs.append(f"{label}: {','.join(layers)}")
    return "; ".join(runs)


def _features(f: Family) -> str:
    out = []
    if f.softcap:
        out.append("soft-capping")
    if f.sink_logits:
        out.append("sink logits")
    return ", ".join(out) or "-"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.1e}"


def render(families: Sequence[Family]) -> str:
    """The page, from one run of the family tests."""
    commands = list(families[0].commands) if families else []
    lines = [
        "# Model families",
        "",
        "attnscope captures a model when its attention layers run through transformers' attention",
        "interface (the `attention_interface(self, query, key, value, mask, scaling=..., ...)` call in",
        "`modeling_*.py`); there is no list of supported names. This page holds two kinds of evidence:",
        "",
        "- **Real checkpoints** (Qwen2.5 and Gemma 3): the slow tier (`tests/acceptance`) runs every",
        "  command on them (the sweep) and compares the commands below against references outside",
        "  attnscope: the bound each test asserts and, where recorded, the largest difference measured.",
        "- **Tiny random configs only** (every family below, Qwen2.5 and Gemma 3 included): built from",
        "  transformers' own config class, checked by the fast tier. A tiny config carries a test",
        "  tokenizer and a config written by hand, so a real checkpoint of such a family may still meet",
        "  something the tiny one does not have.",
        "",
        "Generated by `tests/integration/test_families.py` "
        f"(`{COMMAND}`); a test fails when this page and a run disagree. The real checkpoints' numbers",
        "live in `REAL` in `attnscope/devtools/models_doc.py`, and each slow test that measures one",
        "fails when it differs from the page by more than a factor of 4.",
        "",
        "## Verified on a real checkpoint",
        "",
    ]
    for checkpoint in REAL:
        lines += [f"### {checkpoint.name}", "", checkpoint.shape + ".", ""]
        if checkpoint.measured:
            lines += [
                "| command | prompt | against | test fails above | largest difference measured | test |",
                "|---|---|---|---|---|---|",
            ]
            lines += [
                f"| {m.command} | {m.prompt} | {m.against} | {m.bound} | {_num(m.difference)} | `{m.test}` |"
                for m in checkpoint.measured
            ]
            lines.append("")
    lines += [
        "Every command on both checkpoints over six prompts (Korean, English, code, emoji, one",
        "character, 600 tokens), with what each said: [the sweep](sweep.md).",
        "",
        "## Verified on tiny configs only",
        "",
        "Each family below is a **tiny random config** built from transformers' own config class",
        "(4 layers, 4 query heads sharing 2 KV heads, head_dim 8, fp32, a sliding window of 4 keys where",
        "the family has one).",
        "",
        "### Largest differences from eager attention",
        "",
        "`rows`: every row of every layer and head of a left-padded batch, and `weights --layer all",
        "--head all --json`, against eager `output_attentions`. `generate`: the rows captured in the",
        "cached decode steps, against eager over prompt + answer. `norm`: the `--measure norm`",
        "completeness check (`sum_h sum_j alpha_ij f_h(x_j) + b_O` against the model's own `o_proj`).",
        "`bf16`: the same rows with the model loaded in bfloat16 (q and k in bf16, the softmax still in",
        "fp32), against the float32 eager rows: what `--dtype bfloat16`, or `--dtype auto` on a machine",
        "where float32 does not fit, costs. The tiny models' q/k are widened 8x so that rows are peaked;",
        "this is a worst case for bf16 rounding of q.k, not a measurement on a trained checkpoint.",
        "",
        "| model_type | attention per layer | softmax extras | rows | generate | norm | bf16 |",
        "|---|---|---|---|---|---|---|",
    ]
    for f in families:
        lines.append(
            f"| {f.model_type} | {_kinds(f)} | {_features(f)} | {_num(f.rows)} | {_num(f.generate)} "
            f"| {_num(f.completeness)} | {_num(f.bf16)} |"
        )
    lines += [
        "",
        "Linear-attention layers (`qwen3_next`, `qwen3_5_text`) have no attention weights: attnscope",
        "captures the full-attention layers, names the others in every view's header and in the JSON",
        "(`model.layer_kinds`), and refuses a `--layer` that selects only linear layers. Learned sink",
        "logits (`gpt_oss`) are an extra softmax column that is no key: the rows sum to 1 minus the",
        "sink's share, which `weights` reports (`learned_sink`).",
        "",
        "### What each command does on each family",
        "",
        "`yes`: the command ran on the family's folder. Otherwise the numbered refusal below, one line",
        "on stderr and a non-zero exit.",
        "",
        "| model_type | " + " | ".join(f"`{c}`" for c in commands) + " |",
        "|---|" + "---|" * len(commands),
    ]
    reasons: list[str] = []
    for f in families:
        cells = []
        for c in commands:
            said = f.commands.get(c, "")
            if not said:
                cells.append("yes")
                continue
            if said not in reasons:
                reasons.append(said)
            cells.append(f"no ({reasons.index(said) + 1})")
        lines.append(f"| {f.model_type} | " + " | ".join(cells) + " |")
    lines += ["", "Refusals:", ""]
    lines += [f"{i}. `{reason}`" for i, reason in enumerate(reasons, 1)]
    return "\n".join(lines) + "\n"


_NUMBER = re.compile(r"\d\.\de[-+]\d\d")


def check(text: str, families: Sequence[Family]) -> None:
    """Raise AssertionError when ``text`` (the committed page) and this run disagree."""
    fresh = render(families)
    assert _NUMBER.sub("N", text) == _NUMBER.sub("N", fresh), f"docs/models.md is out of date; run {COMMAND}"
    for old, new in zip(_NUMBER.findall(text), _NUMBER.findall(fresh), strict=True):
        a, b = float(old), float(new)
        assert max(a, b) <= 4 * max(min(a, b), 1e-6), f"docs/models.md says {old}, this run measured {new}"
