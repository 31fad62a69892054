"""Shape rules of the losses (and of the statistics reductions, baddbmm and bilinear,
checked the same way): traced graphs (every value typed by PyTorch) have their types
reset, then ``propagate_input_shapes`` must find PyTorch's dtypes, sizes and strides
again, and running the graph must give arrays of the inferred types."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F

from gradview.ir.passes.propagate_input_shapes import propagate_input_shapes
from tests.ir.passes.shape_oracle import (
    agrees_where_known,
    reset_copy,
    run_and_compare_types,
    traced_text,
    type_mismatches,
)

pytestmark = pytest.mark.filterwarnings("ignore")

A = torch.ops.aten


def _x(*shape: int) -> torch.Tensor:
    return torch.randn(shape, dtype=torch.double)


CASES: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    "statistics": (lambda x: (torch.logsumexp(x, [1]), torch.logsumexp(x, [0, 2], True), torch.nanmean(x, 1),
                              x.std(1), x.var([0, 1], correction=2, keepdim=True), torch.any(x > 0, 1),
                              torch.all(x > 0), A._safe_softmax(x, -1)), (_x(2, 3, 4),)),
    "losses": (lambda x, t, p, w: (F.mse_loss(x, p, reduction="none"), F.mse_loss(x, p),
                                  F.nll_loss(x, t, w, reduction="none"), F.nll_loss(x, t, reduction="sum"),
                                  F.cross_entropy(x, t, label_smoothing=0.1), F.cross_entropy(x, p, reduction="none"),
                                  A.nll_loss_forward(x, t, None, 1, -100)),
               (_x(5, 4), torch.tensor([0, 3, 1, 1, 2]), torch.rand(5, 4, dtype=torch.double), torch.rand(4, dtype=torch.double))),
    "nll_nd": (lambda x, t: (A.nll_loss_nd(x, t, None, 0, -100), A.nll_loss2d(x.unsqueeze(-1), t.unsqueeze(-1), None, 0, -100)),
               (_x(2, 3, 4), torch.zeros(2, 4, dtype=torch.long))),
    "products": (lambda s, a, b, x1, x2, w: (torch.baddbmm(s, a, b, beta=0.5), F.bilinear(x1, x2, w)),
                 (_x(3, 4), _x(2, 3, 5), _x(2, 5, 4), _x(6, 3), _x(6, 2), _x(4, 3, 2))),
}


@pytest.mark.parametrize("case", CASES)
def test_traced_types_are_found_again(case: str) -> None:
    fn, inputs = CASES[case]
    reference, graph = reset_copy(traced_text(fn, inputs))
    propagate_input_shapes(graph)
    graph.lint()
    assert agrees_where_known(reference, graph) == []
    assert type_mismatches(reference, graph) == []
    arrays = [t.numpy() for t in inputs]
    assert run_and_compare_types(graph, arrays) > 0
