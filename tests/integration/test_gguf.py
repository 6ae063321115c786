"""The GGUF loading path and its cache, on a tiny qwen2 GGUF written here with ``gguf``.

The file carries what transformers reads from a llama.cpp GGUF: ``qwen2.*`` shape keys,
a byte-level BPE tokenizer (``tokenizer.ggml.model = gpt2``, tokens, token types,
merges, special ids, chat template) and F32 tensors under llama.cpp's names. It holds the
same weights as the ``model_dir`` fixture, so rows through the GGUF path must equal the
rows of the HF folder. ``ATTNSCOPE_CACHE`` points at a tmp dir in every test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

from attnscope import model
from attnscope.capture import engine
from attnscope.cli.terminal import Terminal
from attnscope.errors import AttnscopeError, ExitCode
from attnscope.model.said import Said

from support import SEED
from support.gguf import write_tiny_gguf


@pytest.fixture(scope="session")
def tiny_gguf(model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_gguf(model_dir, tmp_path_factory.mktemp("gguf") / "tiny-qwen2-f32.gguf")


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("ATTNSCOPE_CACHE", str(root))
    return root


@pytest.fixture()
def conversions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records every read of a GGUF that a conversion does: its tokenizer, its weights."""
    import transformers

    from attnscope.model import gguf_cache

    calls: list[str] = []
    original = transformers.AutoTokenizer.from_pretrained

    def spy(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("gguf_file"):
            calls.append("tokenizer")
        return original(*args, **kwargs)

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", spy)
    stream = gguf_cache._stream_gguf_weights

    def weights(*args: Any, **kwargs: Any) -> Any:
        calls.append("weights")
        return stream(*args, **kwargs)

    monkeypatch.setattr(gguf_cache, "_stream_gguf_weights", weights)
    return calls


def rows_for(loaded: Any, text: str) -> torch.Tensor:
    ids = torch.tensor([loaded.tokenizer(text)["input_ids"]])  # (1, T)
    T = ids.shape[1]
    got = engine.run(
        loaded.model,
        ids,
        torch.ones_like(ids),
        engine.Request(positions=torch.arange(T)[None], layers=frozenset(range(loaded.info.num_hidden_layers))),
    )
    return torch.stack([got.rows[layer] for layer in sorted(got.rows)])  # (L, 1, H, T, T)


def test_gguf_rows_match_the_hf_folder(tiny_gguf: Path, cache: Path, loaded: Any, conversions: list[str]) -> None:
    from_gguf = model.load(str(tiny_gguf), device="cpu", dtype="float32")
    assert from_gguf.source == "gguf"
    assert conversions == ["tokenizer", "weights"]  # converted once
    info = from_gguf.info
    assert (info.num_hidden_layers, info.num_attention_heads, info.num_key_value_heads, info.head_dim) == (3, 4, 2, 8)
    assert from_gguf.model.config.max_position_embeddings == 128
    text = SEED + " héllo 😀 The cat"
    assert from_gguf.tokenizer(text)["input_ids"] == loaded.tokenizer(text)["input_ids"]
    assert from_gguf.tokenizer.apply_chat_template(
        [{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True
    ) == loaded.tokenizer.apply_chat_template(
        [{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True
    )
    a, b = rows_for(from_gguf, text), rows_for(loaded, text)
    assert a.shape == b.shape
    assert float((a - b).abs().max()) < 1e-6


def test_second_load_uses_the_cache(tiny_gguf: Path, cache: Path, conversions: list[str]) -> None:
    first = model.load(str(tiny_gguf), device="cpu", dtype="float32")
    assert len(conversions) == 2
    digest = model.file_sha256(tiny_gguf)
    target = cache / "gguf" / f"{digest[:24]}-float32"
    assert Path(first.path) == target
    assert (target / "model.safetensors").is_file() and (target / "config.json").is_file()
    assert json.loads((target / "source.json").read_text())["sha256"] == digest

    second = model.load(str(tiny_gguf), device="cpu", dtype="float32")
    assert len(conversions) == 2  # nothing reconverted
    assert second.path == first.path
    tok = model.load_tokenizer(str(tiny_gguf))
    assert len(conversions) == 2  # the tokenizer also comes from the cache
    assert tok(SEED)["input_ids"] == first.tokenizer(SEED)["input_ids"]

    # The cache is keyed by dtype too: bfloat16 is a second entry, cast from the float32 one
    # without reading the GGUF again.
    bf16 = model.load(str(tiny_gguf), device="cpu", dtype="bfloat16")
    assert len(conversions) == 2
    assert Path(bf16.path).name == f"{digest[:24]}-bfloat16"
    assert next(bf16.model.parameters()).dtype == torch.bfloat16
    assert sorted(p.name for p in (cache / "gguf").iterdir()) == [f"{digest[:24]}-bfloat16", f"{digest[:24]}-float32"]
    assert json.loads((Path(bf16.path) / "config.json").read_text())["torch_dtype"] == "bfloat16"
    assert bf16.tokenizer(SEED)["input_ids"] == first.tokenizer(SEED)["input_ids"]


def test_cast_cache_equals_a_direct_conversion(
    tiny_gguf: Path, cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, conversions: list[str]
) -> None:
    from safetensors.torch import load_file

    model.load(str(tiny_gguf), device="cpu", dtype="float32")
    cast = Path(model.load(str(tiny_gguf), device="cpu", dtype="float16").path)
    assert len(conversions) == 2  # float16 came from the float32 entry
    monkeypatch.setenv("ATTNSCOPE_CACHE", str(tmp_path / "other-cache"))
    direct = Path(model.load(str(tiny_gguf), device="cpu", dtype="float16").path)
    assert len(conversions) == 4  # no float32 entry there: dequantized from the GGUF
    a, b = load_file(str(cast / "model.safetensors")), load_file(str(direct / "model.safetensors"))
    assert set(a) == set(b)
    assert all(a[name].dtype == torch.float16 and torch.equal(a[name], b[name]) for name in a)
    assert json.loads((cast / "config.json").read_text()) == json.loads((direct / "config.json").read_text())


def test_changed_file_is_converted_again(tiny_gguf: Path, cache: Path, tmp_path: Path, conversions: list[str]) -> None:
    copy = tmp_path / "copy.gguf"
    copy.write_bytes(tiny_gguf.read_bytes())
    model.load(str(copy), device="cpu", dtype="float32")
    assert len(conversions) == 2
    data = bytearray(copy.read_bytes())
    data[-4:] = b"\x00\x00\x00\x40"  # last float of the last tensor (a norm weight, 1.0) becomes 2.0
    copy.write_bytes(bytes(data))
    model.load(str(copy), device="cpu", dtype="float32")
    assert len(conversions) == 4
    assert len(list((cache / "gguf").iterdir())) == 2


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda good: b"GGUF" + b"\x00\x17" * 100, id="garbage"),
        pytest.param(lambda good: good[: len(good) // 2], id="truncated-in-tensors"),
        pytest.param(lambda good: good[:5000], id="truncated-in-metadata"),
        pytest.param(lambda good: b"", id="empty"),
    ],
)
def test_corrupt_gguf_is_one_clear_error(tiny_gguf: Path, cache: Path, tmp_path: Path, make: Any, cli: Any) -> None:
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(make(tiny_gguf.read_bytes()))
    with pytest.raises(AttnscopeError) as err:
        model.load(str(bad), device="cpu", dtype="float32")
    assert err.value.code == ExitCode.MODEL
    assert "not a readable GGUF" in err.value.message and "\n" not in err.value.message
    assert not (cache / "gguf").is_dir() or not any((cache / "gguf").iterdir())  # nothing half-written is cached
    for command in ("weights", "tokens"):
        res = cli(command, SEED, "--model", str(bad))
        assert res.exit_code == ExitCode.MODEL
        assert res.stdout == ""
        errors = [line for line in res.stderr.splitlines() if "error" in line]
        assert len(errors) == 1 and str(bad) in errors[0]
        assert all(line.startswith("attnscope: ") for line in res.stderr.splitlines())
        assert "Traceback" not in res.stderr


def test_cli_on_gguf(tiny_gguf: Path, cache: Path, cli: Any, loaded: Any) -> None:
    res = cli("weights", SEED, "--model", str(tiny_gguf), "--layer", "1", "--head", "2", "--json")
    assert res.exit_code == 0, res.stderr
    assert any((cache / "gguf").iterdir())  # this run converted ...
    (line,) = res.stderr.splitlines()  # ... saying so in one line off a TTY: no progress lines, no tqdm bar
    entry = next(p for p in (cache / "gguf").iterdir() if p.is_dir())
    assert line == (
        f"attnscope: first use of {tiny_gguf.name}: converting it once to float32 (about 5 s; later runs take "
        f"seconds) into {entry}, about 0.0 GB"
    )
    doc = json.loads(res.stdout)
    assert doc["model"]["id"] == str(tiny_gguf)
    ref = cli("weights", SEED, "--model", loaded.path, "--layer", "1", "--head", "2", "--json")
    expected = json.loads(ref.stdout)["weights"]
    assert torch.allclose(torch.tensor(doc["weights"]), torch.tensor(expected), atol=1e-6)


def test_first_use_line_in_korean(tiny_gguf: Path, cache: Path, cli: Any) -> None:
    """--lang ko words the lines on stderr too: the cold-cache line reads as a Korean reader writes it."""
    res = cli("weights", SEED, "--model", str(tiny_gguf), "--lang", "ko", "--json")
    assert res.exit_code == 0, res.stderr
    entry = next(p for p in (cache / "gguf").iterdir() if p.is_dir())
    assert res.stderr.splitlines() == [
        f"attnscope: {tiny_gguf.name} 파일을 처음 쓴다. float32 형식으로 한 번 변환해 {entry}에 둔다(약 0.0 GB). "
        "약 5초 걸리고, 다음부터는 몇 초면 된다"
    ]


def test_damaged_cache_says_which_folder_to_delete(tiny_gguf: Path, cache: Path, conversions: list[str]) -> None:
    import shutil

    first = model.load(str(tiny_gguf), device="cpu", dtype="float32")
    target = Path(first.path)
    weights = target / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:50_000])  # a half-written or truncated cache entry
    with pytest.raises(AttnscopeError) as err:
        model.load(str(tiny_gguf), device="cpu", dtype="float32")
    assert err.value.code == ExitCode.MODEL
    assert "SafetensorError" in err.value.message
    assert f"the cached conversion in {target} looks damaged: delete that folder" in err.value.message
    shutil.rmtree(target)
    again = model.load(str(tiny_gguf), device="cpu", dtype="float32")
    assert len(conversions) == 4 and again.path == first.path  # converted again, into the same place


def test_unsupported_architecture_is_refused_before_converting(
    tmp_path: Path, cache: Path, conversions: list[str], cli: Any
) -> None:
    import gguf
    import numpy as np

    path = tmp_path / "tiny-mamba.gguf"
    writer = gguf.GGUFWriter(str(path), "mamba")
    writer.add_block_count(1)
    writer.add_context_length(128)
    writer.add_embedding_length(16)
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list(["a", "b", "ab"])
    writer.add_token_merges(["a b"])
    writer.add_tensor("token_embd.weight", np.zeros((3, 16), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(AttnscopeError) as err:
        model.load(str(path), device="cpu", dtype="float32")
    assert err.value.code == ExitCode.MODEL
    assert "a 'mamba' model (the GGUF's general.architecture) does not run its attention through" in err.value.message
    assert conversions == []  # refused from the header, before any dequantizing
    res = cli("weights", SEED, "--model", str(path))
    assert res.exit_code == ExitCode.MODEL and res.stdout == ""
    assert "converting" not in res.stderr


def _stderr_of(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


def test_two_processes_at_once_convert_once(tiny_gguf: Path, tmp_path: Path) -> None:
    """Two runs on a cold cache: one converts, the other waits for it and says so.

    The test holds the entry's lock first, as a converting run would (the lock file with a
    live pid, its own), so that both runs are surely waiting on it together when it is
    released; then exactly one converts.
    """
    import hashlib
    import os
    import subprocess
    import sys
    import time

    root = Path(__file__).resolve().parents[2]
    cache = tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": str(root), "ATTNSCOPE_CACHE": str(cache)}
    env.pop("ATTNSCOPE_DEBUG", None)
    digest = hashlib.sha256(tiny_gguf.read_bytes()).hexdigest()  # the cache key, computed here
    entry = cache / "gguf" / f"{digest[:24]}-float32"
    lock = entry.with_name(entry.name + ".lock")
    lock.parent.mkdir(parents=True)
    lock.write_text(f"{os.getpid()}\n")
    errs = [tmp_path / f"err{i}.txt" for i in range(2)]
    procs = []
    try:
        for err in errs:
            with err.open("w") as fh:
                procs.append(
                    subprocess.Popen(
                        [sys.executable, "-m", "attnscope", "weights", SEED, "--model", str(tiny_gguf), "--json"],
                        stdout=subprocess.PIPE,
                        stderr=fh,
                        env=env,
                        cwd=root,
                    )
                )
        deadline = time.monotonic() + 240
        while not all("waiting" in _stderr_of(e) for e in errs):
            assert time.monotonic() < deadline, [_stderr_of(e) for e in errs]
            assert all(p.poll() is None for p in procs), [_stderr_of(e) for e in errs]
            time.sleep(0.2)
    finally:
        lock.unlink()
    outs = [p.communicate(timeout=240)[0] for p in procs]
    stderrs = [_stderr_of(e) for e in errs]
    assert [p.returncode for p in procs] == [0, 0], stderrs
    for err in stderrs:
        assert err.splitlines()[0] == (
            f"attnscope: another attnscope process (pid {os.getpid()}) is converting {tiny_gguf.name}; "
            f"waiting for it to finish ({lock})"
        )
    converted = [line for err in stderrs for line in err.splitlines() if "converting it once" in line]
    assert len(converted) == 1, stderrs  # one conversion for two runs
    assert json.loads(outs[0])["weights"] == json.loads(outs[1])["weights"]
    assert [p.name for p in (cache / "gguf").iterdir()] == [entry.name]  # no temp folder, no lock file left


def test_stale_lock_and_temp_folder_of_a_killed_run(tiny_gguf: Path, cache: Path, conversions: list[str]) -> None:
    digest = model.file_sha256(tiny_gguf)
    entry = cache / "gguf" / f"{digest[:24]}-float32"
    entry.parent.mkdir(parents=True)
    entry.with_name(entry.name + ".lock").write_text("999999\n")  # left by a run that was killed
    stale = entry.with_name(entry.name + ".tmp999999")
    stale.mkdir()
    (stale / "model.safetensors").write_bytes(b"half")
    notices: list[Said] = []
    got = model.load(str(tiny_gguf), device="cpu", dtype="float32", notice=notices.append)
    assert got.path == str(entry) and not stale.exists()
    assert conversions == ["tokenizer", "weights"]
    assert len(notices) == 1 and notices[0].key == "first_use_size" and notices[0].values["file"] == tiny_gguf.name


def test_gguf_tqdm_goes_to_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    import transformers.modeling_gguf_pytorch_utils as gguf_utils

    from attnscope.model import gguf_cache

    seen: list[Said] = []
    with gguf_cache._gguf_bar_as_progress(seen.append):
        items: Any = list(gguf_utils.tqdm(range(20), desc="Converting and de-quantizing GGUF tensors..."))
    assert items == list(range(20))
    assert seen[0].key == seen[-1].key == "dequantizing"
    assert seen[0].values["done"] == "0" and seen[-1].values["done"] == "16" and seen[0].values["total"] == "20"
    assert Terminal("en").worded(seen[0]).startswith("dequantizing GGUF tensors: 0/20")
    assert gguf_utils.tqdm.__module__.startswith("tqdm")  # put back


def _entry_tensors(entry: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    got: dict[str, torch.Tensor] = {}
    for file in sorted(entry.glob("*.safetensors")):
        got.update(load_file(str(file)))
    return got


@pytest.mark.parametrize(
    ("arch", "quantized"),
    [("qwen2", False), ("qwen2", True), ("llama", True)],
    ids=["qwen2-f32", "qwen2-q8_0", "llama-q8_0"],
)
def test_streamed_conversion_equals_transformers_load(
    model_dir: Path, tmp_path: Path, cache: Path, arch: str, quantized: bool, conversions: list[str]
) -> None:
    """The tensor-by-tensor conversion holds exactly what transformers' own loading of the file
    holds: every weight, bit for bit (Q8_0 blocks and F16 dequantized by gguf; for llama, q and k
    rows put back in transformers' order and the biases dropped), and the same config."""
    from transformers import AutoModelForCausalLM

    from support.gguf import write_tiny_gguf

    path = write_tiny_gguf(model_dir, tmp_path / f"tiny-{arch}.gguf", arch=arch, quantized=quantized)
    entry = Path(model.load(str(path), device="cpu", dtype="float32").path)
    assert conversions == ["tokenizer", "weights"]
    theirs = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
    ours = _entry_tensors(entry)
    state = theirs.state_dict()
    tied = theirs.config.tie_word_embeddings
    assert set(ours) == set(state) - ({"lm_head.weight"} if tied else set())
    for name, tensor in ours.items():
        assert tensor.dtype == torch.float32 and torch.equal(tensor, state[name]), name
    config = json.loads((entry / "config.json").read_text())
    assert config["model_type"] == theirs.config.model_type and config["dtype"] == "float32"
    if arch == "llama":  # the reorder ran: q differs from the folder's own q_proj
        from safetensors.torch import load_file

        plain = load_file(str(model_dir / "model.safetensors"))["model.layers.0.self_attn.q_proj.weight"]
        assert not torch.equal(ours["model.layers.0.self_attn.q_proj.weight"], plain)
    if quantized:
        assert not torch.equal(
            ours["model.layers.0.mlp.up_proj.weight"], state["model.layers.0.mlp.up_proj.weight"] * 0
        )

    bf16 = Path(model.load(str(path), device="cpu", dtype="bfloat16").path)
    assert all(torch.equal(t, ours[n].to(torch.bfloat16)) for n, t in _entry_tensors(bf16).items())


def test_shards_write_load_and_cast(
    tiny_gguf: Path, cache: Path, loaded: Any, monkeypatch: pytest.MonkeyPatch, conversions: list[str]
) -> None:
    """A model bigger than one shard is written as shards with an index, loads from them, and casts
    from them; its tensors are those of a one-file conversion."""
    from attnscope.model import gguf_cache

    one_file = _entry_tensors(Path(model.load(str(tiny_gguf), device="cpu", dtype="float32").path))
    monkeypatch.setenv("ATTNSCOPE_CACHE", str(cache / "sharded"))
    monkeypatch.setattr(gguf_cache, "SHARD_BYTES", 40_000)
    sharded = model.load(str(tiny_gguf), device="cpu", dtype="float32")
    entry = Path(sharded.path)
    files = sorted(p.name for p in entry.glob("*.safetensors"))
    assert len(files) > 2 and files[0] == f"model-00001-of-{len(files):05d}.safetensors"
    index = json.loads((entry / "model.safetensors.index.json").read_text())
    assert sorted(set(index["weight_map"].values())) == files and set(index["weight_map"]) == set(one_file)
    assert not list(entry.glob(".shard*"))  # no body file left
    got = _entry_tensors(entry)
    assert set(got) == set(one_file) and all(torch.equal(got[n], one_file[n]) for n in got)
    text = SEED + " The cat"
    assert float((rows_for(sharded, text) - rows_for(loaded, text)).abs().max()) < 1e-6
    cast = model.load(str(tiny_gguf), device="cpu", dtype="bfloat16")
    assert conversions == ["tokenizer", "weights"] * 2  # the bfloat16 one cast from the sharded float32 entry
    halves = _entry_tensors(Path(cast.path))
    assert set(halves) == set(one_file) and all(torch.equal(halves[n], one_file[n].to(torch.bfloat16)) for n in halves)
