"""``weights --by segment`` and ``weights --messages`` on the tiny model and its ChatML template.

Each segment's bar is checked against the ``--by token`` JSON of the same run (the token bars
summed over the segment's tokens, by hand), and each segment's tokens against the message it
comes from (the characters they cover spell that message's content). Bad input gets one
line on stderr and nothing on stdout.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from attnscope.errors import ExitCode

from support import one_error
from support.segments import DEFAULT_SYSTEM, INSERTING, folder_with_template

TWO_TURNS = [
    {"role": "user", "content": "hello world"},
    {"role": "assistant", "content": "hello attention"},
    {"role": "user", "content": "The cat sat."},
]


def run_json(cli: Any, *args: str) -> dict[str, Any]:
    res = cli("weights", *args, "--json")
    assert res.exit_code == 0, res.stderr
    doc: dict[str, Any] = json.loads(res.stdout)
    return doc


def messages_file(tmp_path: Path, messages: Any, name: str = "m.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(messages, ensure_ascii=False), encoding="utf-8")
    return str(path)


def spelled(doc: dict[str, Any], tokens: list[int]) -> str:
    """The characters the tokens cover, in order (a character split over tokens once)."""
    chars = sorted({c for i in tokens for c in range(doc["tokens"][i]["start"], doc["tokens"][i]["end"])})
    return "".join(doc["text"][c] for c in chars)


def check_bars_against_tokens(by_segment: dict[str, Any], by_token: dict[str, Any]) -> None:
    """Every segment's bar is the sum of the token bars over its tokens up to the query; the bars add up to 1."""
    tokens = {b["tokens"][0]: b["weight"] for b in by_token["chart"]["bars"]}
    q = by_segment["query"]["index"]
    bars = by_segment["chart"]["bars"]
    for bar in bars:
        segment = by_segment["segments"][bar["segment"]]
        members = [i for i in segment["tokens"] if i <= q]
        assert bar["tokens"] == members
        assert bar["partial"] == (len(members) < len(segment["tokens"]))
        assert bar["weight"] == pytest.approx(sum(tokens[i] for i in members), abs=1e-6)
    assert sum(b["weight"] for b in bars) == pytest.approx(1.0, abs=1e-5)
    assert by_segment["chart"]["total"] == pytest.approx(1.0, abs=1e-5)
    # the segments partition the tokens, and every segment with a token up to the query has a bar
    assert sorted(i for s in by_segment["segments"] for i in s["tokens"]) == list(range(len(by_segment["tokens"])))
    assert [b["segment"] for b in bars] == [s["index"] for s in by_segment["segments"] if min(s["tokens"]) <= q]


def test_by_segment_with_system_and_two_user_turns(cli: Any, model_dir: Path, tmp_path: Path) -> None:
    args = ["--messages", messages_file(tmp_path, TWO_TURNS), "--system", "짧게 답해.", "--model", str(model_dir)]
    doc = run_json(cli, *args, "--by", "segment")
    assert doc["schema"] == "attnscope.weights/3"
    kinds = [(s["kind"], s["turn"], s["message"]) for s in doc["segments"]]
    assert kinds == [("template", None, None), ("system", 1, 0), ("user", 1, 1), ("assistant", 1, 2), ("user", 2, 3)]
    contents = ["짧게 답해.", "hello world", "hello attention", "The cat sat."]
    assert [spelled(doc, s["tokens"]) for s in doc["segments"][1:]] == contents
    template = spelled(doc, doc["segments"][0]["tokens"])
    assert template == (
        "<|im_start|>system\n<|im_end|>\n<|im_start|>user\n<|im_end|>\n<|im_start|>assistant\n<|im_end|>\n"
        "<|im_start|>user\n<|im_end|>\n<|im_start|>assistant\n"
    )
    assert [b["label"] for b in doc["chart"]["bars"]] == ["template", "system", "user 1", "assistant 1", "user 2"]
    assert doc["template"] == {"inserted_system": None, "reencode_matches": True, "generation_prompt": True}
    check_bars_against_tokens(doc, run_json(cli, *args, "--by", "token"))
    # the raw rows stay in token space, whatever the grouping
    assert doc["weights"] == run_json(cli, *args, "--by", "word")["weights"]


