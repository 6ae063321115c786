"""`rope`: speeds against the formula and the model's buffer, the relative check against complex rotation, a broken rotary."""

from __future__ import annotations

import json
import math

import pytest
import torch

from attnscope.core import rope as rope_mod
from attnscope.core.rope import rope
from attnscope.errors import AttnscopeError
from attnscope.render import Ctx, render, to_text
from attnscope.results import from_json

from support import SEED


def test_pairs_by_hand(loaded):
    r = rope(loaded, pos=10, deltas=[1, 5])
    assert r.rope_theta == 10000.0 and r.head_dim == 8 and len(r.pairs) == 4
    p1 = r.pairs[1]  # theta^(-2/8) = 10000^(-1/4) = 0.1
    assert p1.inv_freq == pytest.approx(0.1)
    assert p1.wavelength == pytest.approx(2 * math.pi / 0.1)
    assert p1.angle == pytest.approx(1.0)
    assert p1.dims == [1, 5]
    assert r.pairs[0].inv_freq == 1.0 and r.pairs[0].angle_deg == pytest.approx(math.degrees(10) % 360)
    assert r.inv_freq_max_rel_diff is not None and r.inv_freq_max_rel_diff < 1e-6


def complex_scores(q_pre, k_pre, m, theta):
    """Reference in float64 complex numbers: pair i is z = x_i + i x_(i+d/2), turned by e^(i pos theta_i).

    rot(q, m) . rot(k, n) = Re(sum_i q_i conj(k_i) e^(i (m - n) theta_i)): only m - n appears.
    """
    d = q_pre.shape[-1]
    half = d // 2
    inv = torch.tensor([theta ** (-2 * i / d) for i in range(half)], dtype=torch.float64)
    qz = torch.complex(q_pre[:half].double(), q_pre[half:].double())  # (D/2,)
    kz = torch.complex(k_pre[:, :half].double(), k_pre[:, half:].double())  # (N, D/2)
    n = torch.arange(k_pre.shape[0], dtype=torch.float64)[:, None]
    turn = torch.polar(torch.ones_like(n * inv), (m - n) * inv)  # (N, D/2)
    return (qz * kz.conj() * turn).real.sum(-1)


def test_relative_check_against_complex_rotation(loaded):
    r = rope(loaded, layer=1, head=2, prompt=SEED, deltas=[1, 3, 50])
    rc = r.relative_check
    ids = loaded.tokenizer(SEED)["input_ids"]
    m = len(ids) - 1
    assert rc.query_pos == m and rc.keys == list(range(m + 1)) and rc.kv_head == 1
    proj = rope_mod.project(loaded.model, ids, 1, [m])
    ref = complex_scores(proj.q_pre[2, m], proj.k_pre[1, : m + 1], m, 10000.0)
    assert float((torch.tensor(rc.scores, dtype=torch.float64) - ref).abs().max()) < 1e-3 * max(1.0, rc.max_abs_score)
    assert rc.max_diff < 1e-4 * max(1.0, rc.max_abs_score)
    assert rc.max_diff_vs_model < 1e-4 * max(1.0, rc.max_abs_score)
    # Shifting only k changes the distance, and the scores with it: the check is not trivially 0.
    assert min(rc.k_only_max_diff) > 100 * rc.max_diff + 1e-3
    assert r.ok


def test_k_rotated_v_not(loaded):
    r = rope(loaded, layer=2, head=0)
    v = r.v_check
    assert v.k_pre_vs_post > 1e-2 and v.k_rotated_vs_post < 1e-5
    assert v.q_pre_vs_post > 1e-2 and v.q_rotated_vs_post < 1e-5
    assert v.v_pre_vs_post < 1e-6 and v.v_rotated_vs_post > 1e-2


def test_absolute_position_encoding_is_caught(loaded, monkeypatch):
    """A rotary whose angle grows with position squared is not relative: the check must fail."""
    real = rope_mod.cos_sin
    monkeypatch.setattr(
        rope_mod, "cos_sin", lambda model, positions, layer: real(model, [p * p for p in positions], layer)
    )
    r = rope(loaded, layer=1, head=0, deltas=[1, 2])
    assert not r.ok and r.relative_check.max_diff > 1e-2


def test_bad_options(loaded):
    with pytest.raises(AttnscopeError, match="pos -1: a position is 0 or more"):
        rope(loaded, pos=-1)
    with pytest.raises(AttnscopeError, match="deltas: give positive shifts"):
        rope(loaded, deltas=[0])
    with pytest.raises(AttnscopeError, match="head 4 is out of range"):
        rope(loaded, head=4)


def test_cli_json(cli, model_dir):
    res = cli(
        "rope", "--model", str(model_dir), "--pos", "3", "--layer", "1", "--head", "1", "--deltas", "1,2", "--json"
    )
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["schema"] == "attnscope.rope/3"
    assert doc["rope_theta"] == 10000.0 and doc["head_dim"] == 8
    assert set(doc["pairs"][0]) >= {"i", "inv_freq", "wavelength"}
    assert doc["relative_check"]["deltas"] == [1, 2] and doc["relative_check"]["max_diff"] < 1e-3
    assert from_json(doc).to_json() == doc


def test_cli_bad_deltas(cli, model_dir):
    res = cli("rope", "--model", str(model_dir), "--deltas", "a,b")
    assert res.exit_code == 2 and res.stdout == "" and "--deltas" in res.stderr


def test_render(loaded):
    r = rope(loaded, pos=10, layer=0, head=0, deltas=[1, 7])
    text = to_text(render(r), width=120)
    assert "rope_theta = 10,000 (config.rope_parameters, rope_type default); head_dim 8: 4 pairs" in text
    assert any(line.split()[:5] == ["1", "1,5", "0.1", "62.8", "1"] for line in text.splitlines())
    assert "v is not rotated" in text

    ko = to_text(render(r, Ctx(lang="ko")), width=120)
    assert "v는 회전하지 않는다" in ko and "짝 4개" in ko


def test_degrees_are_not_wrapped_when_radians_are_not(loaded):
    # KOREAN.md: 6.494 rad = 372.1°, not 12.1°. At position 10 the first pair has turned 10 rad.
    import re

    r = rope(loaded, pos=10, layer=0, head=0, deltas=[1])
    angles = re.findall(r"([0-9.e+-]+) rad \(([0-9,.]+)°\)", to_text(render(r), width=120))
    assert angles and angles[0] == ("10", "573.0")
    for rad, deg in angles:
        assert float(deg.replace(",", "")) == pytest.approx(
            math.degrees(float(rad)), abs=0.06 + 1e-3 * float(rad) * 57.3
        )
