"""Seeded checks shared by the kernel tests of layer/batch norm, max pooling and softmax's
backward: each op runs as a one-node graph on the backend tests/kernels/conftest.py
picked, values to 1e-6 relative in float64 (1e-5 in float32), dtypes and shapes exactly.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradview.ir import Graph, node_summary
from gradview.runtime import GraphRuntimeError
from gradview.runtime import run_graph as _run_graph
from tests.kernels import oracle
from tests.kernels.oracle import check_op, op_graph

__all__ = ["DOUBLE", "FLOAT32", "HALF", "SEEDS", "as_torch", "check", "expect_error", "randn", "run_graph"]

SEEDS = range(5)
DOUBLE, FLOAT32, HALF = 7, 6, 5  # TorchScript ScalarType numbers


def run_graph(graph: Graph, inputs: list) -> list:
    """Run on the backend tests/kernels/conftest.py picked for this test."""
    return _run_graph(graph, inputs, backend=getattr(oracle, "BACKEND", "numpy"))


def check(op: str, args: list) -> list:
    f32 = any(getattr(a, "dtype", None) == np.float32 for a in args)
    return check_op(op, args, rtol=1e-5 if f32 else 1e-6, atol=1e-6 if f32 else 1e-12)


def randn(rng: np.random.Generator, *shape: int, dtype: type = np.float64) -> np.ndarray:
    return np.asarray(rng.standard_normal(shape), dtype=dtype)


def expect_error(op: str, args: list, message: str) -> GraphRuntimeError:
    graph, inputs = op_graph(op, args)
    with pytest.raises(GraphRuntimeError, match=message) as info:
        run_graph(graph, inputs)
    assert node_summary(list(graph.nodes())[-1]) in str(info.value)
    return info.value


def as_torch(array: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.array(array))