def test_by_segment_without_a_system_message_and_with_an_inserted_one(
    cli: Any, model_dir: Path, tmp_path: Path
) -> None:
    plain = ["hello world", "--chat", "--model", str(model_dir)]
    doc = run_json(cli, *plain, "--by", "segment")
    assert [(s["kind"], s["turn"]) for s in doc["segments"]] == [("template", None), ("user", 1)]
    assert spelled(doc, doc["segments"][1]["tokens"]) == "hello world"
    check_bars_against_tokens(doc, run_json(cli, *plain, "--by", "token"))

    folder = folder_with_template(tmp_path, model_dir, INSERTING)
    inserting = ["The cat sat on the mat.", "--chat", "--model", folder]
    doc = run_json(cli, *inserting, "--by", "segment")
    assert [(s["kind"], s["inserted"]) for s in doc["segments"]] == [
        ("template", False),
        ("system", True),
        ("user", False),
    ]
    assert spelled(doc, doc["segments"][1]["tokens"]).strip() == DEFAULT_SYSTEM
    assert doc["template"]["inserted_system"] == DEFAULT_SYSTEM
    check_bars_against_tokens(doc, run_json(cli, *inserting, "--by", "token"))
    view = cli("weights", *inserting, "--by", "segment", "--width", "200")
    assert view.exit_code == 0, view.stderr
    assert "system (inserted)" in view.stdout
    assert f"The template inserted a system message you did not write: “{DEFAULT_SYSTEM}”" in view.stdout


def test_by_segment_with_per_head_norm_and_no_sink(cli: Any, model_dir: Path, tmp_path: Path) -> None:
    """Each combination agrees with the same run --by token, per head as well as for the mean."""
    base = ["--messages", messages_file(tmp_path, TWO_TURNS), "--model", str(model_dir), "--per-head"]
    for extra in ([], ["--measure", "norm"], ["--no-sink"], ["--measure", "norm", "--no-sink", "--layer", "1"]):
        by_segment = run_json(cli, *base, *extra, "--by", "segment")
        by_token = run_json(cli, *base, *extra, "--by", "token")
        check_bars_against_tokens(by_segment, by_token)
        assert len(by_segment["per_head"]) == len(by_token["per_head"]) > 1
        for one, tokens in zip(by_segment["per_head"], by_token["per_head"], strict=True):
            check_bars_against_tokens({**by_segment, "chart": one}, {**by_token, "chart": tokens})
        if "--no-sink" in extra:  # position 0 sits in the template segment, which keeps its other tokens
            assert by_token["chart"]["bars"][0]["weight"] == 0.0
            assert not by_segment["chart"]["bars"][0]["excluded"]


def test_query_in_an_earlier_message_cuts_the_segments_there(cli: Any, model_dir: Path, tmp_path: Path) -> None:
    args = [
        "--messages",
        messages_file(tmp_path, TWO_TURNS),
        "-q",
        "hello",
        "--occurrence",
        "2",
        "--model",
        str(model_dir),
    ]
    doc = run_json(cli, *args, "--by", "segment")
    q = doc["query"]["index"]
    assert q in doc["segments"][2]["tokens"]  # the assistant turn
    assert [b["label"] for b in doc["chart"]["bars"]] == ["template", "user 1", "assistant 1"]
    assert [b["partial"] for b in doc["chart"]["bars"]] == [True, False, True]
    assert [b["is_query"] for b in doc["chart"]["bars"]] == [False, False, True]
    check_bars_against_tokens(doc, run_json(cli, *args, "--by", "token"))
    assert run_json(cli, *args)["query"] == doc["query"]  # --messages without --by segment: words


def test_messages_equal_chat_for_one_user_turn(cli: Any, model_dir: Path, tmp_path: Path) -> None:
    """A --messages file holding one user turn and --system reads exactly like PROMPT --chat --system."""
    path = messages_file(tmp_path, [{"role": "user", "content": "hello world"}])
    from_file = run_json(cli, "--messages", path, "--system", "짧게.", "--model", str(model_dir))
    from_prompt = run_json(cli, "hello world", "--chat", "--system", "짧게.", "--model", str(model_dir))
    assert from_file == from_prompt
    with_prompt = run_json(cli, "The cat sat.", "--messages", path, "--by", "segment", "--model", str(model_dir))
    assert [spelled(with_prompt, s["tokens"]) for s in with_prompt["segments"][1:]] == ["hello world", "The cat sat."]


def test_render_gives_the_same_view(cli: Any, model_dir: Path, tmp_path: Path) -> None:
    args = ["weights", "--messages", messages_file(tmp_path, TWO_TURNS), "--system", "짧게.", "--by", "segment"]
    args += ["--model", str(model_dir), "--width", "120"]
    saved = tmp_path / "w.json"
    saved.write_text(cli(*args, "--json").stdout, encoding="utf-8")
    for lang in ("en", "ko"):
        view = cli(*args, "--lang", lang)
        again = cli("render", str(saved), "--lang", lang, "--width", "120")
        assert view.exit_code == again.exit_code == 0, view.stderr + again.stderr
        assert again.stdout == view.stdout
    ko = cli(*args, "--lang", "ko").stdout
    for label in ("템플릿", "시스템", "사용자 1", "어시스턴트 1", "사용자 2", "구간마다 그 구간을 가장 많이 보는 헤드"):
        assert label in ko
    assert "user 1" not in ko and "template" not in ko  # the JSON labels are not the Korean view's
    en = cli(*args).stdout
    assert "--by segment: each segment's bar is the sum of its tokens' weights, up to the query" in en
    assert "who looks hardest at each segment" in en


