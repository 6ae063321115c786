"""attnscope stats on the tiny model: against an eager reference, independent of batch size, shard
size and merge order, Ctrl-C and --resume, the long table, the view, and every bad input."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from attnscope.core.prompt.spec import ChatSpec
from attnscope.core.prompt.tokens import encode
from attnscope.core.stats import driver as core_stats
from attnscope.core.stats.aggregates import Partial, poisson_weights, statistics
from attnscope.core.stats.options import StatsConfig
from attnscope.core.stats.worker import Item, StatsWorker

from support import one_error, tiny
from support.statsref import BASE, assert_same_stats, eager, reference

ROOT = Path(__file__).resolve().parents[2]

PROMPTS = [*tiny.CORPUS, "hello hello hello world world", "사과는 사과를 샀다. 사과는 맛있다."]


def write_corpus(path: Path, prompts: list[str], bad: dict[int, str] | None = None) -> Path:
    lines = [json.dumps({"prompt": p}, ensure_ascii=False) for p in prompts]
    for at, text in sorted((bad or {}).items()):
        lines.insert(at - 1, text)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    return write_corpus(tmp_path / "corpus.jsonl", PROMPTS)


def rel(a: Any, b: Any) -> float:
    x, y = np.array(a, dtype=float), np.array(b, dtype=float)
    return float(np.nanmax(np.abs(x - y) / np.maximum(np.abs(x), 1e-12)))


def test_positions_count_in_every_prompt_that_has_them(loaded: Any, corpus: Path) -> None:
    """--pos 2,-15: position 2 and the 15th from the end of each prompt, against the eager
    reference over exactly those; a prompt without them is skipped with its reason."""
    res = core_stats.stats(loaded, str(corpus), StatsConfig(pos=" 2, -15 ", shard_size=3))
    ids = [encode(loaded.tokenizer, p).ids for p in PROMPTS]
    has = [i for i, x in enumerate(ids) if len(x) > 2 and len(x) - 15 >= 1]
    lacks = [i + 1 for i in range(len(ids)) if i not in has]
    assert has and lacks, [len(x) for x in ids]  # the corpus holds both kinds
    ref = reference(loaded.model, [ids[i] for i in has], [2, -15])
    for name in BASE:
        mean, std, n = ref[name]
        got = res.stats[name]
        assert all(v == n for row in got.n for v in row), name
        np.testing.assert_allclose(np.array(got.mean, float), mean, rtol=1e-5, atol=1e-6, err_msg=name)
        np.testing.assert_allclose(np.array(got.std, float), std, rtol=1e-4, atol=1e-6, err_msg=name)
    assert res.options.pos == "2,-15" and res.corpus.used == len(has)
    assert [s.line for s in res.corpus.skipped] == lacks
    assert all("too few for every query position of pos 2,-15" in s.reason for s in res.corpus.skipped)


def test_minus_one_is_last_and_a_range_from_1_is_all(loaded: Any, corpus: Path) -> None:
    """-1 is another spelling of last (recorded as "last", so JSON and checkpoints stay as they were);
    1--1 counts what all counts."""
    last = core_stats.stats(loaded, str(corpus), StatsConfig(pos="last"))
    for same in ("-1", -1, "LAST"):
        got = core_stats.stats(loaded, str(corpus), StatsConfig(pos=same))
        assert got.options.pos == "last" and got.stats == last.stats and got.corpus == last.corpus
    every = core_stats.stats(loaded, str(corpus), StatsConfig(pos="all"))
    ranged = core_stats.stats(loaded, str(corpus), StatsConfig(pos="1--1"))
    assert ranged.options.pos == "1--1" and ranged.stats == every.stats and ranged.corpus == every.corpus


def test_a_checkpoint_of_pos_last_resumes_with_minus_one(loaded: Any, corpus: Path, tmp_path: Path) -> None:
    folder = tmp_path / "ck"
    whole = core_stats.stats(loaded, str(corpus), StatsConfig(pos="last", shard_size=2, checkpoint=str(folder)))
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["fingerprint"]["pos"] == "last"  # what older versions wrote, too
    for extra in sorted(folder.glob("shard-*.npz"))[1:]:
        extra.unlink()
    again = core_stats.stats(
        loaded, str(corpus), StatsConfig(pos="-1", shard_size=2, checkpoint=str(folder), resume=True)
    )
    assert again.ran < whole.ran
    assert_same_stats(whole, again)


@pytest.mark.parametrize("pos", ["all", "last"])
def test_every_statistic_matches_the_eager_reference(loaded: Any, corpus: Path, pos: str) -> None:
    res = core_stats.stats(loaded, str(corpus), StatsConfig(pos=pos, shard_size=3))
    ids = [encode(loaded.tokenizer, p).ids for p in PROMPTS]
    ref = reference(loaded.model, ids, pos)
    for name in BASE:
        mean, std, n = ref[name]
        got = res.stats[name]
        assert got.n[0][0] == n and all(v == n for row in got.n for v in row), name
        np.testing.assert_allclose(np.array(got.mean, float), mean, rtol=1e-5, atol=1e-6, err_msg=name)
        np.testing.assert_allclose(np.array(got.std, float), std, rtol=1e-4, atol=1e-6, err_msg=name)
    assert res.corpus.used == len(PROMPTS) and res.corpus.positions == ref["sink"][2]
    assert ref["induction"][2] > 0 and ref["duplicate_token"][2] > 0


def test_the_interval_is_a_poisson_bootstrap_over_prompts(loaded: Any, corpus: Path) -> None:
    """Recomputed by hand: each prompt's sum and count, weighted by its Poisson(1) draws."""
    res = core_stats.stats(loaded, str(corpus), StatsConfig(bootstrap=50, seed=7))
    lines = np.arange(1, len(PROMPTS) + 1)
    weights = poisson_weights(7, lines, 50)  # (prompts, B)
    sums, counts = [], []
    for ids in (encode(loaded.tokenizer, p).ids for p in PROMPTS):
        a, _ = eager(loaded.model, ids)
        sums.append(a[:, :, np.arange(1, len(ids)), 0].sum(-1))  # sink, (L, H)
        counts.append(len(ids) - 1)
    reps = np.einsum("pb,plh->blh", weights, np.stack(sums)) / (np.array(counts) @ weights)[:, None, None]
    low, high = np.percentile(reps, [2.5, 97.5], axis=0)
    np.testing.assert_allclose(np.array(res.stats["sink"].ci_low, float), low, rtol=1e-5)
    np.testing.assert_allclose(np.array(res.stats["sink"].ci_high, float), high, rtol=1e-5)
    assert (np.array(res.stats["sink"].ci_low, float) < np.array(res.stats["sink"].mean, float)).all()


