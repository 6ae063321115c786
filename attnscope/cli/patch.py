"""``attnscope patch``: activation patching between a clean and a corrupt prompt."""

from __future__ import annotations

from typing import Annotated, Any, cast, get_args

import typer

from attnscope.cli.command import command
from attnscope.cli.options import Answer, ArrayOutput, BatchOpt, LayerOpt, Model


@command
def patch_cmd(
    clean: Annotated[str, typer.Option("--clean", help="The prompt whose answer is right.")],
    corrupt: Annotated[str, typer.Option("--corrupt", help="The same prompt with one part changed.")],
    direction: Annotated[
        str,
        typer.Option("--direction", help="denoise|noise: clean into corrupt (sufficiency), or corrupt into clean."),
    ] = "denoise",
    site: Annotated[
        str, typer.Option("--site", help="head|resid|k|v, or a comma list: what is patched. Default: head,resid.")
    ] = "head,resid",
    align: Annotated[
        bool,
        typer.Option(
            "--align", help="Prompts of different lengths: pair positions from the end (last token with last token)."
        ),
    ] = False,
    layer: LayerOpt = "all",
    batch: BatchOpt = 48,
    *,
    answer: Answer,
    model: Model,
    out: ArrayOutput,
) -> None:
    """Patch each head's output (or K/V head, or residual position) from one run into the other."""
    from attnscope.cli.parse import parse_indices, parse_sites
    from attnscope.core.prompt.params import PATCH_PARAMS, validate
    from attnscope.core.prompt.spec import Selection, one_of
    from attnscope.results.patch import Direction, Site

    validate(PATCH_PARAMS, direction=direction, batch_size=batch)
    how = cast(Direction, direction)
    sites = parse_sites(site)
    answer.refuse_early()
    selection = Selection(layers=parse_indices(layer, "layer"))

    def lengths(tokenizer: Any) -> None:
        from attnscope.core.prompt.targets import check_lengths
        from attnscope.core.prompt.tokens import encode

        check_lengths(encode(tokenizer, clean).ids, encode(tokenizer, corrupt).ids, align)

    loaded = model.load(selection=selection, tokenizer_checks=[answer.check, lengths])
    from attnscope.core.causal.patch import patch

    site_list: list[Site] = [one_of(s, get_args(Site), "site") for s in sites]
    result = patch(
        loaded,
        clean,
        corrupt,
        answer=answer.answer(),
        direction=how,
        sites=site_list,
        selection=selection,
        align=align,
        batch_size=batch,
    )
    out.emit(result)
