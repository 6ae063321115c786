"""``attnscope generate``: the model answers through its KV cache; each new token's attention
rows are kept from the same cached step. Ctrl-C prints the answer so far on stderr, exit 130."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from attnscope.cli.command import command
from attnscope.cli.inputs import read_messages, read_prompt
from attnscope.cli.options import ArrayOutput, Chat, HeadOpt, LayerOpt, MessagesOpt, Model, SeedOpt
from attnscope.cli.terminal import Terminal

INTERRUPTED = 130  # 128 + SIGINT, as a shell reports it


@command
def generate_cmd(
    prompt: Annotated[
        str | None, typer.Argument(help="The prompt text, or - to read it from stdin. Optional with --messages.")
    ] = None,
    *,
    messages: MessagesOpt = None,
    max_new_tokens: Annotated[int, typer.Option("--max-new-tokens", "-n", help="Most new tokens to generate.")] = 20,
    temperature: Annotated[
        float | None, typer.Option("--temperature", help="Sample at this temperature. Default: greedy.")
    ] = None,
    seed: SeedOpt = None,
    layer: LayerOpt = "all",
    head: HeadOpt = "all",
    steps: Annotated[
        str | None,
        typer.Option(
            "--steps", help="Answer tokens to detail in the view, from 0: 3, 0-4,10 or all. Default: the first 20."
        ),
    ] = None,
    model: Model,
    chat: Chat,
    out: ArrayOutput,
    terminal: Terminal,
) -> None:
    """Generate an answer with the KV cache; show where each new token looked (captured in the same step)."""
    # Everything that needs no weights is checked before torch is imported.
    from attnscope.cli.parse import chat_spec, parse_indices, parse_steps
    from attnscope.core.prompt.precheck import check_settings
    from attnscope.core.prompt.spec import Selection
    from attnscope.errors import AttnscopeError
    from attnscope.render.i18n import t

    check_settings(max_new_tokens, temperature, seed)
    detail = parse_steps(steps)
    selection = Selection(layers=parse_indices(layer, "layer"), heads=parse_indices(head, "head"))
    chosen = read_messages(messages)
    text = read_prompt(prompt) if prompt is not None else None
    if text is None and chosen is None:
        raise AttnscopeError("give_prompt")
    spec = chat_spec(chat.chat, chat.system, chosen)
    done: list[int] = []
    try:
        loaded = model.load(selection=selection)  # the model path and the selection, from the config
    except KeyboardInterrupt:
        terminal.line(f"attnscope: {t(terminal.lang, 'progress.interrupted_before')}")
        raise typer.Exit(INTERRUPTED) from None
    from attnscope.core.generate import Interrupted, generate

    try:

        def on_token(ids: list[int]) -> None:
            done[:] = ids
            terminal.progress(t(terminal.lang, "progress.generating", n=len(ids), total=max_new_tokens))

        result = generate(
            loaded,
            text,
            chat=spec,
            max_new_tokens=max_new_tokens,
            temperature=temperature,
            seed=seed,
            selection=selection,
            steps=detail,
            on_token=on_token,
        )
    except Interrupted as exc:
        answer = loaded.tokenizer.decode(exc.ids)
        terminal.line(f"attnscope: {t(terminal.lang, 'progress.interrupted_after', n=len(exc.ids))}")
        sys.stderr.write(answer + "\n")
        sys.stderr.flush()
        raise typer.Exit(INTERRUPTED) from None
    except KeyboardInterrupt:
        terminal.line(f"attnscope: {t(terminal.lang, 'progress.interrupted_before')}")
        raise typer.Exit(INTERRUPTED) from None
    out.emit(result)
