"""What ``attnscope tui`` holds of one prompt, and the results it builds from it; no Textual here.

A :class:`Session` holds the prompt's tokens and every captured query row: for a prompt of up
to ``FULL`` tokens every layer's rows of every query come from one forward (``capture``), packed
per (layer, head) as the rows of queries 0, 1, ... in turn; beyond that a query's rows are
captured when it is first shown (``capture_query``). Each number the app shows comes from an
analysis of the library or from ``results.derive``: the table from :func:`derive.head_rows` and
``roles``' scores, the charts from ``core.weights``' ``weights_result``, the heat grid from
``core.matrix``'s ``matrix_result``, the ablation column from ``ablate``, generation from
``core.generate``'s decode loop. With the model, :func:`exported` runs the matching command's
analysis again, so the file is that command's JSON; without it (``--resume``) the result is built
from the rows held. ``save``/``load`` write and read the session as one ``.npz`` file (arrays,
plus the JSON of the rest). This module does not draw and does not print.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from attnscope.errors import AttnscopeError
from attnscope.results import Result, _from_plain, _to_plain
from attnscope.results.common import Metric, ModelInfo, Query, Token, Word
from attnscope.results.derive import F32, HeadRows, head_rows, shares
from attnscope.results.roles import RoleScores

if TYPE_CHECKING:
    from attnscope.core.prompt.spec import ChatSpec
    from attnscope.core.prompt.tokens import Encoded
    from attnscope.model import Loaded

FULL = 512  # tokens: up to this many, every query's rows come from the first forward
FORMAT = "attnscope.tui-session/1"
Measure = Literal["weight", "norm"]


@dataclass
class Session:
    """One prompt as the app holds it. ``rows[q]`` is query ``q``'s (L, H, q + 1) fp32 rows, present
    once captured; ``norms`` (L, H, T) the value norms ``||f_h(x_j)||`` once asked for; ``roles`` the
    role scores of the prompt (when its every row came from one forward); ``effects`` [layer][head]
    ``ablate``'s exact effects on ``metric``. ``prompt_len`` tokens are the prompt's, the rest were
    generated."""

    info: ModelInfo
    text: str | None  # the prompt as given (before any chat template; None: the last turn of --messages)
    enc: Encoded
    prompt_len: int
    rows: dict[int, F32] = field(default_factory=dict)
    norms: F32 | None = None
    completeness: float | None = None
    roles: RoleScores | None = None
    effects: list[list[float]] | None = None
    metric: Metric | None = None
    chat: ChatSpec | None = None

    @property
    def n(self) -> int:
        return len(self.enc.tokens)

    @property
    def groups(self) -> int:
        return self.info.num_attention_heads // self.info.num_key_value_heads

    def shown_rows(self, q: int, measure: Measure) -> F32 | None:
        """Query ``q``'s rows (L, H, q + 1) as the views show them: the weights, or each key's share
        of ||alpha f|| (``measure`` norm, once the norms are held); None while not captured."""
        rows = self.rows.get(q)
        if rows is None or measure == "weight":
            return rows
        if self.norms is None or self.norms.shape[-1] <= q:
            return None
        return shares(np.asarray(rows * self.norms[:, :, : q + 1], dtype=np.float32))

    def table(self, q: int, key: list[int], measure: Measure) -> HeadRows | None:
        shown = self.shown_rows(q, measure)
        return None if shown is None else head_rows(shown, key)


# --- capture (the model) ---------------------------------------------------------------------


def open_prompt(loaded: Loaded, text: str | None, chat: ChatSpec | None, full: int = FULL) -> Session:
    """The session of ``text``: up to ``full`` tokens every query's rows and the role scores in one
    forward; beyond that only the last token's rows (the others come with :func:`capture_query`)."""
    import torch

    from attnscope.capture import engine
    from attnscope.core.common import as_array, every_layer
    from attnscope.core.prompt.tokens import check_length, encode_prompt
    from attnscope.core.roles import scores

    enc = encode_prompt(loaded.tokenizer, text, chat)
    n = len(enc.ids)
    check_length(n, getattr(loaded.model.config, "max_position_embeddings", None))
    session = Session(info=loaded.info, text=text, enc=enc, prompt_len=n, chat=chat)
    if n > full:
        capture_query(loaded, session, n - 1)
        return session
    layers = every_layer(loaded.info, "tui")
    packed = np.empty((len(layers), loaded.info.num_attention_heads, n * (n + 1) // 2), dtype=np.float32)
    keep = torch.tril(torch.ones(n, n, dtype=torch.bool))  # (T, T): key_pos <= query_pos
    ids = torch.tensor([enc.ids])  # (1, T)
    grids: dict[str, list[list[float]]] = {"previous_token": [], "duplicate_token": [], "induction": [], "sink": []}

    def consume(layer: int, rows: torch.Tensor, _norms: torch.Tensor | None) -> None:
        rows = rows.float().cpu()  # (1, H, T, T)
        engine.check_finite({layer: rows})
        packed[layers.index(layer)] = as_array(rows[0][:, keep])  # (H, T(T+1)/2): query 0's row, then 1's, ...
        for role, grid in scores(rows, ids[0]).items():  # each (1, H)
            grids[role].append(grid[0].tolist())

    request = engine.Request(positions=torch.arange(n)[None, :], layers=frozenset(layers), consume=consume)
    engine.run(loaded.model, ids, torch.ones_like(ids), request)
    session.rows = unpack(packed, n)
    session.roles = RoleScores(**grids)
    return session


def unpack(packed: F32, n: int) -> dict[int, F32]:
    """Views into ``packed`` (L, H, n(n+1)/2): query q's rows are the q + 1 values after q(q+1)/2."""
    return {q: packed[:, :, q * (q + 1) // 2 : (q + 1) * (q + 2) // 2] for q in range(n)}


def capture_query(loaded: Loaded, session: Session, q: int) -> None:
    """Query ``q``'s rows of every layer, from a forward over the tokens up to it."""
    import torch

    from attnscope.capture import engine
    from attnscope.core.common import as_array, every_layer

    layers = every_layer(loaded.info, "tui")
    ids = torch.tensor([session_ids(session)[: q + 1]])  # (1, q + 1): later tokens cannot change the row
    got = engine.run(
        loaded.model, ids, torch.ones_like(ids), engine.Request(positions=torch.tensor([[q]]), layers=frozenset(layers))
    )
    engine.check_finite(got.rows)
    session.rows[q] = as_array(torch.stack([got.rows[layer][0, :, 0, : q + 1] for layer in layers]))  # (L, H, q+1)


def session_ids(session: Session) -> list[int]:
    return [t.id for t in session.enc.tokens]


def capture_norms(loaded: Loaded, session: Session) -> None:
    """The value norms ||f_h(x_j)|| of every layer, head and key (``capture.norm``): one forward."""
    import torch

    from attnscope.capture import engine
    from attnscope.core.common import as_array, every_layer

    layers = every_layer(loaded.info, "tui")
    ids = torch.tensor([session_ids(session)])  # (1, T)
    request = engine.Request(
        positions=torch.tensor([[ids.shape[1] - 1]]), layers=frozenset(layers), norms=frozenset(layers)
    )
    got = engine.run(loaded.model, ids, torch.ones_like(ids), request)
    session.norms = as_array(torch.stack([got.norms[layer][0] for layer in layers]))  # (L, H, T)
    session.completeness = max(got.completeness.values())


def ablate_effects(loaded: Loaded, session: Session, target: str) -> None:
    """Every head's exact effect on log P(target) (``ablate`` over every layer and head)."""
    from attnscope.core.causal.ablate import ablate
    from attnscope.core.prompt.targets import Answer

    prompt: Any = session.text  # None: the last user turn of chat.messages, as encode_prompt reads it
    result = ablate(loaded, prompt, answer=Answer(target, None), chat=session.chat)
    session.effects, session.metric = result.effects, result.metric


def generate_into(loaded: Loaded, session: Session, max_new_tokens: int, on_token: Any) -> None:
    """Up to ``max_new_tokens`` greedy tokens after the prompt through the KV cache (``core.generate``'s
    decode loop); each step's rows (those of the query that chose the new token) land in
    ``session.rows`` and ``on_token()`` is called as each token comes. The last new token's own rows
    come with :func:`capture_query` when it is shown. ``on_token`` may raise KeyboardInterrupt to stop; the tokens so far stay."""
    from attnscope.core.generate import Interrupted, check_room, decode, stop_ids

    start = session.n
    check_room(start, max_new_tokens, getattr(loaded.model.config, "max_position_embeddings", None))
    base = replace(session.enc, ids=session_ids(session))
    got: list[int] = []

    def rows(step: Any) -> None:  # step i's rows are those of query start - 1 + i, which chose new token i
        pos = start - 1 + len(got)
        if pos not in session.rows:
            session.rows[pos] = np.asarray(step.numpy(), dtype=np.float32)  # (L, H, pos + 1)

    def token(new: list[int]) -> None:
        got[:] = new
        _extend(loaded, session, base, new)
        on_token()

    try:
        decode(
            loaded.model,
            base.ids,
            max_new_tokens=max_new_tokens,
            stop=stop_ids(loaded.model, loaded.tokenizer),
            on_token=token,
            on_rows=rows,
        )
    except Interrupted:
        pass


def _extend(loaded: Loaded, session: Session, base: Encoded, new: list[int]) -> None:
    from attnscope.core.generate import answer_tokens

    text, tokens, words = answer_tokens(loaded.tokenizer, base, new)
    session.enc = replace(session.enc, text=text, ids=[t.id for t in tokens], tokens=tokens, words=words)
    session.norms = None  # the new keys have none yet


# --- results ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shown:
    """What the detail pane shows: ``layer``/``head`` None is the mean over every head (``weights``'
    default); ``matrix`` the head's whole matrix; ``by`` token or word."""

    query: int
    layer: int | None = None
    head: int | None = None
    measure: Measure = "weight"
    by: Literal["token", "word"] = "word"
    matrix: bool = False


def built(session: Session, shown: Shown) -> Result:
    """The result of what is shown, from the rows held (no model)."""
    import torch

    from attnscope.core.matrix import matrix_result
    from attnscope.core.weights.single import weights_result
    from attnscope.results.weights import WeightsView

    q = shown.query
    rows = session.rows.get(q)
    if rows is None:
        raise AttnscopeError("tui_not_captured", pos=q)
    if shown.measure == "norm" and (session.norms is None or session.norms.shape[-1] <= q):
        raise AttnscopeError("tui_no_norms")
    enc = session.enc
    if shown.matrix:  # the prompt's whole matrix, as ``matrix`` draws it
        layer, head = _one_head(shown)
        end = session.prompt_len
        matrix = np.zeros((end, end), dtype=np.float32)  # (P, T): the causal zeros after each query
        for p in range(end):
            if session.rows.get(p) is None:
                raise AttnscopeError("tui_not_captured", pos=p)
            matrix[p, : p + 1] = session.rows[p][layer, head]
        norms = None
        if shown.measure == "norm" and session.norms is not None:
            norms = torch.from_numpy(np.ascontiguousarray(session.norms[layer, head, :end]))
        return matrix_result(
            session.info, prompt_enc(session), layer, head, torch.from_numpy(matrix), (0, end), shown.by, norms
        )
    layers = list(range(session.info.num_hidden_layers)) if shown.layer is None else [shown.layer]
    heads = list(range(session.info.num_attention_heads)) if shown.head is None else [shown.head]
    token = enc.tokens[q]
    query = Query(index=q, text=token.text, span=[q])
    norms = None
    if shown.measure == "norm" and session.norms is not None:
        norms = torch.from_numpy(np.ascontiguousarray(session.norms[:, :, : q + 1]))
    full = torch.from_numpy(np.ascontiguousarray(rows))  # (L, H, q + 1)
    return weights_result(
        session.info,
        enc,
        query,
        full[layers] if shown.layer is not None else full,
        layers,
        heads,
        WeightsView(by=shown.by),
        None,
        None if norms is None else (norms[layers] if shown.layer is not None else norms),
        session.completeness if norms is not None else None,
    )


def _one_head(shown: Shown) -> tuple[int, int]:
    if shown.layer is None or shown.head is None:
        raise AttnscopeError("tui_no_head")
    return shown.layer, shown.head


def prompt_enc(session: Session) -> Encoded:
    """The prompt's own encoding (without any generated answer)."""
    if session.n == session.prompt_len:
        return session.enc
    n = session.prompt_len
    tokens = session.enc.tokens[:n]
    words = [w for w in session.enc.words if w.tokens and w.tokens[-1] < n]
    return replace(
        session.enc, text=session.enc.text[: tokens[-1].end], ids=session.enc.ids[:n], tokens=tokens, words=words
    )


def exported(loaded: Loaded | None, session: Session, shown: Shown) -> Result:
    """What ``e`` writes: with the model, the matching command's analysis run again (so the file is that
    command's ``--json``); without it, :func:`built`. A generated query has no command of its own."""
    if shown.query >= session.prompt_len and not shown.matrix:
        raise AttnscopeError("tui_export_answer")
    if loaded is None:
        return built(session, shown)
    from attnscope.core.prompt.spec import Selection

    if shown.matrix:
        from attnscope.core.matrix import matrix

        layer, head = _one_head(shown)
        prompt: Any = session.text  # None: the last user turn of chat.messages, as encode_prompt reads it
        return matrix(loaded, prompt, layer=layer, head=head, by=shown.by, measure=shown.measure, chat=session.chat)
    from attnscope.core.weights import weights
    from attnscope.results.weights import WeightsView

    selection = Selection(
        layers=None if shown.layer is None else [shown.layer], heads=None if shown.head is None else [shown.head]
    )
    return weights(
        loaded,
        session.text,
        query=shown.query,
        selection=selection,
        chat=session.chat,
        view=WeightsView(by=shown.by),
        measure=shown.measure,
    )


def command_line(session: Session, shown: Shown) -> str:
    """The command whose ``--json`` the export of ``shown`` equals."""
    import shlex

    if shown.matrix:
        parts = ["attnscope", "matrix", session.text or "", "--layer", str(shown.layer), "--head", str(shown.head)]
    else:
        parts = ["attnscope", "weights", session.text or "", "--pos", str(shown.query)]
        if shown.layer is not None:
            parts += ["--layer", str(shown.layer), "--head", str(shown.head)]
    parts += ["--by", shown.by]
    if shown.measure == "norm":
        parts += ["--measure", "norm"]
    if session.chat is not None:
        parts += ["--chat"]
    return " ".join(shlex.quote(p) for p in [*parts, "--json"])


# --- save and resume -------------------------------------------------------------------------


def save(session: Session, path: str) -> None:
    """The session as one ``.npz``: each query's rows, the norms, and a JSON header of the rest."""
    from attnscope.render import check_output
    from attnscope.results.files import write_atomic

    check_output(path)
    head = {
        "format": FORMAT,
        "info": _to_plain(session.info),
        "text": session.text,
        "enc": {
            "text": session.enc.text,
            "ids": session.enc.ids,
            "tokens": _to_plain(session.enc.tokens),
            "words": _to_plain(session.enc.words),
            "chat": session.enc.chat,
            "segments": _to_plain(session.enc.segments),
        },
        "prompt_len": session.prompt_len,
        "completeness": session.completeness,
        "roles": None if session.roles is None else _to_plain(session.roles),
        "effects": session.effects,
        "metric": None if session.metric is None else _to_plain(session.metric),
        "chat": None if session.chat is None else {"system": session.chat.system},
        "queries": sorted(session.rows),
    }
    arrays: dict[str, npt.NDArray[Any]] = {f"q{q}": session.rows[q] for q in session.rows}
    if session.norms is not None:
        arrays["norms"] = session.norms
    arrays["head"] = np.frombuffer(json.dumps(head, ensure_ascii=False).encode("utf-8"), dtype=np.uint8)
    write_atomic(path, lambda f: np.savez_compressed(f, **arrays))  # type: ignore[arg-type]


def load(path: str) -> Session:
    """A session written by :func:`save`; a file that is not one is refused in one line."""
    from attnscope.core.prompt.spec import ChatSpec
    from attnscope.core.prompt.tokens import Encoded
    from attnscope.results.segments import Segment

    try:
        with np.load(Path(path), allow_pickle=False) as data:
            head = json.loads(bytes(data["head"]).decode("utf-8"))
            if head.get("format") != FORMAT:
                raise AttnscopeError("tui_resume_format", path=path)
            rows = {int(q): np.asarray(data[f"q{q}"], dtype=np.float32) for q in head["queries"]}
            norms = np.asarray(data["norms"], dtype=np.float32) if "norms" in data else None
    except (OSError, ValueError, KeyError, UnicodeDecodeError) as exc:
        raise AttnscopeError("tui_resume_read", path=path, reason=type(exc).__name__) from None
    e = head["enc"]
    enc = Encoded(
        text=e["text"],
        ids=e["ids"],
        tokens=_from_plain(list[Token], e["tokens"], "tokens"),
        words=_from_plain(list[Word], e["words"], "words"),
        chat=e["chat"],
        segments=_from_plain(list[Segment], e["segments"], "segments"),
    )
    return Session(
        info=_from_plain(ModelInfo, head["info"], "info"),
        text=head["text"],
        enc=enc,
        prompt_len=head["prompt_len"],
        rows=rows,
        norms=norms,
        completeness=head["completeness"],
        roles=None if head["roles"] is None else _from_plain(RoleScores, head["roles"], "roles"),
        effects=head["effects"],
        metric=None if head["metric"] is None else _from_plain(Metric, head["metric"], "metric"),
        chat=None if head["chat"] is None else ChatSpec(system=head["chat"]["system"]),
    )
