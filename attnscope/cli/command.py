"""The one decorator every command function wears: its options, its terminal, its errors.

``@command`` turns a function into what Typer registers (``cli/__init__`` registers it under
its name in ``attnscope.commands``):

- each parameter annotated with an option group (``options.Model``, ``options.Output``, ...)
  becomes that group's options in the signature Typer reads, and the function receives one
  instance of the group;
- a parameter annotated ``Terminal`` receives the run's terminal, the same one the groups hold
  (its stderr lines are worded in the run's --lang);
- an option given an empty value (``--layer ""``) is refused before anything else runs;
- every failure becomes one stderr line and an exit status (``exits.run_mapped``).
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import typer

from attnscope.cli.exits import run_mapped
from attnscope.cli.options import Language, OptionGroup, Output
from attnscope.cli.terminal import Terminal
from attnscope.errors import AttnscopeError

F = TypeVar("F", bound=Callable[..., Any])


def command(fn: F) -> F:
    """``fn`` with its option groups expanded, its terminal given and its errors mapped."""
    params, groups, terminal_param = _signature(fn)
    flags = {p.name: flag for p in params if (flag := option_flag(p.annotation)) is not None}
    has_output = any(issubclass(group, (Output, Language)) for group, _ in groups.values())

    @functools.wraps(fn)
    def wrapper(**kwargs: Any) -> Any:
        terminal = Terminal(kwargs.get("lang") if has_output else None)

        def call() -> Any:
            refuse_empty(kwargs, flags)
            for name, (group, fields) in groups.items():
                kwargs[name] = group(**{field: kwargs.pop(field) for field in fields}, terminal=terminal)
            if terminal_param is not None:
                kwargs[terminal_param] = terminal
            return fn(**kwargs)

        return run_mapped(terminal, call)

    wrapper.__signature__ = inspect.Signature(params, return_annotation=None)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    return wrapper  # type: ignore[return-value]


Groups = dict[str, tuple[type[OptionGroup], list[str]]]


def _signature(fn: Callable[..., Any]) -> tuple[list[inspect.Parameter], Groups, str | None]:
    """The parameters Typer reads (each group's options in place of the group), the groups by
    parameter name with their option names, and the parameter that takes the terminal."""
    hints = typing.get_type_hints(fn, include_extras=True)
    params: list[inspect.Parameter] = []
    groups: Groups = {}
    terminal_param: str | None = None
    keyword = inspect.Parameter.KEYWORD_ONLY
    for param in inspect.signature(fn).parameters.values():
        annotation = hints.get(param.name, param.annotation)
        if annotation is Terminal:
            terminal_param = param.name
        elif isinstance(annotation, type) and issubclass(annotation, OptionGroup):
            field_hints = typing.get_type_hints(annotation, include_extras=True)
            fields = annotation.options()
            params += [
                inspect.Parameter(f.name, keyword, default=f.default, annotation=field_hints[f.name]) for f in fields
            ]
            groups[param.name] = (annotation, [f.name for f in fields])
        else:
            params.append(param.replace(kind=keyword, annotation=annotation))
    names = [p.name for p in params]
    clash = sorted({n for n in names if names.count(n) > 1})
    if clash:
        raise TypeError(f"{fn.__qualname__}: option names given twice: {', '.join(clash)}")
    return params, groups, terminal_param


def option_flag(annotation: Any) -> str | None:
    """The long flag (``--layer``) of a parameter annotated with a ``typer.Option``, else None."""
    if typing.get_origin(annotation) is not Annotated:
        return None
    for meta in typing.get_args(annotation)[1:]:
        if isinstance(meta, typer.models.OptionInfo):
            decls = [meta.default, *(meta.param_decls or ())]
            return next((d for d in decls if isinstance(d, str) and d.startswith("--")), None)
    return None


def refuse_empty(values: dict[str, Any], flags: dict[str, str]) -> None:
    """Raise for the first option whose value (or one of whose values) is empty or only spaces."""
    for name, flag in flags.items():
        value = values.get(name)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and not item.strip():
                raise AttnscopeError("is_empty", arg=flag)
