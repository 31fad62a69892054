"""Shape rules of the autocast casts (gradview.ops.script_queries) against PyTorch.

The casts are traced (every value typed by PyTorch), their types reset, and
``propagate_input_shapes`` must find them again; running the graph must give
arrays of the inferred types.
"""

from __future__ import annotations

import pytest
import torch

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


def _x(*shape: int, dtype: torch.dtype = torch.double) -> torch.Tensor:
    return torch.randn(shape, dtype=dtype)


def test_autocast_types_are_found_again() -> None:
    def fn(x: torch.Tensor, h: torch.Tensor, d: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return (
            A._autocast_to_reduced_precision(x, True, True, torch.half, torch.half),
            A._autocast_to_reduced_precision(x.t(), False, True, torch.half, torch.half),
            A._autocast_to_reduced_precision(x, True, False, torch.half, torch.half),
            A._autocast_to_reduced_precision(d, True, True, torch.half, torch.half),
            A._autocast_to_full_precision(h, True, True),
            A._autocast_to_full_precision(h, True, False),
            A._autocast_to_full_precision(x, True, True),
        )

    inputs = (_x(2, 3, dtype=torch.float), _x(2, 3, dtype=torch.half), _x(2, 3))
    reference, graph = reset_copy(traced_text(fn, inputs))
    propagate_input_shapes(graph)
    graph.lint()
    assert agrees_where_known(reference, graph) == []
    assert type_mismatches(reference, graph) == []
    assert run_and_compare_types(graph, [t.numpy() for t in inputs]) > 0
