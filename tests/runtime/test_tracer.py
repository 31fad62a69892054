"""gradview.runtime.trace: recorded graphs run like the function and carry complete types."""

from __future__ import annotations

import numpy as np
import pytest

from gradview.ir import TensorType, TupleType, lint
from gradview.runtime import run_graph, trace
from gradview.runtime.tracer import TraceError, ops

RNG = np.random.default_rng(1)


def arr(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def mlp(x, w1, w2):
    h = ops.tanh(ops.matmul(x, w1)) + 1
    y = ops.relu(h @ w2) * 2.0 - 0.5
    return ops.mean(y), ops.sum(y, 1, keepdim=True), -ops.sigmoid(y) / 3, 1 - ops.exp(y).t()


def operators(x, y):
    return (x + y) * x - y / 2 + x ** 2




def mlp_numpy(x, w1, w2):
    h = np.tanh(x @ w1) + 1
    y = np.maximum(h @ w2, 0) * 2.0 - 0.5
    return y.mean(), y.sum(1, keepdims=True), -1 / (1 + np.exp(-y)) / 3, 1 - np.exp(y).T


def complete(type_):
    if isinstance(type_, TupleType):
        return all(complete(e) for e in type_.elems)
    return (isinstance(type_, TensorType) and type_.scalar_type is not None and type_.sizes is not None
            and None not in type_.sizes and type_.strides is not None and type_.device is not None)


@pytest.mark.parametrize("fn, reference, shapes", [
    (mlp, mlp_numpy, [(4, 3), (3, 5), (5, 2)]),
    (operators, operators, [(2, 3), (2, 3)]),
])
def test_trace_runs_like_function_with_complete_types(fn, reference, shapes):
    inputs = [arr(*s) for s in shapes]
    graph = trace(fn, inputs)
    lint(graph)
    for node in graph.all_nodes():
        for value in node.outputs():
            if node.kind() != "prim::Constant":
                assert complete(value.type()), str(node)
    assert all(complete(v.type()) for v in graph.inputs())
    (got,) = run_graph(graph, inputs)
    want = reference(*inputs)
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
        assert np.shape(g) == np.shape(w)


def test_trace_refuses_control_flow_on_tensors():
    def fn(x):
        return x if ops.sum(x) else -x

    with pytest.raises(TraceError):
        trace(fn, [arr(2)])
