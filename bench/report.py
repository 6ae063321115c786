"""The report writer: ``bench/results/NAME.md`` from ``NAME.json``, for every result the benchmarks write.

A forward/generate result (``attnscope.bench/1``) becomes one row per (T, kind) with ratios to the
floor at the same T, then each target and whether it is met; a first-hour result
(``attnscope.bench-first-hour/1``) becomes one row per command. The targets are the table under
"Targets" in docs/performance.md, read each time a report is written. This module imports nothing
but the standard library, so a test can rebuild every committed table from its JSON.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TARGETS_PAGE = ROOT / "docs" / "performance.md"
BENCH_SCHEMA = "attnscope.bench/1"
FIRST_HOUR_SCHEMA = "attnscope.bench-first-hour/1"
# What each kind is called in the table, in the order its rows come (at the same T).
LABELS = {
    "plain": "plain sdpa forward (floor)",
    "eager": "eager output_attentions",
    "capture": "attnscope capture, all layers",
    "capture_0_3": "attnscope capture, layers 0-3",
    "capture_norm": "attnscope capture + --measure norm, all layers",
    "generate_plain": "transformers generate, greedy (floor)",
    "generate_loop": "attnscope decode loop, no capture",
    "generate_capture": "attnscope generate, rows of all layers",
}
DASHES = "| – | – | – | – | – | – | – |"


# --- targets --------------------------------------------------------------------------------------


def targets(page: Path = TARGETS_PAGE) -> dict[str, str]:
    """The targets table of docs/performance.md: name -> limit, as written there (``"1.05"``)."""
    rows: dict[str, str] = {}
    inside = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("| target | limit |"):
            inside = True
            continue
        if inside and not line.startswith("|"):
            break
        m = re.match(r"\| `(\w+)` \| ([0-9.]+) \|", line)
        if inside and m:
            rows[m.group(1)] = m.group(2)
    if not rows:
        raise SystemExit(f"bench: no '| target | limit |' table in {page}")
    return rows


def _verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def _find(doc: dict[str, Any], kind: str, n_tokens: int) -> dict[str, Any] | None:
    for r in doc["runs"]:
        if r["kind"] == kind and r["T"] == n_tokens and "time_s" in r:
            return dict(r)
    return None


def _generate_targets(doc: dict[str, Any], limits: dict[str, str]) -> list[str]:
    out = []
    limit = limits["generate_capture"]
    for n_tokens in sorted({r["T"] for r in doc["runs"] if r["kind"] == "generate_capture"}):
        base, cap = _find(doc, "generate_plain", n_tokens), _find(doc, "generate_capture", n_tokens)
        if base and cap:
            tr = cap["time_s"] / base["time_s"]
            cr = cap["cpu_s"] / base["cpu_s"]
            out.append(
                f"- T={n_tokens}+{cap.get('new')}: generation with capture takes {tr:.2f}× the wall time and "
                f"{cr:.2f}× the CPU time of transformers' generate (≤ {limit}×): {_verdict(tr <= float(limit))} "
                "(wall time on a machine shared with other work: compare the CPU column)"
            )
    return out


def _forward_targets(doc: dict[str, Any], n_tokens: int, limits: dict[str, str]) -> list[str]:
    out = []
    base, cap, part, norm = (_find(doc, k, n_tokens) for k in ("plain", "capture", "capture_0_3", "capture_norm"))
    if base and cap:
        tr = cap["time_s"] / base["time_s"]
        mr = cap["peak_rss_forward_mb"] / base["peak_rss_forward_mb"]
        limit = limits["capture"]
        ok = _verdict(tr <= float(limit) and mr <= float(limit))
        out.append(
            f"- T={n_tokens}: capture time {tr:.2f}× and peak RSS {mr:.2f}× the plain forward (≤ {limit}×): {ok}"
        )
    if cap and part:
        pr = part["time_s"] / cap["time_s"]
        limit = limits["capture_0_3"]
        out.append(
            f"- T={n_tokens}: layers 0-3 take {pr:.2f}× the time of all layers (≤ {limit}×): {_verdict(pr <= float(limit))}"
        )
    if cap and norm:
        nr = norm["time_s"] / cap["time_s"]
        cr = norm["cpu_s"] / cap["cpu_s"]
        limit = limits["capture_norm"]
        diff = norm.get("completeness_max_diff")
        out.append(
            f"- T={n_tokens}: capture with --measure norm takes {nr:.2f}× the wall time of --measure weight "
            f"(≤ {limit}×): {_verdict(nr <= float(limit))}; CPU time {cr:.2f}×"
            + ("" if diff is None else f"; completeness max |difference| {diff:.1e} over all layers")
        )
    if cap and n_tokens >= int(limits["long_prompt_tokens"]):
        gb = cap["peak_rss_forward_mb"] / 1024
        whole = (cap.get("process_peak_rss_mb") or 0) / 1024
        limit = limits["long_prompt_gb"]
        out.append(
            f"- T={n_tokens}: capture peak RSS {gb:.2f} GB during the forward, {whole:.2f} GB for the whole "
            f"process (≤ {limit} GB): {_verdict(max(gb, whole) <= float(limit))}"
        )
    return out


def _startup_targets(doc: dict[str, Any], limits: dict[str, str]) -> list[str]:
    out = []
    for c in doc.get("cli", []):
        if not c["command"].startswith("attnscope"):
            continue
        limit = limits["startup_help_s"] if c["command"].endswith("--help") else limits["startup_s"]
        if "error" in c:
            out.append(f"- `{c['command']}`: not measured ({c['error'][:100]})")
            continue
        # Judged on the median: a start-up that is only fast on a lucky run is not fast.
        ok = _verdict(c["median_s"] <= float(limit))
        runs = c.get("runs", 5)
        out.append(
            f"- `{c['command']}`: median {c['median_s']:.3f} s, best {c['best_s']:.3f} s of {runs} (≤ {limit} s): {ok}"
        )
    return out


def target_lines(doc: dict[str, Any], limits: dict[str, str]) -> list[str]:
    """One line per target that the runs in ``doc`` can judge: generation, then each T, then start-up."""
    out = _generate_targets(doc, limits)
    for n_tokens in sorted({r["T"] for r in doc["runs"]}):
        out += _forward_targets(doc, n_tokens, limits)
    return out + _startup_targets(doc, limits)


# --- the forward and generate table ------------------------------------------------------------------


def _gb(mb: float | None) -> str:
    return "–" if mb is None else f"{mb / 1024:.2f}"


def _peak_ratio(peak: float | None, base: dict[str, Any] | None) -> str:
    """The peak RSS over the floor's, or a dash where either is missing."""
    return f"{peak / base['peak_rss_forward_mb']:.2f}" if base and peak and base.get("peak_rss_forward_mb") else "–"


