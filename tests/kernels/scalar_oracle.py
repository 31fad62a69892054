"""Shared helpers for the non-tensor op tests (test_scalar_math.py, test_lists.py).

Those ops take and return plain Python values, which ``oracle.check_op``
cannot always type, so these helpers build a one-node graph with typed
inputs (``node_graph``), run it on the backend the conftest fixture chose
(``run``), compare with ``torch.ops.<namespace>.<op>.<overload>``
(``check_case``, ``check_table``) value by value and type by type
(``assert_same``), and check functions compiled by ``torch.jit.script`` by
running their printed graph (``check_scripted``).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import torch

from gradview.ir import (
    Graph,
    IntType,
    ListType,
    NumberType,
    Type,
    parse_ir,
    schemas_for,
)
from gradview.ir.constants import type_of_constant
from gradview.ir.passes.op_eval import kernel_key
from gradview.runtime import GraphRuntimeError, run_graph

from . import oracle as oracle_module
from .oracle import check_op, tensor_type, torch_call

INF, NAN = math.inf, math.nan
S = NumberType()  # TorchScript's Scalar
SPECIAL_FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 1e-300, -1e300, 1e300, INF, -INF, NAN]

# The dtype objects torch returns where gradview returns ScalarType numbers.
TORCH_DTYPES = {
    torch.uint8: 0, torch.int8: 1, torch.int16: 2, torch.int32: 3, torch.int64: 4,
    torch.float16: 5, torch.float32: 6, torch.float64: 7, torch.bool: 11,
}


# -- comparison --------------------------------------------------------------------
def assert_same(ours: Any, theirs: Any, where: str = "", rel: float = 1e-12) -> None:
    """Equal values of equal Python types; floats to ``rel``, NaN equal to NaN,
    and the sign of zero kept."""
    if isinstance(theirs, torch.Tensor):
        expected = theirs.detach().numpy()
        got = np.asarray(ours)
        assert got.dtype == expected.dtype and got.shape == expected.shape, f"{where}: {got!r} vs {expected!r}"
        np.testing.assert_allclose(got, expected, rtol=rel, equal_nan=True, err_msg=where)
        return
    if isinstance(theirs, torch.device):
        theirs = expected_device() if theirs.type == "cpu" else str(theirs)
    if isinstance(theirs, torch.dtype):
        theirs = TORCH_DTYPES[theirs]
    if isinstance(theirs, list | tuple):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), f"{where}: {ours!r} vs {theirs!r}"
        for index, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            assert_same(a, b, f"{where}[{index}]", rel)
        return
    assert type(ours) is type(theirs), f"{where}: {type(ours).__name__} {ours!r} vs {type(theirs).__name__} {theirs!r}"
    if isinstance(theirs, float):
        if math.isnan(theirs):
            assert math.isnan(ours), f"{where}: {ours!r} vs nan"
        elif theirs == 0.0:
            assert ours == 0.0 and math.copysign(1, ours) == math.copysign(1, theirs), f"{where}: {ours!r} vs {theirs!r}"
        elif math.isinf(theirs):
            assert ours == theirs, f"{where}: {ours!r} vs {theirs!r}"
        else:
            assert math.isclose(ours, theirs, rel_tol=rel), f"{where}: {ours!r} vs {theirs!r}"
    else:
        assert ours == theirs, f"{where}: {ours!r} vs {theirs!r}"


# -- one-node graphs with typed inputs ------------------------------------------------
def ir_type(value: Any) -> Type:
    """The type of a graph input holding ``value``: an array is a tensor of its
    dtype and shape, a list is typed by its first item (``int[]`` when empty),
    anything else as ``prim::Constant`` would type it."""
    if isinstance(value, np.ndarray):
        return tensor_type(value)
    if isinstance(value, list):
        return ListType(ir_type(value[0]) if value else IntType())
    return type_of_constant(value)


def node_graph(qualified: str, args: list[Any], types: list[Type] | None = None, n_outputs: int = 1) -> Graph:
    """A graph whose inputs are ``args`` (typed by value unless ``types`` says)
    and whose one node calls ``qualified``; asserts it resolves to that overload."""
    name, _, overload = qualified.partition(".")
    schema = next((s for s in schemas_for(name) if s.overload_name == overload), None)
    graph = Graph()
    types = types or [ir_type(a) for a in args]
    values = [graph.add_input(type_=t) for t in types]
    node = graph.create(name if schema is not None else qualified, values, 0)
    for ret in schema.returns if schema is not None else [None] * n_outputs:
        node.add_output(ret.type if ret is not None else IntType())
    graph.insert_node(node)
    if schema is not None:
        assert kernel_key(node) == qualified, f"the node resolved to {kernel_key(node)}, not {qualified}"
    for out in node.outputs():
        graph.register_output(out)
    return graph


def run(graph: Graph, inputs: list[Any]) -> list[Any]:
    """run_graph on the backend the conftest fixture chose."""
    return run_graph(graph, inputs, backend=oracle_module.BACKEND)


def on_numpy() -> bool:
    return oracle_module.BACKEND == "numpy"


def expected_device() -> str:
    """Where gradview's arrays live: CuPy runs put inputs on GPU 0."""
    return "cpu" if on_numpy() else "cuda:0"


