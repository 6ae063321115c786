"""``attnscope ablate``: the exact change in the answer when each head's output is removed.

Checked before the weights load: the options, the layers and heads against the config,
--key against the prompt, then, with the tokenizer alone, that the target and foil are
single tokens, that --pos fits the prompt and that a mean has more than one position.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, cast

import typer

from attnscope.cli.command import command
from attnscope.cli.inputs import read_lines, read_prompt
from attnscope.cli.options import (
    Answer,
    ArrayOutput,
    BatchOpt,
    Chat,
    HeadOpt,
    KeyOccurrenceOpt,
    KeyOpt,
    LayerOpt,
    Model,
    PosOpt,
    PromptArg,
)


@command
def ablate_cmd(
    prompt: PromptArg,
    layer: LayerOpt = "all",
    head: HeadOpt = "all",
    mode: Annotated[
        str, typer.Option("--mode", help="zero|mean: a head's output set to 0, or to its mean over positions.")
    ] = "zero",
    pos: PosOpt = None,
    key: KeyOpt = None,
    key_occurrence: KeyOccurrenceOpt = None,
    mean_over: Annotated[
        str | None,
        typer.Option("--mean-over", help="--mode mean: take the means over these prompts (a file, one per line)."),
    ] = None,
    approx: Annotated[
        bool,
        typer.Option("--approx", help="First-order estimates for every head (one forward and one backward)."),
    ] = False,
    check: Annotated[int, typer.Option("--check", help="--approx: heads ablated exactly, from the top.")] = 10,
    batch: BatchOpt = 48,
    *,
    answer: Answer,
    model: Model,
    chat: Chat,
    out: ArrayOutput,
) -> None:
    """Remove each head's output and report the exact change in log P(target) (or target - foil)."""
    from attnscope.cli.parse import chat_spec, parse_indices, parse_positions
    from attnscope.core.prompt.params import check_ablate
    from attnscope.core.prompt.spec import Prompts, Selection, Text
    from attnscope.errors import AttnscopeError
    from attnscope.results.ablate import Mode

    text = read_prompt(prompt)
    check_ablate(mode, check, batch, mean_over=mean_over is not None)
    how = cast(Mode, mode)
    answer.refuse_early()
    if key_occurrence is not None and key is None:
        raise AttnscopeError("needs", arg="key_occurrence", other="key")
    others = read_lines(mean_over, "mean_over") if mean_over is not None else None
    selection = Selection(layers=parse_indices(layer, "layer"), heads=parse_indices(head, "head"))
    positions = parse_positions(pos)
    spec = chat_spec(chat.chat, chat.system, None)

    def prompt_checks(tokenizer: Any) -> None:
        from attnscope.core.prompt.targets import check_mean
        from attnscope.core.prompt.targets import positions as resolve_positions
        from attnscope.core.prompt.tokens import encode_prompt

        n = len(encode_prompt(tokenizer, text, spec).ids)
        check_mean(how, n, others)
        resolve_positions(positions, n)

    find: list[tuple[Literal["query", "key"], str | None, int | None]] = [("key", key, key_occurrence)]
    loaded = model.load(
        selection=selection,
        prompts=[text],
        find=find,
        chat=chat,
        tokenizer_checks=[answer.check, prompt_checks],
    )
    from attnscope.core.causal.ablate import ablate

    result = ablate(
        loaded,
        text,
        answer=answer.answer(),
        selection=selection,
        mode=how,
        positions=positions,
        key=None if key is None else Text(key, key_occurrence),
        mean_over=None if others is None else Prompts(others, source=mean_over),
        approx=approx,
        check=check,
        batch_size=batch,
        chat=spec,
    )
    out.emit(result)