def _numbers(r: dict[str, Any], base: dict[str, Any] | None) -> str:
    """The time, CPU, peak and extra columns of a measured row, each with its ratio to ``base``."""
    t_ratio = f"{r['time_s'] / base['time_s']:.2f}" if base else "–"
    c_ratio = f"{r['cpu_s'] / base['cpu_s']:.2f}" if base and base.get("cpu_s") else "–"
    peak = r.get("peak_rss_forward_mb")
    extra = None if peak is None else peak - r["rss_before_forward_mb"]
    return (
        f"| {r['time_s']:.2f} | {t_ratio} | {r['cpu_s']:.2f} | {c_ratio} | {_gb(peak)} "
        f"| {_peak_ratio(peak, base)} | {_gb(extra)} |"
    )


def _forward_row(doc: dict[str, Any], r: dict[str, Any]) -> str:
    """A forward row: ratios to the plain forward at the same T."""
    kind, n_tokens = r["kind"], r["T"]
    start = f"| {n_tokens} | {LABELS[kind]} "
    if "skipped" in r:
        return f"{start}{DASHES} skipped: {r['skipped']} |"
    if "error" in r:
        return f"{start}{DASHES} failed: {r['error'][:120]} |"
    base = _find(doc, "plain", n_tokens)
    note = f"{len(r['times_s'])} run(s), {r['threads']} thread(s)"
    if r.get("gpu_peak_mb") is not None:
        note += f"; GPU peak {r['gpu_peak_mb'] / 1024:.2f} GB"
    if not base and kind != "plain":
        note += "; no plain run at this T"
    return f"{start}{_numbers(r, base)} {note} |"


def _generate_row(doc: dict[str, Any], r: dict[str, Any]) -> str:
    """A generation row: T is prompt+new, ratios to transformers' generate in the same process."""
    start = f"| {r['T']}+{r.get('new', '?')} | {LABELS[r['kind']]} "
    if "error" in r:
        return f"{start}{DASHES} failed: {r['error'][:120]} |"
    base = _find(doc, "generate_plain", r["T"])
    loads = r.get("load_averages") or []
    note = f"{len(r['times_s'])} run(s), {r['threads']} thread(s), load avg {min(loads):.1f}–{max(loads):.1f}"
    if r["kind"] != "generate_plain":
        note += f"; ids {'=' if r.get('same_ids_as_plain') else '≠'} transformers"
    if r.get("rows_kept_mb"):
        note += f"; rows kept {r['rows_kept_mb']:.0f} MB"
    return f"{start}{_numbers(r, base)} {note} |"


