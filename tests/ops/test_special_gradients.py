"""The special functions' gradients where the op_db sweep does not look: second derivatives
(each formula is written with graph ops that have formulas of their own), and the one
gradient PyTorch refuses, igamma's and igammac's with respect to their first input."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradview.ir import parse_ir
from gradview.runtime import Tensor, autograd
from gradview.runtime.executor import GraphExecutor

from .test_double_backward import _check


def _lgamma(x: torch.Tensor) -> torch.Tensor:
    return torch.lgamma(x * 0.3 + 3.0)


def _polygamma(x: torch.Tensor) -> torch.Tensor:
    return torch.polygamma(2, x * 0.3 + 3.0)


def _mvlgamma(x: torch.Tensor) -> torch.Tensor:
    return torch.mvlgamma(x * 0.3 + 3.0, 3)


def _erfinv(x: torch.Tensor) -> torch.Tensor:
    return torch.erfinv(x * 0.3)


def _i1e(x: torch.Tensor) -> torch.Tensor:
    return torch.special.i1e(x)


def _i0e(x: torch.Tensor) -> torch.Tensor:
    return torch.special.i0e(x)


def _log_ndtr(x: torch.Tensor) -> torch.Tensor:
    return torch.special.log_ndtr(x)


def _sinc(x: torch.Tensor) -> torch.Tensor:
    return torch.sinc(x)


def _xlogy(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.xlogy(x, y * y + 0.5)


def _igamma(x: torch.Tensor) -> torch.Tensor:
    return torch.igamma(torch.full_like(x, 2.5), x * x + 0.5)


@pytest.mark.parametrize(
    "fn, shapes",
    [
        (_lgamma, [(3, 4)]), (_polygamma, [(3, 4)]), (_mvlgamma, [(3, 4)]), (_erfinv, [(3, 4)]),
        (_i1e, [(3, 4)]), (_i0e, [(3, 4)]), (_log_ndtr, [(3, 4)]), (_sinc, [(3, 4)]),
        (_xlogy, [(3, 4), (4,)]), (_igamma, [(3, 4)]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_second_derivatives_match_pytorch(fn: object, shapes: list[tuple[int, ...]]) -> None:
    _check(fn, shapes)  # type: ignore[arg-type]


@pytest.mark.parametrize("op", ["igamma", "igammac"])
def test_the_gradient_of_igammas_first_input_is_refused_in_pytorchs_words(op: str) -> None:
    graph = parse_ir(f"""
graph(%a : Double(3, strides=[1], requires_grad=1, device=cpu),
      %x : Double(3, strides=[1], requires_grad=1, device=cpu)):
  %y : Double(3, strides=[1], requires_grad=1, device=cpu) = aten::{op}(%a, %x)
  return (%y)
""")
    a, x = (Tensor(np.array([1.5, 2.0, 3.0]), requires_grad=True) for _ in range(2))
    with pytest.raises(Exception, match=f"the derivative for '{op}: input' is not implemented") as raised:
        (out,) = GraphExecutor(graph).run([a, x])
        autograd.grad([out], [a, x], [Tensor(np.ones(3))])
    assert "Traceback" not in str(raised.value)
    with pytest.raises(NotImplementedError, match=f"the derivative for '{op}: input' is not implemented"):
        leaves = [torch.tensor([1.5, 2.0, 3.0], requires_grad=True) for _ in range(2)]
        torch.autograd.grad(getattr(torch, op)(*leaves).sum(), leaves)
