"""attnscope tui on the tiny model, driven by Textual's pilot: the keys, the numbers against the
commands that compute them, the exports against those commands' JSON, bad input inside the app."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("textual")

from attnscope.tui.app import Browser  # noqa: E402
from attnscope.tui.session import load, open_prompt  # noqa: E402

from support import SEED, aio, reference  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def drive(app: Browser, steps: Callable[[Any], Awaitable[None]], size: tuple[int, int] = (80, 24)) -> None:
    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await steps(pilot)

    aio.run(main())


async def settle(pilot: Any) -> None:
    """Wait until the app's worker is done and the screen has caught up."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()


async def answer(pilot: Any, key: str, text: str) -> None:
    """Press ``key``, type ``text`` into the question line, Enter, and wait for what it started."""
    await pilot.press(key)
    await pilot.pause()
    pilot.app.query_one("#ask").value = text
    await pilot.press("enter")
    await settle(pilot)


@pytest.fixture()
def session(loaded: Any) -> Any:
    return open_prompt(loaded, SEED, None)


def word_of(s: Any, text: str) -> list[int]:
    return next(w.tokens for w in s.enc.words if w.text == text)


def query_of(s: Any, text: str) -> int:
    """The query ``--query TEXT`` names: the last token of the text (a word may end in a space token)."""
    from attnscope.core.prompt.tokens import find_span

    return find_span(s.enc, text, None, [], "query")[-1]


def test_rows_and_role_scores_are_the_models(session: Any, loaded: Any, tokenizer: Any) -> None:
    import torch

    import attnscope

    ids = torch.tensor([tokenizer(SEED)["input_ids"]])
    ref = reference.eager_attentions(loaded.model, ids)  # per layer (1, H, T, T)
    T = ids.shape[1]
    assert session.n == T and sorted(session.rows) == list(range(T))
    for q in range(T):
        want = np.stack([r[0, :, q, : q + 1].numpy() for r in ref])  # (L, H, q + 1)
        np.testing.assert_allclose(session.rows[q], want, atol=2e-6)
    roles = attnscope.roles(loaded, prompt=SEED)
    for role in ("previous_token", "duplicate_token", "induction", "sink"):
        np.testing.assert_allclose(getattr(session.roles, role), getattr(roles.scores, role), atol=1e-6)


def test_arrows_move_the_query_and_after_k_the_key(session: Any, loaded: Any) -> None:
    app = Browser(session, "en", loaded)
    T = session.n

    async def steps(pilot: Any) -> None:
        assert app.qpos == T - 1 and app.kspan == word_of(session, "민수는")
        await pilot.press("left", "left")
        assert app.qpos == T - 3
        await pilot.press("k", "right")
        assert app.kspan == word_of(session, "사과를")
        await pilot.press("right", "left")
        assert app.kspan == word_of(session, "사과를")
        await pilot.press("k", "right")
        assert app.qpos == T - 2 and app.kspan == word_of(session, "사과를")
        await pilot.press("w")  # by token: the key is one token
        assert len(app.kspan) == 1
        top = str(app.query_one("#top").render())
        assert f"(pos {T - 2})" in top

    drive(app, steps)


def test_sorted_on_the_key_the_table_is_heads_ranking(session: Any, loaded: Any, cli: Any, model_dir: Path) -> None:
    q_text = "그것을"
    app = Browser(session, "en", loaded, query=query_of(session, q_text), key=word_of(session, "사과를"))

    async def steps(pilot: Any) -> None:
        await pilot.press("o", "o")  # layer -> kv -> on K, descending
        assert app.sort == "on_key" and app.descending

    drive(app, steps)
    res = cli("heads", SEED, "--model", str(model_dir), "--query", q_text, "--key", "사과를", "--json")
    assert res.exit_code == 0, res.stderr
    ranking = json.loads(res.stdout)["ranking"]
    scores = {(r["layer"], r["head"]): r["score"] for r in ranking}
    shown = [(r.layer, r.head, r.values["on_key"]) for r in app.rows]
    assert len(shown) == len(ranking)
    for layer, head, value in shown:
        assert value == pytest.approx(scores[(layer, head)], abs=1e-6)
    assert [v for _, _, v in shown] == sorted((v for _, _, v in shown), reverse=True)
    # the heads whose scores stand apart by more than the capture's rounding come in heads' order
    apart = [
        (r["layer"], r["head"]) for i, r in enumerate(ranking) if i == 0 or ranking[i - 1]["score"] - r["score"] > 1e-5
    ]
    assert [(layer, head) for layer, head, _ in shown if (layer, head) in apart][:5] == apart[:5]


