"""One rule decides whether a mask entry forbids a key, for every dtype transformers uses."""

from __future__ import annotations

import pytest
import torch

from attnscope.capture.masking import allows, forbids


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
def test_additive_float_masks(dtype: torch.dtype) -> None:
    low = torch.finfo(dtype).min
    mask = torch.tensor([0.0, -1.0, -1e3, low / 4, low / 2, low, float("-inf")], dtype=dtype)
    # 0, a bias and a large bias are added to the score; min/2, min and -inf mask the key out
    assert forbids(mask).tolist() == [False, False, False, False, True, True, True]
    assert allows(mask).tolist() == [True, True, True, True, False, False, False]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_two_masks_added_and_clamped_still_forbid(dtype: torch.dtype) -> None:
    low = torch.finfo(dtype).min
    causal, padding = torch.tensor([0.0, low], dtype=dtype), torch.tensor([low, low], dtype=dtype)
    summed = (causal + padding).clamp_min(low)  # what a mask builder does when it combines both
    assert forbids(summed).tolist() == [True, True]
    assert forbids(causal + padding).tolist() == [True, True]  # unclamped: -inf


def test_bool_and_integer_masks() -> None:
    assert forbids(torch.tensor([True, False])).tolist() == [False, True]
    assert forbids(torch.tensor([1, 0, 1], dtype=torch.long)).tolist() == [False, True, False]
    assert forbids(torch.tensor([1, 0], dtype=torch.int32)).tolist() == [False, True]


def test_softmax_gives_exactly_zero_where_forbidden() -> None:
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        mask = torch.tensor([0.0, torch.finfo(dtype).min / 2, torch.finfo(dtype).min], dtype=dtype)
        scores = torch.tensor([1.0, 30.0, 60.0]) + mask.float()
        weights = torch.softmax(scores.masked_fill(forbids(mask), float("-inf")), dim=-1)
        assert weights.tolist() == [1.0, 0.0, 0.0]
