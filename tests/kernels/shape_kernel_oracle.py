"""Shared helpers for the shape and cast kernel tests (test_shapes.py, test_casts.py).

``rand`` makes seeded random arrays; ``build`` is the oracle's ``op_graph``
(a one-node graph of an aten overload: arrays become typed graph inputs,
lists of arrays go through prim::ListConstruct, ``Typed`` constants keep
their IR type); ``run`` and ``call_kernel`` run on the backend the conftest
chose; ``check`` compares a call with PyTorch's (values to 1e-6 relative,
dtypes and shapes exactly).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from gradview.ir import Graph, ListType, schemas_for
from gradview.kernels import get_backend
from gradview.ops import KERNELS
from gradview.runtime import run_graph
from tests.kernels import oracle
from tests.kernels.oracle import Typed, check_op, op_graph, random_array, torch_call

SEEDS = (0, 1, 2)
F64, F32, I64, BOOL = "float64", "float32", "int64", "bool"

# A case: (id, overload, seeded argument builder).
Case = tuple[str, str, Callable[[np.random.Generator], list[Any]]]


def rand(rng: np.random.Generator, shape: tuple[int, ...], dtype: str = F64) -> np.ndarray:
    """Seeded random values of ``dtype``: normal floats times 4, small signed
    ints (unsigned ones from 0), coin-flip bools."""
    low, high = (0, 10) if np.dtype(dtype).kind == "u" else (-9, 10)
    return random_array(rng, shape, dtype, low, high, scale=4.0)


# A one-node graph of an aten overload on arguments (Typed constants keep their IR type).
build = op_graph


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
