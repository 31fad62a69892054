"""Helpers that check inferred types against PyTorch and against running the graph.

* :func:`traced_text` traces a function with ``torch.jit.trace``: every value
  of a traced graph carries the complete type PyTorch observed.
* :func:`reset_types` forgets what a graph knows about its intermediate values
  (every non-input tensor type becomes plain ``Tensor``), so a pass can work
  it out again and :func:`type_mismatches` can compare the two graphs.
* :func:`run_and_compare_types` runs a graph with gradview's interpreter,
  with every top-level tensor exposed as an output, and compares each
  array's shape and dtype with the value's type.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
import torch

from gradview.ir import Graph, ListType, OptionalType, TensorType, TupleType, Type, parse_ir
from gradview.kernels.dtypes import to_dtype
from gradview.runtime import GraphCompileError, run_graph

__all__ = [
    "traced_text",
    "reset_types",
    "type_mismatches",
    "agrees_where_known",
    "run_and_compare_types",
    "reset_copy",
]


def traced_text(fn: Callable[..., Any], inputs: Sequence[Any]) -> str:
    traced = torch.jit.trace(fn, tuple(inputs), check_trace=False)
    return str(traced.graph)


def _plain(t: Type) -> Type:
    if isinstance(t, TensorType):
        return TensorType()
    if isinstance(t, TupleType):
        return TupleType(tuple(_plain(e) for e in t.elems), t.names)
    if isinstance(t, ListType):
        return ListType(_plain(t.elem))
    if isinstance(t, OptionalType):
        return OptionalType(_plain(t.elem))
    return t


def reset_types(graph: Graph) -> None:
    """Make every value but the graph's inputs a plain ``Tensor`` (in containers too)."""
    for node in graph.all_nodes():
        for value in node.outputs():
            value.set_type(_plain(value.type()))
        for block in node.blocks():
            for value in block.inputs():
                value.set_type(_plain(value.type()))


def reset_copy(text: str) -> tuple[Graph, Graph]:
    """The graph parsed twice: as printed (the reference) and with types reset."""
    reference = parse_ir(text)
    graph = parse_ir(text)
    reset_types(graph)
    return reference, graph


def _pairs(reference: Graph, graph: Graph) -> list[tuple[Any, Any]]:
    pairs = []
    for ref_node, node in zip(reference.all_nodes(), graph.all_nodes(), strict=True):
        pairs.extend(zip(ref_node.outputs(), node.outputs(), strict=True))
        for ref_block, block in zip(ref_node.blocks(), node.blocks(), strict=True):
            pairs.extend(zip(ref_block.inputs(), block.inputs(), strict=True))
    return pairs


def type_mismatches(reference: Graph, graph: Graph) -> list[str]:
    """Tensor values whose dtype, sizes, device or strides differ from ``reference``'s."""
    problems = []
    compared = 0
    for ref_value, value in _pairs(reference, graph):
        expected, got = ref_value.type(), value.type()
        if not isinstance(expected, TensorType):
            continue
        compared += 1
        fields = ("scalar_type", "sizes", "device", "strides")
        if any(getattr(expected, f) != getattr(got, f) for f in fields if getattr(expected, f) is not None):
            problems.append(f"{value.node.kind()} %{value.debug_name()}: torch {expected}, gradview {got}")
    assert compared, "the reference graph has no tensor values to compare"
    return problems


def agrees_where_known(reference: Graph, graph: Graph) -> list[str]:
    """Where ``reference`` knows a dtype, rank, size or stride, ``graph`` must know the same."""
    problems = []
    for ref_value, value in _pairs(reference, graph):
        expected, got = ref_value.type(), value.type()
        if not isinstance(expected, TensorType) or not isinstance(got, TensorType):
            continue
        bad = expected.scalar_type is not None and expected.scalar_type != got.scalar_type
        bad |= expected.device is not None and expected.device != got.device
        if expected.sizes is not None:
            bad |= got.sizes is None or len(got.sizes) != len(expected.sizes) or any(
                e is not None and e != g for e, g in zip(expected.sizes, got.sizes, strict=False)
            )
        if bad:
            problems.append(f"{value.node.kind()} %{value.debug_name()}: torch {expected}, gradview {got}")
    return problems


def run_and_compare_types(graph: Graph, inputs: Sequence[Any]) -> int:
    """Run ``graph`` with each top-level tensor value as an extra output and check
    every array's shape and dtype against its type. Returns how many were checked.

    Every op in these graphs has a kernel: a missing one fails the test, naming it.
    """
    probe = graph.copy()
    values = [
        v for node in probe.nodes() for v in node.outputs() if isinstance(v.type(), TensorType)
    ]
    for value in values:
        probe.register_output(value)
    try:
        results = run_graph(probe, list(inputs))
    except GraphCompileError as exc:
        if "unknown operator" in str(exc):
            pytest.fail(f"the interpreter has no kernel for an op of this graph: {exc}")
        raise
    checked = 0
    for value, result in zip(values, results[len(results) - len(values):], strict=True):
        t = value.type()
        if result is None:
            continue
        array = np.asarray(result)
        where = f"%{value.debug_name()} = {value.node.kind()}"
        if t.sizes is not None:
            assert len(array.shape) == len(t.sizes), f"{where}: rank of {array.shape} vs {t}"
            for actual, inferred in zip(array.shape, t.sizes, strict=True):
                assert inferred is None or inferred == actual, f"{where}: shape {array.shape} vs {t}"
        if t.scalar_type is not None:
            assert array.dtype == to_dtype(t.scalar_type), f"{where}: dtype {array.dtype} vs {t}"
        checked += 1
    return checked
