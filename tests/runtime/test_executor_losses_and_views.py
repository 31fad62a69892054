"""Traced graphs of the losses, baddbmm/bilinear, pad, indexing, unflatten, the
unsafe splits, meshgrid, the statistics reductions and cat of a skipped empty
tensor, run by the GraphExecutor (PyTorch's autodiff mode: most of these run
outside DifferentiableGraphs, under gradview's eager autograd): outputs and the
gradient of every input that requires grad equal eager PyTorch's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from gradview.ir import parse_ir
from gradview.runtime import GraphExecutor, Tensor, autograd

pytestmark = pytest.mark.filterwarnings("ignore")

D = torch.double


def _r(*shape: int) -> torch.Tensor:
    return torch.randn(shape, dtype=D, generator=torch.Generator().manual_seed(sum(shape) + len(shape)))


TARGET = torch.tensor([0, 3, 1, 1, 2])
PROBABILITIES = torch.softmax(_r(5, 4), 1)
WEIGHT = torch.rand(4, dtype=D, generator=torch.Generator().manual_seed(1))

CASES: dict[str, tuple[Callable[..., Any], list[torch.Tensor], list[bool]]] = {
    "mse_loss": (lambda a, b: F.mse_loss(a, b), [_r(5, 4), _r(5, 4)], [True, True]),
    "mse_loss_none": (lambda a, b: F.mse_loss(a, b, reduction="none"), [_r(5, 4), _r(5, 4)], [True, False]),
    "cross_entropy": (lambda a, b: F.cross_entropy(a, b, label_smoothing=0.1), [_r(5, 4), TARGET], [True, False]),
    "cross_entropy_probabilities": (lambda a, b: F.cross_entropy(a, b), [_r(5, 4), PROBABILITIES], [True, True]),
    "cross_entropy_weight": (lambda a, b, w: F.cross_entropy(a, b, weight=w, ignore_index=1, reduction="sum"),
                             [_r(5, 4), TARGET, WEIGHT], [True, False, False]),
    "nll_loss": (lambda a, b: F.nll_loss(a.log_softmax(1), b), [_r(5, 4), TARGET], [True, False]),
    "nll_loss2d": (lambda a, b: F.nll_loss(a, b, reduction="none"),
                   [_r(2, 3, 4, 4), torch.randint(0, 3, (2, 4, 4), generator=torch.Generator().manual_seed(2))],
                   [True, False]),
    "bilinear": (lambda a, b, w, c: F.bilinear(a, b, w, c), [_r(6, 3), _r(6, 2), _r(4, 3, 2), _r(4)], [True] * 4),
    "baddbmm": (lambda s, a, b: torch.baddbmm(s, a, b, beta=0.5, alpha=2), [_r(3, 4), _r(2, 3, 5), _r(2, 5, 4)],
                [True] * 3),
    "pad": (lambda a: F.pad(a, (1, 2, 2, 1), mode="reflect") * 2, [_r(2, 3, 4)], [True]),
    "index": (lambda a, i: a[:, i] * a[i], [_r(3, 3), torch.tensor([0, 2, 2])], [True, False]),
    "unflatten": (lambda a: a.unflatten(1, (2, 3)).sum(1), [_r(4, 6)], [True]),
    "unsafe_chunk": (lambda a: torch.unsafe_chunk(a, 2, 1)[1] * 3, [_r(4, 6)], [True]),
    "meshgrid": (lambda a, b: torch.meshgrid(a, b, indexing="xy")[0] * torch.meshgrid(a, b, indexing="ij")[1].t(),
                 [_r(3), _r(4)], [True, True]),
    "statistics": (lambda a: a.std(1) + a.var() + torch.logsumexp(a, 0).sum() + torch.nanmean(a, 1), [_r(4, 4)],
                   [True]),
    "cat_skipping_an_empty_tensor": (lambda a, b: torch.cat([a, b], 1), [torch.zeros(0, dtype=D), _r(3, 2)],
                                     [True, True]),
}


@pytest.mark.parametrize("case", CASES)
def test_executor_matches_eager(case: str) -> None:
    fn, inputs, grads = CASES[case]
    text = str(torch.jit.trace(fn, tuple(inputs), check_trace=False).graph)
    leaves = [t.detach().clone().requires_grad_(g) for t, g in zip(inputs, grads, strict=True)]
    out = fn(*leaves)
    output_grads = [torch.randn(out.shape, dtype=D, generator=torch.Generator().manual_seed(3))]
    expected = torch.autograd.grad([out], [t for t in leaves if t.requires_grad], output_grads)

    ours_in = [Tensor(t.detach().numpy().copy(), requires_grad=g) for t, g in zip(inputs, grads, strict=True)]
    (result,) = GraphExecutor(parse_ir(text)).run(ours_in)
    np.testing.assert_allclose(result.detach().numpy(), out.detach().numpy(), rtol=1e-7, atol=1e-12)
    got = autograd.grad([result], [t for t in ours_in if t.requires_grad], [Tensor(output_grads[0].numpy())])
    for ours, theirs in zip(got, expected, strict=True):
        assert ours is not None, "a gradient was lost"
        assert ours.numpy().shape == tuple(theirs.shape)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-7, atol=1e-12)
