"""weights: --measure norm, the sink line, who looks hardest, largest-remainder sums, long prompts."""

from __future__ import annotations

import json

import pytest

from support import SEED


@pytest.mark.slow
def test_real_model_seed_view_names_the_sink_and_the_note_head(real_model, cli):
    for lang, sink, arrow in (("en", "attention sink", "←"), ("ko", "어텐션 싱크", "→")):
        res = cli("weights", SEED, "--query", "그것을", "--model", str(real_model), "--lang", lang, "--width", "120")
        assert res.exit_code == 0, res.stderr
        assert sink in res.stdout
        line = next(line for line in res.stdout.splitlines() if line.startswith("사과를") and arrow in line)
        assert "L20 H6" in line and "0.67" in line
    doc = json.loads(
        cli("weights", SEED, "--query", "그것을", "--model", str(real_model), "--measure", "norm", "--json").stdout
    )
    assert doc["completeness_max_diff"] <= 1e-4
