"""Shared helpers for the shape and cast kernel tests (test_shapes.py, test_casts.py).

``rand`` makes seeded random arrays; ``build`` makes a one-node graph of an
aten overload (arrays become typed graph inputs, lists of arrays go through
prim::ListConstruct, ``Typed`` constants keep their IR type); ``run`` and
``call_kernel`` run on the backend the conftest chose; ``check`` compares a
call with PyTorch's (values to 1e-6 relative, dtypes and shapes exactly).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from gradview.ir import Graph, ListType, TensorType, Type, schemas_for
from gradview.kernels import KERNELS, get_backend
from gradview.kernels.dtypes import dtype_name
from gradview.runtime import run_graph
from tests.kernels import oracle
from tests.kernels.oracle import check_op, torch_call

SEEDS = (0, 1, 2)
F64, F32, I64, BOOL = "float64", "float32", "int64", "bool"

# A case: (id, overload, seeded argument builder).
Case = tuple[str, str, Callable[[np.random.Generator], list[Any]]]


def rand(rng: np.random.Generator, shape: tuple[int, ...], dtype: str = F64) -> np.ndarray:
    """Seeded random values of ``dtype``: normal floats, small signed ints, coin-flip bools."""
    if dtype == BOOL:
        return np.asarray(rng.random(shape) < 0.5)
    if np.dtype(dtype).kind == "u":
        return np.asarray(rng.integers(0, 10, shape), dtype=dtype)
    if np.dtype(dtype).kind == "i":
        return np.asarray(rng.integers(-9, 10, shape), dtype=dtype)
    return np.asarray(rng.standard_normal(shape) * 4, dtype=dtype)


@dataclass(frozen=True)
class Typed:
    """A constant argument with an explicit IR type (a Device, a ScalarType)."""

    value: Any
    type: Type


def _tensor_type(array: np.ndarray) -> TensorType:
    return TensorType(dtype_name(array.dtype), tuple(array.shape), None, False, "cpu")


def build(qualified: str, args: list[Any]) -> tuple[Graph, list[Any]]:
    """A one-node graph of ``qualified`` on ``args`` (like the oracle's op_graph, plus Typed)."""
    name, _, overload = qualified.partition(".")
    schema = next(s for s in schemas_for(name) if s.overload_name == overload)
    graph = Graph()
    inputs: list[Any] = []
    values = []
    for arg in args:
        if isinstance(arg, np.ndarray):
            values.append(graph.add_input(type_=_tensor_type(arg)))
            inputs.append(arg)
        elif isinstance(arg, list) and arg and all(isinstance(a, np.ndarray) for a in arg):
            items = []
            for a in arg:
                items.append(graph.add_input(type_=_tensor_type(a)))
                inputs.append(a)
            node = graph.create("prim::ListConstruct", items)
            node.output().set_type(ListType(TensorType()))
            graph.insert_node(node)
            values.append(node.output())
        elif isinstance(arg, Typed):
            values.append(graph.insert_constant(arg.value, arg.type))
        else:
            values.append(graph.insert_constant(arg))
    node = graph.create(name, values, 0)
    for ret in schema.returns:
        node.add_output(ret.type)
    graph.insert_node(node)
    resolved = node.maybe_schema()
    assert resolved is not None and resolved.qualified_name == qualified, (
        f"the node resolved to {resolved and resolved.qualified_name}, not {qualified}"
    )
    for out in node.outputs():
        graph.register_output(out)
    graph.lint()
    return graph, inputs


def run(graph: Graph, inputs: list[Any]) -> list[Any]:
    """run_graph on the backend the conftest chose for this test (NumPy or CuPy)."""
    return run_graph(graph, inputs, backend=oracle.BACKEND)


def call_kernel(name: str, *args: Any) -> Any:
    """Call a kernel directly on this test's backend; results come back as NumPy."""
    backend = get_backend(oracle.BACKEND)
    return backend.to_host(KERNELS[name](backend.xp, *backend.to_device(list(args))))


def plain_args(args: list[Any]) -> list[Any]:
    return [a.value if isinstance(a, Typed) else a for a in args]


def compare(ours: Any, theirs: Any, where: str, rtol: float = 1e-6) -> None:
    if isinstance(theirs, torch.Tensor):
        expected = theirs.numpy()
        got = np.asarray(ours)
        assert isinstance(ours, np.ndarray), f"{where}: a {type(ours).__name__}, not an array"
        assert got.dtype == expected.dtype, f"{where}: dtype {got.dtype}, torch gives {expected.dtype}"
        assert got.shape == expected.shape, f"{where}: shape {got.shape}, torch gives {expected.shape}"
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-12, equal_nan=True, err_msg=where)
    elif isinstance(theirs, list | tuple):
        assert isinstance(ours, list), f"{where}: {ours!r}, torch gives a list"
        assert len(ours) == len(theirs), f"{where}: {len(ours)} items, torch gives {len(theirs)}"
        for index, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            compare(a, b, f"{where}[{index}]", rtol)
    else:
        assert type(ours) is type(theirs) and ours == theirs, f"{where}: {ours!r}, torch gives {theirs!r}"


def check(qualified: str, args: list[Any]) -> list[Any]:
    """Run ``qualified(*args)`` through gradview and PyTorch and compare.

    Ops returning one list (``int[]``, ``Tensor[]``) and ops with Typed
    constants are compared here; the others go through the oracle's check_op.
    """
    name, _, overload = qualified.partition(".")
    schema = next(s for s in schemas_for(name) if s.overload_name == overload)
    list_return = len(schema.returns) == 1 and isinstance(schema.returns[0].type, ListType)
    if not list_return and not any(isinstance(a, Typed) for a in args):
        return check_op(qualified, args)
    graph, inputs = build(qualified, args)
    (ours,) = run(graph, inputs)
    theirs = torch_call(qualified, plain_args(args))
    compare(ours, theirs[0], qualified)
    return [ours]