def test_svg_labels_the_segments(cli: Any, model_dir: Path, tmp_path: Path) -> None:
    svg = tmp_path / "w.svg"
    args = ["weights", "--messages", messages_file(tmp_path, TWO_TURNS), "--by", "segment", "--svg", str(svg)]
    res = cli(*args, "--model", str(model_dir), "--lang", "ko")
    assert res.exit_code == 0, res.stderr
    drawn = svg.read_text(encoding="utf-8")
    for label in ("템플릿", "사용자 1", "어시스턴트 1", "사용자 2"):
        assert f">{label}</text>" in drawn


def test_batch_input_by_segment_with_chat(cli: Any, model_dir: Path, tmp_path: Path) -> None:
    prompts = tmp_path / "p.txt"
    prompts.write_text("hello world\nThe cat sat.\n", encoding="utf-8")
    res = cli("weights", "--input", str(prompts), "--chat", "--by", "segment", "--model", str(model_dir), "--json")
    assert res.exit_code == 0, res.stderr
    for line, text in zip(res.stdout.splitlines(), ["hello world", "The cat sat."], strict=True):
        doc = json.loads(line)
        assert [b["label"] for b in doc["chart"]["bars"]] == ["template", "user 1"]
        assert spelled(doc, doc["segments"][1]["tokens"]) == text


@pytest.mark.parametrize(
    "name,content,args,code,fragment",
    [
        (
            "no-chat",
            None,
            ["hello world", "--by", "segment"],
            ExitCode.USAGE,
            "--by segment needs --chat or --messages",
        ),
        (
            "no-chat-batch",
            None,
            ["--input", "{dir}/p.txt", "--by", "segment"],
            ExitCode.USAGE,
            "--by segment needs --chat or --messages",
        ),
        ("not-json", "[{", ["--messages", "{file}"], ExitCode.INPUT_FILE, "not JSON"),
        ("not-a-list", '{"role": "user", "content": "a"}', ["--messages", "{file}"], ExitCode.INPUT_FILE, "list"),
        ("empty-list", "[]", ["--messages", "{file}"], ExitCode.INPUT_FILE, "non-empty JSON list"),
        (
            "unknown-role",
            '[{"role": "narrator", "content": "a"}]',
            ["--messages", "{file}", "--by", "segment"],
            ExitCode.INPUT_FILE,
            "unknown role 'narrator'",
        ),
        ("no-content", '[{"role": "user"}]', ["--messages", "{file}"], ExitCode.INPUT_FILE, "'role' and 'content'"),
        (
            "content-not-text",
            '[{"role": "user", "content": 3}]',
            ["--messages", "{file}"],
            ExitCode.INPUT_FILE,
            "'content' must be a string",
        ),
        ("missing-file", None, ["--messages", "{dir}/nope.json"], ExitCode.INPUT_FILE, "nope.json"),
        (
            "system-twice",
            '[{"role": "system", "content": "a"}, {"role": "user", "content": "b"}]',
            ["--messages", "{file}", "--system", "c"],
            ExitCode.USAGE,
            "system message is given twice",
        ),
        (
            "with-input",
            '[{"role": "user", "content": "a"}]',
            ["--messages", "{file}", "--input", "{dir}/p.txt"],
            ExitCode.USAGE,
            "give --messages FILE or --input FILE, not both",
        ),
        (
            "query-nowhere",
            json.dumps(TWO_TURNS),
            ["--messages", "{file}", "-q", "zebra"],
            ExitCode.USAGE,
            "--query 'zebra' is not in the prompt",
        ),
        (
            "matrix-by-segment",
            None,
            ["hello world", "--chat", "--by", "segment", "--layer", "0", "--head", "0"],
            ExitCode.USAGE,
            "segment",
        ),
    ],
)
def test_bad_input(
    cli: Any, model_dir: Path, tmp_path: Path, name: str, content: str | None, args: list[str], code: int, fragment: str
) -> None:
    path = tmp_path / "m.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    (tmp_path / "p.txt").write_text("hello world\n", encoding="utf-8")
    filled = [a.replace("{file}", str(path)).replace("{dir}", str(tmp_path)) for a in args]
    command = "matrix" if name.startswith("matrix") else "weights"
    one_error(cli(command, *filled, "--model", str(model_dir)), code, fragment)
