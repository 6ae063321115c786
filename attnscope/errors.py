"""The one error type a user can cause, its kinds' exit codes, and the exit codes the CLI returns.

Every module raises :class:`AttnscopeError` for bad input (a prompt, an option, a model that
cannot be loaded) as a *kind* with its values: ``AttnscopeError("index_range_layers",
arg="layer", value=99, n=24, last=23, neg=24)``. The words are not here: each kind is the key
``errors.msg.KIND`` of the message catalogues (``render/messages/en.py`` and ``ko.py``), which
word it in English and in Korean. ``str(exc)`` is the English line, filled by the wording that
``attnscope/__init__.py`` registers here (:func:`set_wording`); the CLI words the same kind in
the reader's language and writes an argument's name as its flag.

Values named in :data:`ARGUMENTS` hold the core's names of arguments (``"layer"``,
``"key_occurrence"``, or a tuple of them); the CLI maps them to flags through its one table
(``cli/flags.py``). A value that is itself an ``AttnscopeError`` (``line 3: ...``) is worded
too. Nothing here prints or words anything.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import IntEnum
from typing import Any


class ExitCode(IntEnum):
    OK = 0
    USAGE = 2  # bad option values, bad prompt, bad query (typer also uses 2)
    MODEL = 3  # model cannot be found, loaded or captured
    RESOURCE = 4  # not enough memory, device missing
    NUMERIC = 5  # NaN or inf in captured numbers, a failed self-check
    INPUT_FILE = 6  # a batch input or a render file is malformed


# The values that name an argument of the library (the CLI writes them as flags).
ARGUMENTS = ("arg", "other", "args")

_M, _R, _N, _F = ExitCode.MODEL, ExitCode.RESOURCE, ExitCode.NUMERIC, ExitCode.INPUT_FILE

# The exit code of every kind that does not exit with USAGE (2). A kind that wraps another error
# (a value that is an AttnscopeError, as ``line`` does) and is not listed here exits with that
# error's code.
CODES: dict[str, ExitCode] = {
    **dict.fromkeys(
        (
            "no_such_path",
            "not_gguf",
            "no_config",
            "no_tokenizer_files",
            "no_tokenizer",
            "not_causal",
            "not_interface",
            "not_interface_gguf",
            "all_linear",
            "gated_heads",
            "circuit_layout",
            "circuit_layer_kind",
            "circuit_mib_scoring",
            "config_not_json",
            "config_unreadable",
            "config_not_object",
            "config_missing",
            "cannot_load_damaged",
            "cannot_load_shapes",
            "cannot_load",
            "gguf_unreadable_model",
            "gguf_unreadable",
            "gguf_metadata",
            "gguf_twice",
            "gguf_config",
            "heads_multiple",
            "hub_revision",
            "hub_missing",
            "hub_offline",
            "hub_unreachable",
            "capture_no_layer_idx",
            "capture_softmax",
            "capture_no_o_proj",
            "capture_gated",
            "capture_heads_range",
            "capture_not_transformers",
            "capture_routing",
            "capture_no_interface",
            "capture_never_called",
            "linear_needs_all",
            "no_final_norm",
            "no_lm_head",
            "no_decoder_layers",
            "no_proj",
            "hidden_states",
            "offsets_misaligned",
            "causal_layerwise",
            "causal_logits",
            "flow_layout",
            "flow_verify_model",
            "flow_split",
            "rope_recompute",
            "rope_theta",
            "rope_no_rotary",
            "rope_inputs",
            "explain_softmax",
            "mask_no_self_attn",
            "mask_no_eager",
            "mask_layers",
            "reuse_no_cache",
            "stats_layers",
            "stats_hidden",
            "hook_no_gradient",
            "hook_missing",
        ),
        _M,
    ),
    **dict.fromkeys(
        (
            "no_cuda",
            "no_mps",
            "memory_rows",
            "memory_rows_batch",
            "memory_matrix",
            "flow_memory",
            "stats_address_unreachable",
            "stats_ray_start",
            "stats_ray_worker",
        ),
        _R,
    ),
    **dict.fromkeys(("nan", "nan_other"), _N),
    **dict.fromkeys(
        (
            "messages_utf8",
            "messages_json",
            "messages_list",
            "messages_item",
            "messages_extra",
            "messages_role",
            "messages_content",
            "messages_none",
            "messages_empty",
            "input_empty",
            "line_prompt",
            "line_json",
            "line_utf8",
            "line_int",
            "line_keys",
            "line_string",
            "stats_line_object",
            "line_needs",
            "file_missing",
            "file_is_folder",
            "file_unreadable",
            "file_empty",
            "file_utf8",
            "file_jsonl",
            "file_json_cut",
            "file_json",
            "file_not_result",
            "tui_resume_format",
            "tui_resume_read",
            "file_edited",
            "file_fields",
            "no_schema",
            "unknown_schema",
            "missing_field",
            "expected",
            "expected_list",
            "os_missing",
            "os_error",
            "prompts_none",
            "stats_input_folder",
            "stats_strict",
            "stats_no_usable",
            "circuit_no_pairs",
            "circuit_file_json",
            "circuit_file_edges",
            "circuit_file_empty",
            "circuit_file_edge",
            "circuit_edge_unknown",
            "arrays_missing",
            "arrays_key",
            "arrays_shape",
            "arrays_unreadable",
            "arrays_no_document",
            "arrays_header",
            "arrays_header_fields",
            "arrays_not_json",
            "arrays_no_array",
        ),
        _F,
    ),
}

Wording = Callable[["AttnscopeError"], str]
_wording: list[Wording] = []  # the English wording, registered by attnscope/__init__.py


def set_wording(wording: Wording) -> None:
    """Register how ``str(exc)`` words an error (the English catalogue, looked up on demand)."""
    _wording[:] = [wording]


class AttnscopeError(Exception):
    """A user-facing error: a kind with values, printed as one line, with ``code`` as exit status."""

    def __init__(self, kind: str, /, *, cause: AttnscopeError | None = None, **values: Any) -> None:
        super().__init__(kind, values)
        self.kind = kind
        self.values = values
        self.cause = cause  # an error this one counts or reports, whose exit code it takes

    @property
    def code(self) -> ExitCode:
        """The kind's exit code (a wrapping kind's is the wrapped error's)."""
        if self.kind in CODES:
            return CODES[self.kind]
        if self.cause is not None:
            return self.cause.code
        for value in self.values.values():
            if isinstance(value, AttnscopeError):
                return value.code
        return ExitCode.USAGE

    @property
    def message(self) -> str:
        """The English line, with the library's argument names (``layer 99 is out of range ...``)."""
        return str(self)

    def __str__(self) -> str:
        if _wording:
            return _wording[0](self)
        return f"{self.kind} {self.values}"  # pragma: no cover - attnscope/__init__.py registers the wording


def os_error(arg: str, path: object, exc: OSError) -> AttnscopeError:
    """A file named by the argument ``arg`` could not be opened: missing, or the system's reason."""
    if isinstance(exc, FileNotFoundError):
        return AttnscopeError("os_missing", arg=arg, path=path)
    return AttnscopeError("os_error", arg=arg, path=path, why=exc.strerror)


def encoded(error: AttnscopeError) -> str:
    """``error`` as one JSON string (its kind and values), for a record kept as text: stats keeps a
    skipped line's reason so in its checkpoint shards and across Ray."""
    import json

    return json.dumps({"kind": error.kind, "values": error.values}, ensure_ascii=False, default=str)


def decoded(text: str) -> AttnscopeError | None:
    """The error :func:`encoded` wrote; None for any other text (an older record in English)."""
    import json

    try:
        doc = json.loads(text)
    except ValueError:
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("kind"), str) or not isinstance(doc.get("values"), dict):
        return None
    return AttnscopeError(doc["kind"], **doc["values"])
