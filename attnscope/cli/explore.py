"""``attnscope explore``: one self-contained HTML page to click around a prompt's attention."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer

from attnscope.cli.command import command
from attnscope.cli.inputs import read_prompt
from attnscope.cli.options import Answer, Chat, KeyOpt, Model, PosOpt, PromptArg
from attnscope.cli.terminal import Terminal, warning_line

if TYPE_CHECKING:
    from attnscope.core.prompt.spec import QuerySpec


@command
def explore_cmd(
    prompt: PromptArg,
    output: Annotated[str, typer.Option("--output", "-o", help="The HTML file to write (one file, no network).")],
    query: Annotated[
        list[str] | None,
        typer.Option(
            "--query",
            "-q",
            help="Text in the prompt: its last token is a query (several allowed; the first one opens the page).",
        ),
    ] = None,
    pos: PosOpt = None,
    key: KeyOpt = None,
    lang: Annotated[
        str | None,
        typer.Option(
            "--lang", help="Language the page opens in: en|ko (it can switch). Default: $ATTNSCOPE_LANG, else en."
        ),
    ] = None,
    *,
    answer: Answer,
    model: Model,
    chat: Chat,
    terminal: Terminal,
) -> None:
    """Write one HTML page (inline script, embedded data, no network): click a token to make it the query,
    pick a head, a layer or all of them, see the chart, the layers x heads grid and the causal matrix."""
    from attnscope.cli.parse import chat_spec, parse_positions
    from attnscope.core.explore import explore
    from attnscope.errors import AttnscopeError
    from attnscope.render import check_output, write_atomic
    from attnscope.render.explore import page
    from attnscope.render.i18n import check_lang, default_lang, t

    text = read_prompt(prompt)
    check_output(output)  # before the model loads: a bad path costs nothing
    page_lang = check_lang(lang, "lang") if lang else default_lang()
    spec = chat_spec(chat.chat, chat.system, None)
    positions = parse_positions(pos) if pos else []
    asked: list[QuerySpec] = [*(query or [])]  # the texts, then the positions
    with_target = answer.target is not None or answer.target_id is not None
    if not with_target and (answer.foil is not None or answer.foil_id is not None):
        raise AttnscopeError("needs", arg="foil", other="target")
    if with_target:
        answer.refuse_early()

    def pos_queries(tokenizer: Any) -> list[int]:
        """The --pos queries: single positions as given, in their order (the first opens the page); a
        range or ``all`` needs the prompt's length, so it is resolved once the prompt is tokenized."""
        if positions is not None and all(isinstance(p, int) for p in positions):
            return [p for p in positions if isinstance(p, int)]
        from attnscope.core.prompt.targets import positions as resolve_positions
        from attnscope.core.prompt.tokens import encode_prompt

        return resolve_positions(positions, len(encode_prompt(tokenizer, text, spec).ids))

    checks: list[Callable[[Any], object]] = [answer.check] if with_target else []
    loaded = model.load(tokenizer_checks=[*checks, pos_queries])
    asked += pos_queries(loaded.tokenizer)
    data = explore(
        loaded,
        text,
        queries=asked,
        key=key,
        chat=spec,
    )
    if with_target:  # the page composes ablate's result; explore itself runs no other analysis
        from attnscope.core.causal.ablate import ablate
        from attnscope.core.explore import with_effects

        data = with_effects(data, ablate(loaded, text, answer=answer.answer(), chat=spec))
    for warning in data.warnings:
        terminal.line(f"attnscope: {warning_line(warning, page_lang)}")
    html = page(data, page_lang)
    write_atomic(output, html)
    size = f"{len(html.encode('utf-8')) / 1e6:.1f} MB"
    terminal.line(f"attnscope: {t(page_lang, 'explore.wrote', path=output, size=size)}")
