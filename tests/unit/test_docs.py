"""The generated docs match the code, and the docs' example machinery works (no model)."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from attnscope.devtools import examples, json_reference

ROOT = Path(__file__).resolve().parents[2]


def test_json_reference_is_up_to_date() -> None:
    committed = (ROOT / "docs" / "json-reference.md").read_text(encoding="utf-8")
    assert committed == json_reference.generate(), (
        f"docs/json-reference.md differs from the result dataclasses; run: {json_reference.COMMAND}"
    )


def test_json_reference_covers_every_schema_and_field() -> None:
    import dataclasses

    from attnscope.results.registry import RESULT_TYPES

    text = json_reference.generate()
    for cls in RESULT_TYPES:
        assert f"## `{cls.SCHEMA}`" in text
        for f in dataclasses.fields(cls):
            assert f"| `{f.name}` |" in text


def _bench_report() -> object:
    spec = importlib.util.spec_from_file_location("bench_report", ROOT / "bench" / "report.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("source", sorted((ROOT / "bench" / "results").glob("*.json")), ids=lambda p: p.name)
def test_bench_table_is_what_bench_run_writes(source: Path) -> None:
    report = _bench_report()
    doc = json.loads(source.read_text())
    if doc.get("schema") not in report.WRITERS:  # type: ignore[attr-defined]
        pytest.skip("no report is written for this result")
    table = source.with_suffix(".md")
    assert table.exists(), f"{table.name} is missing; run: python bench/run.py --table-only --name {source.stem}"
    assert table.read_text() == report.render(doc), (  # type: ignore[attr-defined]
        f"{table.name} differs from {source.name}; run: python bench/run.py --table-only --name {source.stem}"
    )


def test_bench_reads_every_target_from_the_performance_page() -> None:
    limits = _bench_report().targets()  # type: ignore[attr-defined]
    expected = {"capture", "capture_0_3", "capture_norm", "long_prompt_tokens", "long_prompt_gb"}
    expected |= {"generate_capture", "startup_help_s", "startup_s"}
    assert set(limits) == expected
    assert all(float(value) > 0 for value in limits.values())


def test_readme_is_short_and_keeps_the_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    assert "python3 -m pytest" in readme  # .ci/run says it runs the README's test command


def _markdown_pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def test_relative_links_point_at_files_that_exist() -> None:
    missing = []
    for page in _markdown_pages():
        text = page.read_text(encoding="utf-8")
        text = re.sub(r"```.*?```", "", text, flags=re.S)  # links inside code are not links
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = (page.parent / target.split("#", 1)[0]).resolve()
            if not path.exists():
                missing.append(f"{page.relative_to(ROOT)}: {target}")
    assert not missing, missing


def test_every_example_marker_parses() -> None:
    count = 0
    for page in _markdown_pages():
        count += len(examples.parse(page).examples)  # raises SystemExit on a malformed marker
    assert count > 0


PAGE = """# demo

````markdown
<!-- example -->
```console
$ not run: this marker is inside an unmarked block
```
````

<!-- example-file: input.txt -->
```
hello from a file
```

<!-- example -->
```console
$ cat input.txt
stale output
```

text between

<!-- example: exit=3 stderr -->
```console
$ echo to-stderr >&2; exit 3
```

<!-- example -->
```console
$ printf 'a  \\nb\\n'
$ echo "$COLUMNS $NO_COLOR" && test -L samples
```
"""

EXPECTED = """# demo

````markdown
<!-- example -->
```console
$ not run: this marker is inside an unmarked block
```
````

<!-- example-file: input.txt -->
```
hello from a file
```

<!-- example -->
```console
$ cat input.txt
hello from a file
```

text between

<!-- example: exit=3 stderr -->
```console
$ echo to-stderr >&2; exit 3
to-stderr
[exit 3]
```

<!-- example -->
```console
$ printf 'a  \\nb\\n'
a
b
$ echo "$COLUMNS $NO_COLOR" && test -L samples
100 1
```
"""


def test_examples_rewrites_outputs_and_is_idempotent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = tmp_path / "model.gguf"
    model.write_bytes(b"")
    monkeypatch.setenv("ATTNSCOPE_MODEL", str(model))
    page = tmp_path / "page.md"
    page.write_text(PAGE, encoding="utf-8")
    assert examples.main([str(page)]) == 0
    assert page.read_text(encoding="utf-8") == EXPECTED
    assert examples.main([str(page)]) == 0
    assert page.read_text(encoding="utf-8") == EXPECTED
    assert examples.main([str(page), "--check"]) == 0


def test_examples_check_fails_on_a_wrong_exit_status_and_keeps_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATTNSCOPE_MODEL", str(tmp_path))
    page = tmp_path / "page.md"
    text = "<!-- example -->\n```console\n$ exit 4\nold\n```\n"
    page.write_text(text, encoding="utf-8")
    assert examples.main([str(page), "--check"]) == 1
    assert examples.main([str(page)]) == 1
    assert page.read_text(encoding="utf-8") == text


def test_examples_run_this_checkouts_attnscope(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTNSCOPE_MODEL", str(tmp_path))
    page = tmp_path / "page.md"
    page.write_text("<!-- example -->\n```console\n$ attnscope --version\n```\n", encoding="utf-8")
    assert examples.main([str(page)]) == 0
    from attnscope import __version__

    assert f"attnscope {__version__}" in page.read_text(encoding="utf-8")


def test_generators_run_as_documented() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "attnscope.devtools.json_reference", "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
