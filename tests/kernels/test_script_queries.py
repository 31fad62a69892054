"""Implicit tensor-to-number conversions, warn and device questions, against torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from gradview.kernels import KernelError
from gradview.ops import kernel_for


@pytest.mark.parametrize("name", ["ScalarImplicit", "FloatImplicit", "IntImplicit"])
@pytest.mark.parametrize("value", [np.array(2.5), np.array(3), np.array(True), np.array([1.0]), np.zeros((1, 1))])
def test_implicit_conversions_match_torch(name: str, value: np.ndarray) -> None:
    ours = kernel_for(f"aten::{name}")
    theirs = getattr(torch.ops.aten, name)
    try:
        expected = theirs(torch.from_numpy(value))
    except RuntimeError as exc:
        with pytest.raises(KernelError, match=str(exc).splitlines()[0][:40]):
            ours(np, value)
        return
    got = ours(np, value)
    assert got == expected and type(got) is type(expected)


def test_warn_gives_a_user_warning() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kernel_for("aten::warn")(np, "deprecated argument", 2)
    assert [(w.category, str(w.message)) for w in caught] == [(UserWarning, "deprecated argument")]


def test_device_questions() -> None:
    assert kernel_for("prim::is_nested")(np, np.zeros(2)) is torch.zeros(2).is_nested
    assert kernel_for("prim::type")(np, "cpu") == torch.device("cpu").type
    assert kernel_for("prim::type")(np, "cuda:1") == torch.device("cuda:1").type
