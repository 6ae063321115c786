"""``render``: a saved JSON result draws exactly as the command that produced it; bad files get one clear line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import attnscope
from attnscope.render import render, to_text
from attnscope.results import from_json

from support import SEED
from support.commands import COMMANDS, MODEL

NONDETERMINISTIC = {"reuse"}  # measures time: two runs differ, so only the same run's views are compared


def _args(name, model_dir):
    return [a.replace(MODEL, str(model_dir)) for a in COMMANDS[name]]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_saved_json_renders_like_the_command(cli, model_dir, tmp_path, name):
    args = _args(name, model_dir)
    first_html, again_html = tmp_path / "first.html", tmp_path / "again.html"
    saved = cli(*args, "--json", "--html", str(first_html))  # the JSON and the view of one result
    assert saved.exit_code == 0, saved.stderr
    path = tmp_path / f"{name}.json"
    path.write_text(saved.stdout, encoding="utf-8")
    again = cli("render", str(path), "--html", str(again_html))
    assert again.exit_code == 0, again.stderr
    assert again_html.read_text(encoding="utf-8") == first_html.read_text(encoding="utf-8")
    if name not in NONDETERMINISTIC:
        shown = cli(*args)
        assert shown.exit_code == 0, shown.stderr
        assert again.stdout == shown.stdout
    # Same through the library: the rebuilt result gives back the same document and text.
    doc = json.loads(saved.stdout)
    result = from_json(doc)
    assert result.to_json() == doc
    assert to_text(render(result), width=100) == to_text(render(from_json(json.loads(json.dumps(doc)))), width=100)
    assert json.loads(cli("render", str(path), "--json").stdout) == doc


def test_render_reads_stdin(cli, model_dir):
    saved = cli(*_args("info", model_dir), "--json").stdout
    assert cli("render", "-", input=saved).stdout == cli(*_args("info", model_dir)).stdout


def _write(tmp_path, text: str | bytes):
    path = tmp_path / "r.json"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "not valid JSON at line 1 column 2"),
        ('{"schema": "attnscope.info/1", "model": "x", "sou', "looks truncated"),
        ("", "empty file"),
        ("[1, 2]", "no 'schema' field"),
        ('{"schema": "attnscope.nope/1"}', "unknown schema 'attnscope.nope/1'; known:"),
        ('{"schema": "attnscope.info/1", "model": "x"}', "missing field"),
        ('{"schema": "attnscope.matrix/2", "layer": "one"}', "attnscope.matrix/2"),
        (b"\xff\xfe{}", "not UTF-8"),
    ],
)
def test_bad_files(cli, tmp_path, content, message):
    res = cli("render", _write(tmp_path, content))
    assert res.exit_code == 6 and res.stdout == ""
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("attnscope: error:") and message in lines[0]


def test_missing_file_and_folder(cli, tmp_path):
    res = cli("render", str(tmp_path / "absent.json"))
    assert res.exit_code == 6 and res.stdout == "" and "no such file" in res.stderr
    res = cli("render", str(tmp_path))
    assert res.exit_code == 6 and "is a folder" in res.stderr


def test_inconsistent_fields_are_a_clear_error(cli, model_dir, tmp_path):
    doc = json.loads(cli(*_args("heads", model_dir), "--json").stdout)
    doc["query"] = {**doc["query"], "index": 999, "span": [999]}  # an index past the tokens
    res = cli("render", _write(tmp_path, json.dumps(doc)))
    assert res.exit_code == 6 and res.stdout == ""
    assert "do not fit together" in res.stderr


def _edited(cli, model_dir, tmp_path, name, edit):
    doc = json.loads(cli(*_args(name, model_dir), "--json").stdout)
    edit(doc)
    return cli("render", _write(tmp_path, json.dumps(doc)))


def _set_bar(doc, value):
    doc["chart"]["bars"][1]["weight"] = value


@pytest.mark.parametrize(
    "name,edit,says",
    [
        ("weights", lambda d: _set_bar(d, 5.0), "is 5, but the weights give"),
        ("weights", lambda d: d["hardest"][0].__setitem__("weight", 0.01), "who looks hardest at"),
        ("weights", lambda d: d["chart"].__setitem__("total", 5.0), "the stored sum 5"),
        ("weights-per-head", lambda d: d["per_head"][0]["bars"][0].__setitem__("weight", 0.5), "L1 H0"),
        ("heads", lambda d: d["top"][0].__setitem__("score", 0.999), "is not its row summed over the key"),
        ("heads", lambda d: d["ranking"].reverse(), "not in descending order"),
        ("matrix", lambda d: d["weights"][3].__setitem__(0, 0.9), "row of query position 3"),
        ("roles", lambda d: d["top"]["induction"].reverse(), "top induction"),
        ("roles", lambda d: d.__setitem__("sink_rate", 0.5), "sink_rate 0.5"),
    ],
)
def test_edited_derived_numbers_are_refused(cli, model_dir, tmp_path, name, edit, says):
    """render recomputes sums, shares and rankings from the raw values: an edit is one line, exit 6."""
    res = _edited(cli, model_dir, tmp_path, name, edit)
    assert res.exit_code == 6 and res.stdout == ""
    assert len(res.stderr.strip().splitlines()) == 1
    assert says in res.stderr and "disagree with the raw values" in res.stderr


SAMPLES = sorted((Path(__file__).resolve().parents[2] / "samples").glob("*.json"))


@pytest.mark.parametrize("path", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_committed_samples_still_render(cli, path):
    """A newcomer's first command: `attnscope render samples/...json` with no model."""
    res = cli("render", str(path))
    assert res.exit_code == 0, res.stderr
    assert res.stdout.strip()
    doc = json.loads(path.read_text(encoding="utf-8"))
    again = from_json(doc).to_json()  # the saved schema still matches the result classes
    assert again.pop("attnscope_version") == attnscope.__version__
    assert again == {k: v for k, v in doc.items() if k != "attnscope_version"}


