"""weights: --measure norm, the sink line, who looks hardest, largest-remainder sums, long prompts."""

from __future__ import annotations

import pytest

from attnscope.render.weights import apportion


@pytest.mark.parametrize(
    "values",
    [[0.42, 0.104, 0.176, 0.154, 0.146], [1 / 3, 1 / 3, 1 / 3], [0.125] * 8, [0.0049, 0.9951], [0.1] * 10],
)
def test_apportion_adds_up_to_the_printed_sum(values):
    printed, total = apportion(values)
    assert sum(printed) == total == round(sum(values) * 100)
    assert all(abs(p / 100 - v) < 0.01 for p, v in zip(printed, values, strict=True))