def test_filter_keeps_the_heads_it_names_and_a_bad_one_is_one_line(session: Any, loaded: Any) -> None:
    app = Browser(session, "en", loaded)

    async def steps(pilot: Any) -> None:
        await answer(pilot, "slash", "L1 kv=0")
        assert [(r.layer, r.head) for r in app.rows] == [(1, 0), (1, 1)]
        await answer(pilot, "slash", "sink>>0.5")
        status = str(app.query_one("#status").render())
        assert status.startswith("error: the filter term 'sink>>0.5' does not parse") and "\n" not in status
        assert [(r.layer, r.head) for r in app.rows] == [(1, 0), (1, 1)]  # the last good filter stays
        await answer(pilot, "slash", "sink>0.05 L2")
        assert all(r.layer == 2 and r.values["sink"] > 0.05 for r in app.rows)
        assert app.is_running

    drive(app, steps)


def _export(app: Browser, path: Path, keys: tuple[str, ...]) -> Callable[[Any], Awaitable[None]]:
    async def steps(pilot: Any) -> None:
        await pilot.press(*keys)
        await pilot.pause()
        await answer(pilot, "e", str(path))
        assert "wrote" in str(app.query_one("#status").render())

    return steps


@pytest.mark.parametrize(
    "keys, args",
    [
        (("down", "down", "down", "enter"), ["weights", "--layer", "0", "--head", "3", "--by", "word"]),
        (("down", "enter", "w"), ["weights", "--layer", "0", "--head", "1", "--by", "token"]),
        (("v",), ["weights", "--by", "word"]),
        (("down", "down", "enter", "m", "w"), ["matrix", "--layer", "0", "--head", "2", "--by", "token"]),
    ],
)
def test_export_is_the_commands_json(
    session: Any, loaded: Any, cli: Any, model_dir: Path, tmp_path: Path, keys: tuple[str, ...], args: list[str]
) -> None:
    out = tmp_path / "view.json"
    app = Browser(session, "en", loaded, query=session.n - 3)
    drive(app, _export(app, out, keys))
    command, *rest = args
    pos = [] if command == "matrix" else ["--pos", str(session.n - 3)]
    res = cli(command, SEED, "--model", str(model_dir), *pos, *rest, "--json")
    assert res.exit_code == 0, res.stderr
    assert out.read_text(encoding="utf-8") == res.stdout


def test_export_svg_and_an_unwritable_path(session: Any, loaded: Any, tmp_path: Path) -> None:
    app = Browser(session, "ko", loaded)

    async def steps(pilot: Any) -> None:
        await pilot.press("enter")
        await answer(pilot, "e", str(tmp_path / "view.svg"))
        assert (tmp_path / "view.svg").read_text(encoding="utf-8").startswith("<svg")
        await answer(pilot, "e", str(tmp_path / "no" / "such" / "view.json"))
        status = str(app.query_one("#status").render())
        assert status.startswith("오류: ") and "\n" not in status
        assert not (tmp_path / "no").exists() and app.is_running

    drive(app, steps)


def test_norm_measure_is_heads_norm(session: Any, loaded: Any, cli: Any, model_dir: Path) -> None:
    app = Browser(session, "en", loaded, query=query_of(session, "그것을"), key=word_of(session, "사과를"))

    async def steps(pilot: Any) -> None:
        await pilot.press("n")
        await settle(pilot)
        assert app.measure == "norm"

    drive(app, steps)
    res = cli(
        "heads", SEED, "--model", str(model_dir), "--query", "그것을", "--key", "사과를", "--measure", "norm", "--json"
    )
    scores = {(r["layer"], r["head"]): r["score"] for r in json.loads(res.stdout)["ranking"]}
    for row in app.rows:
        assert row.values["on_key"] == pytest.approx(scores[(row.layer, row.head)], abs=1e-5)


