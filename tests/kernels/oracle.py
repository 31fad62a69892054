"""Run one aten overload through gradview's interpreter and through PyTorch.

``check_op("aten::add.Tensor", [x, y, 2])`` builds a one-node graph (arrays
become graph inputs typed with their dtype and shape, other arguments become
constants, ``Typed`` ones with the IR type they name, lists of arrays go
through prim::ListConstruct), checks that the node resolves to that
overload, runs it with ``run_graph`` and compares every output with
``torch.ops.aten.<name>.<overload>`` on the same arguments: values to
``rtol`` and dtypes and shapes exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import torch

from gradview.ir import FunctionSchema, Graph, ListType, OptionalType, TensorType, Type, schemas_for
from gradview.kernels import get_backend
from gradview.kernels.dtypes import dtype_name
from gradview.ops import kernel_for
from gradview.runtime import GraphRuntimeError, run_graph

__all__ = ["check_op", "check_refused", "run_kernel", "backend_xp", "to_host", "op_graph", "torch_call", "random_array", "tensor_type", "Typed", "BACKEND"]

# The backend check_op runs gradview on; tests/kernels/conftest.py switches it.
BACKEND = "numpy"


# Argument types of overloads gradview does not run (named dims, generators, complex
# numbers, dicts, storages, streams): PyTorch has them, the IR reads them, no kernel.
_UNRUN_TYPES = ("Dimname", "Generator", "complex", "Dict(", "Storage", "Stream", "AnyEnumType")


def functional_overloads(name: str) -> list[FunctionSchema]:
    """The overloads of ``name`` gradview runs: not out= or in-place (nothing written),
    no argument type from ``_UNRUN_TYPES``."""
    return [
        schema for schema in schemas_for(name)
        if not any(a.is_write for a in schema.arguments)
        and not any(kind in a.type_text for a in schema.arguments for kind in _UNRUN_TYPES)
    ]


def random_array(
    rng: np.random.Generator, shape: tuple[int, ...], dtype: Any, low: int = -5, high: int = 6, scale: float = 1.0
) -> np.ndarray:
    """Seeded random values of ``dtype``: coin-flip bools, integers in
    ``[low, high)``, normal floats times ``scale``."""
    if np.dtype(dtype) == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    if np.issubdtype(dtype, np.integer):
        return np.asarray(rng.integers(low, high, shape), dtype=dtype)
    return np.asarray(rng.standard_normal(shape) * scale, dtype=dtype)


@dataclass(frozen=True)
class Typed:
    """A constant argument with an explicit IR type (a Device, a ScalarType)."""

    value: Any
    type: Type


def tensor_type(array: np.ndarray) -> TensorType:
    """The complete type of a graph input holding ``array`` (contiguous, on the CPU)."""
    return TensorType(dtype_name(array.dtype), tuple(array.shape), None, False, "cpu")


def op_graph(qualified: str, args: list[Any]) -> tuple[Graph, list[Any]]:
    """A graph calling ``qualified`` on ``args``, and the inputs to run it with."""
    name, _, overload = qualified.partition(".")
    schema = next((s for s in schemas_for(name) if s.overload_name == overload), None)
    assert schema is not None, f"{qualified} is not a registered schema"
    graph = Graph()
    inputs: list[Any] = []
    values = []
    for arg in args:
        if isinstance(arg, np.ndarray | np.generic):
            arg = np.asarray(arg)
            values.append(graph.add_input(type_=tensor_type(arg)))
            inputs.append(arg)
        elif isinstance(arg, list | tuple) and any(isinstance(a, np.ndarray) for a in arg):
            # Tensor[], or Tensor?[] where an entry is None (index_put's indices)
            items = []
            for a in arg:
                if a is None:
                    items.append(graph.insert_constant(None, OptionalType(TensorType())))
                    continue
                items.append(graph.add_input(type_=tensor_type(a)))
                inputs.append(a)
            node = graph.create("prim::ListConstruct", items)
            element = OptionalType(TensorType()) if any(a is None for a in arg) else TensorType()
            node.output().set_type(ListType(element))
            graph.insert_node(node)
            values.append(node.output())
        elif isinstance(arg, Typed):
            values.append(graph.insert_constant(arg.value, arg.type))
        else:
            values.append(graph.insert_constant(list(arg) if isinstance(arg, tuple) else arg))
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


def _to_torch(arg: Any) -> Any:
    if isinstance(arg, Typed):
        return arg.value
    if isinstance(arg, np.ndarray | np.generic):
        return torch.from_numpy(np.array(arg))
    if isinstance(arg, list | tuple) and any(isinstance(a, np.ndarray) for a in arg):
        return [None if a is None else torch.from_numpy(np.array(a)) for a in arg]
    return arg


def torch_call(qualified: str, args: list[Any]) -> list[Any]:
    """The oracle: ``torch.ops.aten.<name>.<overload>(*args)`` as a list of outputs."""
    name, _, overload = qualified.partition(".")
    packet = getattr(torch.ops.aten, name.split("::")[1])
    op = getattr(packet, overload or "default")
    schema = next(s for s in schemas_for(name) if s.overload_name == overload)
    positional = [_to_torch(a) for a, f in zip(args, schema.arguments, strict=False) if not f.kwarg_only]
    keywords = {f.name: _to_torch(a) for a, f in zip(args, schema.arguments, strict=False) if f.kwarg_only}
    result = op(*positional, **keywords)
    if len(schema.returns) == 1:
        return [list(result) if isinstance(result, torch.Size) else result]
    return list(result)


def _compare(ours: Any, theirs: Any, rtol: float, atol: float, where: str) -> None:
    if isinstance(theirs, torch.Tensor):
        expected = theirs.detach().numpy()
        got = np.asarray(ours)
        assert got.dtype == expected.dtype, f"{where}: dtype {got.dtype}, torch gives {expected.dtype}"
        assert got.shape == expected.shape, f"{where}: shape {got.shape}, torch gives {expected.shape}"
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True, err_msg=where)
    elif isinstance(theirs, list | tuple) and not isinstance(theirs, torch.Size):
        assert isinstance(ours, list | tuple) and len(ours) == len(theirs), f"{where}: {ours!r} vs {theirs!r}"
        for index, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            _compare(a, b, rtol, atol, f"{where}[{index}]")
    else:
        expected = list(theirs) if isinstance(theirs, torch.Size) else theirs
        assert type(ours) is type(expected) or (isinstance(ours, float) and isinstance(expected, float)), (
            f"{where}: {type(ours).__name__} {ours!r}, torch gives {type(expected).__name__} {expected!r}"
        )
        if isinstance(expected, float):
            assert ours == expected or abs(ours - expected) <= atol + rtol * abs(expected), f"{where}: {ours} vs {expected}"
        else:
            assert ours == expected, f"{where}: {ours!r}, torch gives {expected!r}"


def check_op(qualified: str, args: list[Any], rtol: float = 1e-6, atol: float = 1e-12) -> list[Any]:
    """Assert that gradview and PyTorch agree on ``qualified(*args)``; return gradview's outputs."""
    graph, inputs = op_graph(qualified, args)
    ours = run_graph(graph, inputs, backend=BACKEND)
    theirs = torch_call(qualified, args)
    assert len(ours) == len(theirs), f"{qualified}: {len(ours)} outputs, torch gives {len(theirs)}"
    for index, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        _compare(a, b, rtol, atol, f"{qualified} output {index}")
    return ours