def test_json_lines_say_so_and_render_one_line(cli, model_dir, tmp_path):
    """A batch run's --json output is JSON Lines: one line says so and how to render one."""
    batch = tmp_path / "prompts.txt"
    batch.write_text(f"{SEED}\nThe cat sat on the mat.\n", encoding="utf-8")
    res = cli("weights", "--input", str(batch), "--layer", "1", "--json", "--model", str(model_dir))
    assert res.exit_code == 0, res.stderr
    jsonl = tmp_path / "p.jsonl"
    jsonl.write_text(res.stdout, encoding="utf-8")
    docs = [json.loads(row) for row in res.stdout.splitlines()]
    assert [d["input_line"] for d in docs] == [1, 2]

    bad = cli("render", str(jsonl))
    assert bad.exit_code == 6 and bad.stdout == ""
    assert bad.stderr.splitlines() == [
        f"attnscope: error: {jsonl} is JSON Lines (2 documents, one per line, as --input batch runs write); "
        "render one with --line N (1..2)"
    ]
    one = cli("render", str(jsonl), "--line", "2")
    assert one.exit_code == 0, one.stderr
    doc = dict(docs[1])
    doc.pop("input_line")
    single = tmp_path / "second.json"
    single.write_text(json.dumps(doc), encoding="utf-8")
    assert one.stdout == cli("render", str(single)).stdout  # the same view as that document saved alone
    out_of_range = cli("render", str(jsonl), "--line", "3")
    assert out_of_range.exit_code == 2
    assert out_of_range.stderr.splitlines() == [f"attnscope: error: --line 3: {jsonl} has 2 non-blank line(s)"]


def test_the_analysis_and_the_check_share_one_derivation(cli, model_dir, tmp_path, monkeypatch):
    """A change to the derivation reaches both sides: with one top word per step, generate writes one and
    render accepts it; the same document is refused once the derivation lists three again."""
    from attnscope.results import derive

    monkeypatch.setattr(derive, "TOP_WORDS", 1)
    saved = cli("generate", SEED, "-n", "2", "--model", str(model_dir), "--json")
    assert saved.exit_code == 0, saved.stderr
    assert all(len(step["top_words"]) == 1 for step in json.loads(saved.stdout)["steps"])
    path = _write(tmp_path, saved.stdout)
    assert cli("render", path).exit_code == 0
    monkeypatch.setattr(derive, "TOP_WORDS", 3)
    res = cli("render", path)
    assert res.exit_code == 6 and "1 top words stored, but the rows give" in res.stderr