def test_ablation_column_is_ablates_and_a_bad_target_is_one_line(
    session: Any, loaded: Any, cli: Any, model_dir: Path
) -> None:
    app = Browser(session, "en", loaded)

    async def steps(pilot: Any) -> None:
        await answer(pilot, "a", "사과를 먹")
        status = str(app.query_one("#status").render())
        assert status.startswith("error: ") and "\n" not in status and app.is_running
        assert session.effects is None
        await answer(pilot, "a", "다")
        assert app.sort == "effect"

    drive(app, steps)
    res = cli("ablate", SEED, "--model", str(model_dir), "--target", "다", "--json")
    assert res.exit_code == 0, res.stderr
    assert session.effects == json.loads(res.stdout)["effects"]


def test_generate_fills_the_answers_rows_from_the_cache(session: Any, loaded: Any) -> None:
    import attnscope

    T = session.n
    app = Browser(session, "en", loaded, max_new_tokens=3)

    async def steps(pilot: Any) -> None:
        await pilot.press("g")
        await settle(pilot)
        assert session.n == T + 3 and app.qpos == T + 1

    drive(app, steps)
    got = attnscope.generate(loaded, SEED, max_new_tokens=3)
    assert [t.id for t in session.enc.tokens[T:]] == [t.id for t in got.tokens[T:]]
    for i, step in enumerate(got.steps[1:], start=1):
        np.testing.assert_array_equal(session.rows[T - 1 + i], np.asarray(step.weights, dtype=np.float32))


def test_save_then_resume_without_the_model(session: Any, loaded: Any, tmp_path: Path) -> None:
    saved = tmp_path / "s.npz"
    app = Browser(session, "en", loaded)
    first: list[Any] = []

    async def steps(pilot: Any) -> None:
        await answer(pilot, "s", str(saved))
        first.extend((r.layer, r.head, r.values) for r in app.rows)

    drive(app, steps)
    back = load(str(saved))
    again = Browser(back, "en", None)
    rows: list[Any] = []

    async def steps2(pilot: Any) -> None:
        rows.extend((r.layer, r.head, r.values) for r in again.rows)
        await pilot.press("a")
        assert "needs the model" in str(again.query_one("#status").render())
        await answer(pilot, "e", str(tmp_path / "v.json"))
        assert json.loads((tmp_path / "v.json").read_text(encoding="utf-8"))["schema"] == "attnscope.weights/3"

    drive(again, steps2)
    assert rows == first


def test_resume_refuses_a_file_that_is_not_a_session(cli: Any, tmp_path: Path) -> None:
    bad = tmp_path / "x.npz"
    bad.write_bytes(b"not a zip")
    res = cli("tui", "--resume", str(bad))
    assert res.exit_code == 6 and res.stdout == ""
    assert res.stderr.strip().splitlines() == [f"attnscope: error: cannot read {bad} as a saved session (ValueError)"]


def test_help_and_quit(session: Any, loaded: Any) -> None:
    app = Browser(session, "ko", loaded)

    async def steps(pilot: Any) -> None:
        await pilot.press("question_mark")
        await pilot.pause()
        assert type(app.screen).__name__ == "HelpScreen"
        await pilot.press("x")
        await pilot.pause()
        assert type(app.screen).__name__ != "HelpScreen"
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "행렬 (m)" in titles and "내보내기 (e)" in titles and "끝 (q)" in titles
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert type(app.screen).__name__ == "CommandPalette"
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running

    drive(app, steps)


def test_no_other_command_imports_textual() -> None:
    code = (
        "import sys\n"
        "from attnscope.commands import COMMANDS, resolve\n"
        "[resolve(row.cli) for row in COMMANDS]\n"
        "import attnscope.render, attnscope.core.weights\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'textual'))\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"


def test_without_textual_one_line_says_how_to_install(tmp_path: Path) -> None:
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text("import sys\nsys.modules['textual'] = None  # as if not installed\n")
    env = {**os.environ, "PYTHONPATH": f"{hide}{os.pathsep}{ROOT}"}
    res = subprocess.run(
        [sys.executable, "-m", "attnscope", "tui", "x"], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120
    )
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.splitlines() == ["attnscope: error: attnscope tui needs Textual: pip install 'attnscope[tui]'"]