def backend_xp() -> Any:
    """The array module (NumPy or CuPy) of the backend tests/kernels/conftest.py picked."""
    return get_backend(BACKEND).xp


def to_host(value: Any) -> Any:
    """A kernel's result on BACKEND as NumPy arrays (lists and tuples item by item)."""
    return get_backend(BACKEND).to_host(value)


def check_refused(qualified: str, args: list[Any], match: str) -> None:
    """PyTorch raises on ``qualified(*args)``, and gradview's run refuses it with ``match``."""
    graph, inputs = op_graph(qualified, args)
    with pytest.raises(GraphRuntimeError, match=match):
        run_graph(graph, inputs, backend=BACKEND)
    with pytest.raises(RuntimeError):
        torch_call(qualified, args)


def run_kernel(qualified: str, *args: Any) -> np.ndarray:
    """The kernel bound to ``qualified`` called directly on BACKEND, arrays moved there and back."""
    chosen = get_backend(BACKEND)
    moved = [chosen.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
    return np.asarray(chosen.to_host(kernel_for(qualified)(chosen.xp, *moved)))


# The case table and inputs the elementwise and pointwise_math tests share.
@dataclass
class Case:
    """One call; ``raises``: PyTorch raises, so gradview must raise GraphRuntimeError."""

    args: list[Any]
    rtol: float = 1e-6
    atol: float = 1e-12
    raises: bool = False


def seeded_rng(name: str) -> np.random.Generator:
    return np.random.default_rng(sum(map(ord, name)))  # seeded per overload


def rand(rng: np.random.Generator, shape: tuple[int, ...], scale: float = 3.0, dtype: Any = np.float64) -> np.ndarray:
    return np.asarray(rng.standard_normal(shape) * scale, dtype=dtype)
