"""``attnscope circuit``: the edges that carry a behaviour over prompt pairs, scored and checked by faithfulness."""

from __future__ import annotations

from typing import Annotated, Any, cast

import typer

from attnscope.cli.command import command
from attnscope.cli.options import BatchOpt, Model, Output


@command
def circuit_cmd(
    pairs: Annotated[
        str,
        typer.Option(
            "--pairs",
            help='JSONL, one pair a line: {"clean", "corrupt", "target", "foil"} (attnscope pairs writes one).',
        ),
    ],
    method: Annotated[str, typer.Option("--method", help="eap-ig|eap|ifr|random: how edges are scored.")] = "eap-ig",
    compare: Annotated[
        str | None,
        typer.Option(
            "--compare", help="A comma list of methods, side by side on the same pairs (e.g. eap,eap-ig,ifr,random)."
        ),
    ] = None,
    graph: Annotated[
        str,
        typer.Option(
            "--graph", help="gqa|mib: K and V inputs per KV head (the model as it computes) or per query head."
        ),
    ] = "gqa",
    steps: Annotated[
        int, typer.Option("--steps", help="eap-ig: interpolation steps between corrupt and clean inputs.")
    ] = 5,
    check: Annotated[
        int,
        typer.Option("--check", help="Patch the top K edges exactly, one at a time, and compare with the estimate."),
    ] = 20,
    evaluate: Annotated[
        str | None,
        typer.Option("--evaluate", help='A circuit file {"edges": [{from, to, input}]}: patch exactly these edges.'),
    ] = None,
    bootstrap: Annotated[
        int, typer.Option("--bootstrap", help="Bootstrap replicates over pairs for the intervals.")
    ] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of random's scores and of the bootstrap.")] = 0,
    limit: Annotated[int | None, typer.Option("--limit", help="Use only the first N usable pairs.")] = None,
    batch: BatchOpt = 8,
    *,
    model: Model,
    out: Output,
) -> None:
    """Score every edge of the model's graph over clean/corrupt prompt pairs (EAP, EAP-IG, IFR or
    random) and measure how much of the behaviour the top edges keep when everything else is patched."""
    from attnscope.core.causal.circuit import CircuitConfig, check_config
    from attnscope.results.circuit import Method
    from attnscope.results.graph import GraphKind

    if compare is not None:
        methods = [m.strip() for m in compare.split(",") if m.strip()]
    else:
        methods = [] if evaluate is not None else [method]
    config = CircuitConfig(
        methods=tuple(cast(Method, m) for m in methods),
        graph=cast(GraphKind, graph),
        steps=steps,
        batch_size=batch,
        bootstrap=bootstrap,
        seed=seed,
        check=check if methods else 0,
        limit=limit,
        evaluate=evaluate,
    )
    check_config(config)

    def readable(tokenizer: Any) -> None:
        from attnscope.core.causal.pairs import read_pairs

        read_pairs(pairs, tokenizer, 1)

    loaded = model.load(tokenizer_checks=[readable])
    from attnscope.core.causal.circuit import circuit

    out.emit(circuit(loaded, pairs, config=config))