def test_massive_activations_match_the_layer_outputs(loaded: Any, corpus: Path) -> None:
    res = core_stats.stats(loaded, str(corpus))
    best: dict[int, tuple[float, int, int, int]] = {}
    for line, p in enumerate(PROMPTS, start=1):
        _, hidden = eager(loaded.model, encode(loaded.tokenizer, p).ids)
        for layer, h in enumerate(hidden):
            a = np.abs(h)
            pos, dim = np.unravel_index(int(a.argmax()), a.shape)
            if layer not in best or a.max() > best[layer][0]:
                best[layer] = (float(a.max()), int(dim), int(pos), line)
    for m in res.massive:
        value, dim, pos, line = best[m.layer]
        assert m.value == pytest.approx(value, rel=1e-5)
        assert (m.dim, m.position, m.line) == (dim, pos, line)
        assert m.prompts == len(PROMPTS) and 0 <= m.at_first <= m.prompts


def test_batch_size_shard_size_and_merge_order_do_not_change_the_result(loaded: Any, corpus: Path) -> None:
    one = core_stats.stats(loaded, str(corpus), StatsConfig(shard_size=32, batch_size=1))
    for shard_size, batch_size in ((1, 1), (3, 2), (32, 5)):
        other = core_stats.stats(loaded, str(corpus), StatsConfig(shard_size=shard_size, batch_size=batch_size))
        assert_same_stats(one, other)
    # shards merged in any order (as workers finish) give the same aggregates
    worker = StatsWorker(loaded, StatsConfig())
    items = [Item(line=i, prompt=p) for i, p in enumerate(PROMPTS, start=1)]
    parts = [worker.shard(items[k : k + 2]) for k in range(0, len(items), 2)]
    forward, backward = worker.empty(), worker.empty()
    for p in parts:
        forward.merge(p)
    for p in reversed(parts):
        backward.merge(p)
    names = StatsConfig().names(None)
    a, b = statistics(forward, names), statistics(backward, names)
    for name in names:
        assert rel(a[name].mean, b[name].mean) < 1e-12 and rel(a[name].ci_high, b[name].ci_high) < 1e-12
    assert rel(a["sink"].mean, one.stats["sink"].mean) < 1e-6
    roundtrip = Partial.from_bytes(forward.to_bytes())
    assert np.array_equal(roundtrip.boot_sum, forward.boot_sum) and roundtrip.skipped == forward.skipped


