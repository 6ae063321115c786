"""The one table from the library's argument names to the CLI's flags.

The core names the argument at fault (``AttnscopeError("pos_range", arg="pos", ...)``); the CLI
words the same error with the flag a user typed (``--pos``). Every argument name an error can
carry is a row here (``tests/unit/test_error_kinds.py`` checks it); a name that is not an
argument (``ATTNSCOPE_LANG``) is written as it is.
"""

from __future__ import annotations

from attnscope.errors import AttnscopeError

FLAGS: dict[str, str] = {
    "address": "--address",
    "agg": "--agg",
    "align": "--align",
    "arrays": "--arrays",
    "batch": "--batch",
    "batch_size": "--batch-size",
    "bootstrap": "--bootstrap",
    "by": "--by",
    "chat": "--chat",
    "check": "--check",
    "checkpoint": "--checkpoint",
    "compare_pos": "--compare-pos",
    "deltas": "--deltas",
    "device": "--device",
    "direction": "--direction",
    "device_map": "--device-map",
    "dims": "--dims",
    "dtype": "--dtype",
    "engine": "--engine",
    "evaluate": "--evaluate",
    "field": "--field",
    "foil": "--foil",
    "foil_id": "--foil-id",
    "graph": "--graph",
    "head": "--head",
    "heads": "--heads",
    "input": "--input",
    "input_format": "--input-format",
    "key": "--key",
    "key_occurrence": "--key-occurrence",
    "lang": "--lang",
    "layer": "--layer",
    "layers": "--layers",
    "length": "--length",
    "limit": "--limit",
    "max_new_tokens": "--max-new-tokens",
    "max_size": "--max-size",
    "max_tokens": "--max-tokens",
    "measure": "--measure",
    "mean_over": "--mean-over",
    "messages": "--messages",
    "method": "--method",
    "mode": "--mode",
    "model": "--model",
    "n": "--n",
    "no_sink": "--no-sink",
    "occurrence": "--occurrence",
    "pad": "--pad",
    "padding_side": "--padding-side",
    "pairs": "--pairs",
    "pos": "--pos",
    "position": "--pos",
    "query": "--query",
    "query_agg": "--query-agg",
    "repeat": "--repeat",
    "resume": "--resume",
    "retries": "--retries",
    "revision": "--revision",
    "seed": "--seed",
    "shard_size": "--shard-size",
    "side": "--side",
    "site": "--site",
    "sites": "--site",
    "size": "--size",
    "steps": "--steps",
    "strict": "--strict",
    "system": "--system",
    "table": "--table",
    "target": "--target",
    "target_id": "--target-id",
    "task": "TASK",
    "temperature": "--temperature",
    "threshold": "--threshold",
    "top": "--top",
    "verify_top": "--verify",
    "window": "--window",
    "workers": "--workers",
}


def flag(name: str) -> str:
    """The flag of the argument ``name`` (``key_occurrence`` -> ``--key-occurrence``); a name the
    table does not hold is written as it is."""
    return FLAGS.get(name, name)


def cli_text(error: AttnscopeError, lang: str = "en") -> str:
    """``error`` as the CLI words it: in ``lang``, every argument written as its flag."""
    from attnscope.render.i18n import error_text

    return error_text(lang, error, flag)  # type: ignore[arg-type]
