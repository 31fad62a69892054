"""Shape rules of the copies of views, unflatten, meshgrid, pad, advanced indexing,
nonzero and _dim_arange: traced graphs (every value typed by PyTorch) have their types
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
    "copies": (lambda x: (A.permute_copy(x, [2, 0, 1]), A.squeeze_copy(x), A.squeeze_copy(x, 1),
                          A.squeeze_copy(x, [1, 0]), A.unsqueeze_copy(x, -1), A.t_copy(x[0])), (_x(2, 1, 4),)),
    "unflatten": (lambda x: (x.unflatten(1, (3, -1)), x.t().unflatten(0, (2, 3))), (_x(2, 6),)),
    "meshgrid": (lambda a, b, c: torch.meshgrid(a, b, c, indexing="ij") + torch.meshgrid(a, b, indexing="xy"),
                 (_x(2), _x(), _x(3))),
    "pad": (lambda x: (F.pad(x, (1, 2)), F.pad(x, (1, 2, -1, 1), value=2.0), F.pad(x, (1, 1, 2, 0), mode="reflect"),
                       F.pad(x, (2, 1), mode="replicate"), F.pad(x, (1, 2, 1, 1), mode="circular")), (_x(2, 3, 4),)),
    "index": (lambda x, i: (x[:, i], x[i, :, i], x[:, None, i], x[i.view(2, 1), :, i], x[..., i]),
              (_x(4, 3, 5), torch.tensor([0, 2]))),
    "dim_arange": (lambda x: A._dim_arange(x, 1) + A._dim_arange(x, -1), (_x(3, 3),)),
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


def test_data_dependent_sizes_stay_unknown() -> None:
    """nonzero's count and a mask's selection depend on the values: PyTorch's trace
    records the sizes it saw, gradview infers the rank, the known sizes and the dtype."""
    inputs = (_x(4, 3, 5), torch.rand(4, 3) > 0.5)
    _, graph = reset_copy(traced_text(lambda x, m: (torch.nonzero(x > 0), x[m], x[:, m[0]]), inputs))
    propagate_input_shapes(graph)
    types = [str(v.type()) for v in graph.outputs()[0].node.inputs()]
    assert types == ["Long(*, 3, device=cpu)", "Double(*, 5, device=cpu)", "Double(4, *, 5, device=cpu)"]
    assert run_and_compare_types(graph, [t.numpy() for t in inputs]) > 0