def _is_generation(r: dict[str, Any]) -> bool:
    return str(r["kind"]).startswith("generate")


def table(doc: dict[str, Any], limits: dict[str, str] | None = None) -> str:
    """The markdown report of a forward/generate result: one row per (T, kind), then the targets."""
    lines = [
        f"Model `{Path(doc['model']).name}` ({doc['num_hidden_layers']} layers × {doc['num_attention_heads']} heads), "
        f"{doc['device']}, dtype {doc['dtype']}; {doc['machine']['cpu']}, {doc['machine']['cores']} cores; "
        f"started {doc['started']} (load average {doc['machine']['load_average_at_start'][0]:.1f}).",
        "",
        "Time is the best wall time of the timed forwards after a warm-up, CPU the best process CPU time "
        "(user + system, all threads); peak RSS is the process's high-water mark during them (model weights "
        "included); 'extra' is that peak minus the RSS just before the forward.",
        "",
        "| T | run | time (s) | × plain | CPU (s) | × plain | peak RSS (GB) | × plain | extra (GB) | note |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    order = list(LABELS)
    for r in sorted(doc["runs"], key=lambda r: (_is_generation(r), r["T"], order.index(r["kind"]))):
        lines.append(_generate_row(doc, r) if _is_generation(r) else _forward_row(doc, r))
    lines += ["", "Targets (docs/performance.md):", ""]
    lines += target_lines(doc, limits or targets())
    if doc.get("cli"):
        lines += ["", "| command | best (s) | median (s) | peak RSS (MB) | note |", "|---|---:|---:|---:|---|"]
        for c in doc["cli"]:
            lines.append(
                f"| `{c['command']}` | {c['best_s']:.3f} | {c['median_s']:.3f} | {c['peak_rss_mb']:.0f} | {c.get('error', '')} |"
            )
    return "\n".join(lines) + "\n"


# --- the first-hour table ------------------------------------------------------------------------------


def first_hour_table(doc: dict[str, Any]) -> str:
    """The markdown report of a first-hour result: one row per command, then the API load and the cache."""
    lines = [
        f"First hour ({doc['tag']}), model `{Path(doc['model']).name}`, {doc['machine']['cpu']}, "
        f"{doc['machine']['cores']} cores, git {doc['git']}, started {doc['started']} "
        f"(load average {doc['machine']['load_average_at_start'][0]:.1f}). Wall time of the whole process, "
        "and its CPU time (user + system; less sensitive to other processes on the machine).",
        "",
        "| case | median (s) | best (s) | CPU median (s) | runs | exit | last stderr line |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    rows = list(doc["commands"]) + ([doc["cold"]] if "cold" in doc else [])
    for r in rows:
        last = (r["stderr"][-1] if r["stderr"] else "").replace("|", "\\|")
        lines.append(
            f"| {r['label']} | {r['median_s']:.2f} | {r['best_s']:.2f} | {r.get('cpu_median_s', 0):.2f} | {r['runs']} "
            f"| {r['exit']} | {last[:160]} |"
        )
    if "api_load" in doc:
        a = doc["api_load"]
        lines += [
            "",
            f"`attnscope.load(model)` in Python (warm cache): median {a['median_s']:.2f} s, best {a['best_s']:.2f} s "
            f"(whole process with import: median {a['process_median_s']:.2f} s"
            + (f", CPU {a['process_cpu_median_s']:.2f} s" if "process_cpu_median_s" in a else "")
            + ").",
        ]
    if "cold" in doc:
        lines += ["", f"Cold GGUF cache: the converted entry takes {doc['cold']['cache_mb']:.0f} MB on disk."]
    return "\n".join(lines) + "\n"


# --- files -------------------------------------------------------------------------------------------------

WRITERS = {BENCH_SCHEMA: table, FIRST_HOUR_SCHEMA: first_hour_table}


def render(doc: dict[str, Any]) -> str:
    """The markdown report of any benchmark result, chosen by its schema."""
    writer = WRITERS.get(doc.get("schema", ""))
    if writer is None:
        raise SystemExit(f"bench: no report for schema {doc.get('schema')!r}; known: {', '.join(WRITERS)}")
    return writer(doc)


def write(doc: dict[str, Any], out_dir: Path, name: str) -> None:
    """``out_dir/name.json`` and the report made from it, ``out_dir/name.md``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{name}.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    (out_dir / f"{name}.md").write_text(render(doc))


def rewrite(source: Path) -> Path:
    """Rewrite the report next to ``source`` (``NAME.json`` -> ``NAME.md``) without measuring; its path."""
    target = source.with_suffix(".md")
    target.write_text(render(json.loads(source.read_text())))
    return target