def test_chat_segments_and_the_norm_sink(loaded: Any, tmp_path: Path) -> None:
    rows = [
        {"messages": [{"role": "system", "content": "짧게 답한다."}, {"role": "user", "content": p}]} for p in PROMPTS
    ]
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    res = core_stats.stats(loaded, str(path), StatsConfig(measure="norm"), chat=ChatSpec())
    shares = sum(np.array(res.stats[f"segment.{k}"].mean, float) for k in ("template", "system", "user", "assistant"))
    np.testing.assert_allclose(shares, 1.0, atol=1e-5)  # every key belongs to one kind
    assert np.array(res.stats["segment.system"].mean, float).min() > 0
    norm_sink = np.array(res.stats["norm_sink"].mean, float)
    assert ((norm_sink >= 0) & (norm_sink <= 1)).all() and rel(norm_sink, res.stats["sink"].mean) > 1e-3


def test_cli_json_table_view_and_render(cli: Any, model_dir: Path, tmp_path: Path) -> None:
    path = write_corpus(tmp_path / "c.jsonl", PROMPTS, bad={2: "{broken", 5: '{"prompt": ""}', 7: '{"text": "x"}'})
    table = tmp_path / "t.csv"
    res = cli("stats", "--input", str(path), "--model", str(model_dir), "--json", "--table", str(table))
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["schema"] == "attnscope.stats/1"
    assert set(doc["stats"]) == set(BASE)
    assert set(doc["stats"]["sink"]) == {"mean", "std", "n", "ci_low", "ci_high"}
    assert [s["line"] for s in doc["corpus"]["skipped"]] == [2, 5, 7]
    assert doc["corpus"]["used"] == len(PROMPTS) and doc["corpus"]["lines"] == len(PROMPTS) + 3
    assert "line 2 skipped: not valid JSON" in res.stderr and res.stderr.splitlines()[-1].startswith(
        "attnscope: stats: "
    )
    with open(table, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 3 * 4 * len(BASE)
    first = next(r for r in rows if r["statistic"] == "induction" and r["layer"] == "1" and r["head"] == "2")
    assert float(first["mean"]) == pytest.approx(doc["stats"]["induction"]["mean"][1][2])
    saved = tmp_path / "s.json"
    saved.write_text(res.stdout, encoding="utf-8")
    for lang, words in (("en", "top 5 heads per role"), ("ko", "역할마다 평균이 높은 헤드")):
        shown = cli("render", str(saved), "--lang", lang, "--width", "150")
        assert shown.exit_code == 0, shown.stderr
        assert words in shown.stdout and "L0 " in shown.stdout
    svg = tmp_path / "s.svg"
    assert cli("render", str(saved), "--svg", str(svg)).exit_code == 0
    assert svg.read_text(encoding="utf-8").startswith("<svg") and "<title>L1 H2:" in svg.read_text(encoding="utf-8")


def test_finished_shards_are_merged_and_let_go_so_memory_does_not_grow_with_the_corpus(
    loaded: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shard's aggregates are merged as soon as its turn comes and then dropped, on a fresh run
    and on a resumed one: no more than two are ever alive, however many shards the corpus has."""
    import gc
    import weakref

    from attnscope.core.stats import aggregates as stats_agg

    path = write_corpus(tmp_path / "c.jsonl", PROMPTS * 2)
    alive: list[weakref.ref[Any]] = []
    most = 0
    original = stats_agg.Partial.merge

    def merge(self: Any, other: Any) -> None:
        nonlocal most
        alive.append(weakref.ref(other))
        gc.collect()
        most = max(most, sum(1 for r in alive if r() is not None))
        original(self, other)

    monkeypatch.setattr(stats_agg.Partial, "merge", merge)
    whole = core_stats.stats(loaded, str(path), StatsConfig(shard_size=1))
    assert len(alive) == len(PROMPTS) * 2 and most <= 2
    folder = tmp_path / "ck"
    core_stats.stats(
        loaded, str(write_corpus(tmp_path / "c.jsonl", PROMPTS * 2)), StatsConfig(shard_size=1, checkpoint=str(folder))
    )
    for extra in sorted(folder.glob("shard-*.npz"))[1::2]:  # every other shard to be run again
        extra.unlink()
    alive.clear()
    most = 0
    again = core_stats.stats(loaded, str(path), StatsConfig(shard_size=1, checkpoint=str(folder), resume=True))
    assert len(alive) == len(PROMPTS) * 2 and most <= 2
    assert_same_stats(whole, again)


def test_skipped_lines_are_reported_in_korean_with_korean_reasons(cli: Any, model_dir: Path, tmp_path: Path) -> None:
    """Every kind of bad line: the JSON keeps the English reason, the Korean stderr line words it in Korean."""
    bad = {
        2: "{broken",
        3: '["a list"]',
        4: '{"text": "x"}',
        5: '{"prompt": 7}',
        6: '{"prompt": "  "}',
        7: '{"prompt": "a"}',
    }
    path = write_corpus(tmp_path / "c.jsonl", PROMPTS, bad=bad)
    (tmp_path / "raw.bin").write_bytes(path.read_bytes() + b'{"prompt": "\xff\xfe"}\n')
    res = cli("stats", "--input", str(tmp_path / "raw.bin"), "--model", str(model_dir), "--json", "--lang", "ko")
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    reasons = {s["line"]: s["reason"] for s in doc["corpus"]["skipped"]}
    assert sorted(reasons) == [2, 3, 4, 5, 6, 7, len(PROMPTS) + len(bad) + 1]
    assert reasons[4] == "no field 'prompt'" and reasons[7].startswith("fewer than 2 tokens")
    shown = [line for line in res.stderr.splitlines() if "번째 줄을 건너뛰었다" in line]
    assert len(shown) == len(reasons), res.stderr
    for line in shown:
        reason = line.split("건너뛰었다: ", 1)[1]
        # no English sentence is left in a Korean line (the JSON decoder's own words may stay)
        for english in ("not valid", "expected", "no field", "is not a string", "is empty", "fewer than", "tokens"):
            assert english not in reason, line
    assert any("올바른 JSON이 아니다(2번째 칸" in line for line in shown), shown
    assert any("'prompt' 필드가 없다." in line for line in shown), shown
    assert any("토큰이 2개보다 적다." in line for line in shown), shown
    assert any("올바른 UTF-8이 아니다" in line for line in shown), shown


def test_parquet_table(cli: Any, model_dir: Path, corpus: Path, tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "t.parquet"
    res = cli("stats", "--input", str(corpus), "--model", str(model_dir), "--json", "--table", str(out))
    assert res.exit_code == 0, res.stderr
    table = pq.read_table(out)
    assert table.num_rows == 3 * 4 * len(BASE)
    assert table.column_names == ["layer", "head", "kv_head", "statistic", "mean", "std", "n", "ci_low", "ci_high"]


def _main(args: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "attnscope", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def test_ctrl_c_then_resume_equals_an_uninterrupted_run(cli: Any, model_dir: Path, tmp_path: Path) -> None:
    prompts = [f"{p} {i}" for i in range(8) for p in PROMPTS]  # 64 prompts, 32 shards of 2
    path = write_corpus(tmp_path / "big.jsonl", prompts)
    folder = tmp_path / "ckpt"
    args = ["stats", "--input", str(path), "--model", str(model_dir), "--shard-size", "2", "--json"]
    proc = _main([*args, "--checkpoint", str(folder)])
    deadline = time.monotonic() + 120
    while not list(folder.glob("shard-*.npz")) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert out == "" and err.strip().splitlines()[-1].startswith("attnscope: interrupted; ")
    assert "--resume" in err and "Traceback" not in err
    kept = len(list(folder.glob("shard-*.npz")))
    assert 0 < kept < 32, kept
    assert not list(folder.glob(".*.tmp"))  # nothing half-written is left behind
    resumed = cli(*args, "--checkpoint", str(folder), "--resume")
    assert resumed.exit_code == 0, resumed.stderr
    whole = cli(*args)
    a, b = json.loads(resumed.stdout), json.loads(whole.stdout)
    assert a["corpus"]["used"] == b["corpus"]["used"] == 64
    assert a["corpus"]["positions"] == b["corpus"]["positions"]
    for name in a["stats"]:
        for part in ("mean", "std", "n", "ci_low", "ci_high"):
            assert rel(a["stats"][name][part], b["stats"][name][part]) < 1e-9, (name, part)
    assert a["histograms"] == b["histograms"] and a["massive"] == b["massive"]
    assert len(list(folder.glob("shard-*.npz"))) == 32


def test_resume_refuses_a_checkpoint_of_other_options_or_another_model(
    cli: Any, model_dir: Path, model_dir_gqa7: Path, corpus: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "ck"
    base = ["stats", "--input", str(corpus), "--json", "--checkpoint", str(folder)]
    one_error(cli(*base, "--model", str(tmp_path / "no-such-model")), 3, "no such file or folder")
    assert not list(folder.glob("shard-*.npz"))
    assert cli(*base, "--model", str(model_dir)).exit_code == 0  # a checkpoint that kept nothing is no obstacle
    one_error(cli(*base, "--model", str(model_dir)), 2, "already holds a checkpoint", "--resume")
    one_error(cli(*base, "--model", str(model_dir), "--resume", "--pos", "last"), 2, "another --pos", '"all"')
    one_error(cli(*base, "--model", str(model_dir_gqa7), "--resume"), 2, "another model")
    one_error(cli(*base, "--model", str(model_dir), "--resume", "--seed", "3"), 2, "another --seed")
    other = write_corpus(tmp_path / "other.jsonl", PROMPTS[:3])
    one_error(
        cli("stats", "--input", str(other), "--checkpoint", str(folder), "--resume", "--model", str(model_dir)),
        2,
        "another input file",
    )
    one_error(
        cli(
            "stats",
            "--input",
            str(corpus),
            "--checkpoint",
            str(tmp_path / "none"),
            "--resume",
            "--model",
            str(model_dir),
        ),
        2,
        "holds no stats checkpoint",
    )


def test_bad_lines_strict_and_no_usable_line(cli: Any, model_dir: Path, tmp_path: Path) -> None:
    path = write_corpus(tmp_path / "c.jsonl", PROMPTS[:3], bad={2: "{broken"})
    one_error(cli("stats", "--input", str(path), "--model", str(model_dir), "--strict"), 6, "line 2", "--strict")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{broken\n{"prompt": ""}\n{"other": 1}\n', encoding="utf-8")
    one_error(cli("stats", "--input", str(bad), "--model", str(model_dir)), 6, "no usable line (3 skipped; line 1")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    one_error(cli("stats", "--input", str(empty), "--model", str(model_dir)), 6, "no prompts in it")
    one_error(cli("stats", "--input", str(tmp_path / "missing.jsonl"), "--model", str(model_dir)), 6, "missing.jsonl")


@pytest.mark.parametrize(
    "extra,code,fragment",
    [
        (["--resume"], 2, "--resume needs --checkpoint DIR"),
        (["--workers", "2"], 2, "--workers, --address and --retries are for --engine ray"),
        (["--retries", "1"], 2, "--workers, --address and --retries are for --engine ray"),
        (["--engine", "ray", "--retries", "-1"], 2, "--retries must be 0 or more (got -1)"),
        (["--engine", "ray", "--workers", "0"], 2, "--workers must be at least 1 (got 0)"),
        (["--engine", "spark"], 2, "--engine 'spark': use local or ray"),
        (["--pos", "first"], 2, "--pos 'first' is not a number; use an index, a list or a range"),
        (["--pos", "0"], 2, "--pos '0': position 0 can only attend to itself; stats counts query positions from 1"),
        (["--pos", "0-3"], 2, "--pos '0-3': position 0 can only attend to itself"),
        (["--table", "out.txt"], 2, "name a .csv or .parquet file"),
        (["--bootstrap", "3"], 2, "--bootstrap must be at least 10"),
        (["--max-tokens", "1"], 2, "--max-tokens must be at least 2"),
        (["--system", "짧게"], 2, "--system needs --chat"),
    ],
)
def test_bad_options(cli: Any, model_dir: Path, corpus: Path, extra: list[str], code: int, fragment: str) -> None:
    one_error(cli("stats", "--input", str(corpus), "--model", str(model_dir), *extra), code, fragment)


def test_engine_ray_without_ray_says_how_to_install_it(
    cli: Any, model_dir: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    monkeypatch.setitem(sys.modules, "ray.data", None)
    one_error(
        cli("stats", "--input", str(corpus), "--model", str(model_dir), "--engine", "ray"),
        2,
        "pip install 'attnscope[ray]'",
    )


def test_an_unreachable_address_fails_within_seconds(cli: Any, model_dir: Path, corpus: Path) -> None:
    pytest.importorskip("ray")
    t0 = time.monotonic()
    for address in ("127.0.0.1:9", "10.255.255.1:6379"):
        args = ["stats", "--input", str(corpus), "--model", str(model_dir), "--engine", "ray", "--address", address]
        one_error(cli(*args), 4, f"--address {address}: no Ray cluster can be reached there")
    assert time.monotonic() - t0 < 60
    one_error(
        cli("stats", "--input", str(corpus), "--model", str(model_dir), "--engine", "ray", "--address", "head"),
        2,
        "write it as HOST:PORT",
    )


def test_max_tokens_cuts_and_counts(loaded: Any, corpus: Path) -> None:
    res = core_stats.stats(loaded, str(corpus), StatsConfig(max_tokens=5))
    longer = sum(1 for p in PROMPTS if len(encode(loaded.tokenizer, p).ids) > 5)
    assert res.corpus.truncated == longer > 0
    assert res.corpus.positions == sum(min(len(encode(loaded.tokenizer, p).ids), 5) - 1 for p in PROMPTS)


def test_arrays_file_holds_the_grids_and_renders_with_the_json(
    cli: Any, model_dir: Path, corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from attnscope.results.arrays import inline

    monkeypatch.chdir(tmp_path)
    whole = json.loads(cli("stats", "--input", str(corpus), "--model", str(model_dir), "--json").stdout)
    res = cli("stats", "--input", str(corpus), "--model", str(model_dir), "--json", "--arrays", "grids.npz")
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["arrays"]["format"] == "npz" and "stats.sink.mean" in doc["arrays"]["keys"]
    assert not isinstance(doc["stats"]["sink"]["mean"], list)  # a reference to the file, not the grid
    back = inline(doc, tmp_path)
    assert back["stats"] == whole["stats"] and back["histograms"] == whole["histograms"]
    (tmp_path / "doc.json").write_text(res.stdout, encoding="utf-8")
    shown = cli("render", "doc.json", "--width", "150")
    assert shown.exit_code == 0, shown.stderr
    assert "top 5 heads per role" in shown.stdout