def run_node(qualified: str, args: list[Any], types: list[Type] | None = None) -> list[Any]:
    return run(node_graph(qualified, args, types), copy.deepcopy(args))


def assert_node_raises(qualified: str, args: list[Any], types: list[Type] | None = None, match: str = "") -> GraphRuntimeError:
    graph = node_graph(qualified, args, types)
    with pytest.raises(GraphRuntimeError) as info:
        run(graph, copy.deepcopy(args))
    kind = qualified.partition(".")[0]
    assert info.value.node is not None and info.value.node.kind() == kind
    assert kind in str(info.value), str(info.value)
    assert match in str(info.value), str(info.value)
    return info.value


def _to_torch(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return torch.from_numpy(value.copy())
    if isinstance(value, list) and value and all(isinstance(v, np.ndarray) for v in value):
        return [torch.from_numpy(v.copy()) for v in value]
    return value


@dataclass
class Case:
    """One call: ``expect`` is "ok", "raises" (PyTorch raises, so must we) or
    "ours-raises" (PyTorch cannot be asked: it crashes or is undefined)."""

    args: list[Any]
    types: list[Type] | None = None
    expect: str = "ok"
    torch_args: list[Any] | None = None
    rel: float = 1e-12


def oracle(qualified: str, args: list[Any]) -> list[Any]:
    """``torch.ops.<namespace>.<op>.<overload>(*args)`` as a list of outputs.

    Like the oracle module's ``torch_call``, except that a single list result
    (``int[]``, ``str[]``) is one output, and prims (no schema here) work too.
    """
    namespace, _, rest = qualified.partition("::")
    name, _, overload = rest.partition(".")
    schemas = schemas_for(f"{namespace}::{name}")
    if any(s.overload_name == overload and len(s.returns) != 1 for s in schemas):
        return torch_call(qualified, args)
    packet = getattr(getattr(torch.ops, namespace), name)
    return [getattr(packet, overload or "default")(*args)]


def check_case(qualified: str, case: Case, graph_key: str | None = None) -> None:
    """Run ``case`` through gradview (a node calling ``graph_key``, by default
    ``qualified``) and through PyTorch's ``qualified``; compare."""
    key = graph_key or qualified
    where = f"{qualified}{tuple(case.args)!r}"
    if case.expect == "ours-raises":
        assert_node_raises(key, case.args, case.types)
        return
    torch_args = case.torch_args if case.torch_args is not None else [_to_torch(a) for a in case.args]
    if case.expect == "raises":
        with pytest.raises((RuntimeError, ValueError, IndexError)):
            oracle(qualified, torch_args)
        assert_node_raises(key, case.args, case.types)
        return
    theirs = oracle(qualified, torch_args)
    ours = run_node(key, case.args, case.types)
    assert len(ours) == len(theirs), where
    for a, b in zip(ours, theirs, strict=True):
        assert_same(a, b, where, case.rel)
    finite = all(not isinstance(t, float) or math.isfinite(t) for t in theirs)
    # (check_op's torch_call flattens a list result into several outputs.)
    if case.types is None and finite and key == qualified and not isinstance(theirs[0], list):
        check_op(qualified, list(case.args))  # the shared oracle helper agrees too



def graph_key(qualified: str) -> str:
    """The registry key of a node for ``qualified``: prims go by their kind."""
    return qualified.partition(".")[0] if qualified.startswith("prim::") else qualified


def check_table(qualified: str, cases: list[Case]) -> None:
    """Every case of ``qualified``'s table (which must have some) through
    ``check_case``; prims (keyed by kind in gradview) get graph inputs typed by value."""
    assert cases, f"{qualified}: no cases"
    key = graph_key(qualified)
    for case in cases:
        types = case.types
        if key != qualified and types is None:
            types = [ir_type(a) for a in case.args]
        check_case(qualified, Case(case.args, types, case.expect, case.torch_args, case.rel), key)


# -- scripted functions ---------------------------------------------------------------------
def _to_gradview(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().numpy().copy()
    return copy.deepcopy(value)


def check_scripted(fn: Any, *inputs: Any) -> Any:
    """Parse ``fn``'s printed graph, run it on ``inputs`` and compare with ``fn``."""
    graph = parse_ir(str(fn.graph))
    ours = run(graph, [_to_gradview(v) for v in inputs])
    theirs = fn(*copy.deepcopy(inputs))
    assert len(ours) == 1
    assert_same(ours[0], theirs, fn.name)
    return ours[0]


def scripted_keys(fns: list[Any]) -> set[str]:
    """The kernel keys of every node in the scripted functions' graphs."""
    keys: set[str] = set()
    for fn in fns:
        keys.update(kernel_key(node) for node in parse_ir(str(fn.graph)).all_nodes())
    return keys
