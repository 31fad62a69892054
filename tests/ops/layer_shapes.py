"""Checks shared by the nn layers' shape-rule tests (normalization, convolution, pooling,
embedding) against PyTorch.

Traced graphs carry the types PyTorch observed (dtype, sizes, strides); the pass forgets
them and works them out again, and must agree on every value. The same graphs then run
through gradview's interpreter, every array checked against its inferred type. Ops the
tracer records by their decomposition (conv2d becomes _convolution) are checked as
one-node graphs with complete input types against the eager result's dtype, sizes and
strides.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from gradview.ir.passes.propagate_input_shapes import propagate_input_shapes
from tests.ir.passes.shape_oracle import (
    reset_copy,
    run_and_compare_types,
    traced_text,
    type_mismatches,
)
from tests.kernels.oracle import op_graph, torch_call

A = torch.ops.aten
D = torch.float64


def randn(*shape: int, dtype: torch.dtype = D) -> torch.Tensor:
    return torch.randn(*shape, dtype=dtype)


def check_traced(fn: Callable, args: tuple, kind: str) -> None:
    """Trace ``fn(*args)``: the pass infers every type the tracer recorded, and the graph runs."""
    text = traced_text(fn, args)
    reference, graph = reset_copy(text)
    assert any(node.kind() == kind for node in graph.nodes()), f"the trace has no {kind}:\n{text}"
    propagate_input_shapes(graph)
    assert type_mismatches(reference, graph) == []
    inputs = [a.numpy() if isinstance(a, torch.Tensor) else a for a in args]
    assert run_and_compare_types(graph, inputs) > 0


def check_op(qualified: str, args: list) -> None:
    """The node's inferred output types equal the eager result's dtype, sizes and strides."""
    graph, _ = op_graph(qualified, args)
    propagate_input_shapes(graph)
    node = next(n for n in graph.nodes() if n.kind() == qualified.split(".")[0])
    results = torch_call(qualified, args)
    for value, result in zip(node.outputs(), results, strict=True):
        t = value.type()
        if result is None:
            continue
        expected = (result.dtype, tuple(result.shape), tuple(result.stride()))
        assert (_torch_dtype(t.scalar_type), t.sizes, t.strides) == expected, f"{qualified}: torch {expected}, gradview {t}"


def _torch_dtype(name: str | None) -> torch.dtype | None:
    return {"Double": torch.float64, "Float": torch.float32, "Long": torch.int64, "Int": torch.int32}.get(name or "")
