"""``gradview.runtime.trace``: record a function's operations into a Graph.

``fn`` runs on :class:`TracingTensor` objects (NumPy arrays that record every
operation); the result is a straight-line graph whose values carry complete
``TensorType`` types (dtype, sizes, strides, device) taken from the
arrays computed while tracing, each computed by the op library's kernel for
the node's overload (the interpreter's). Write ``fn`` with operators (``+ - * / ** @``,
unary ``-``), the methods listed on :class:`TracingTensor`, or the functions of
the :data:`ops` namespace (``ops.tanh``, ``ops.relu``, ``ops.sigmoid``,
``ops.matmul``, ``ops.exp``, ``ops.mean``, ``ops.sum``). Like
``torch.jit.trace``, control flow is not recorded: the branch taken while
tracing is baked in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np

from gradview.ir import Graph, TensorType, TupleType, Value, node_summary
from gradview.ir.passes.op_eval import node_kernel
from gradview.kernels.dtypes import dtype_name

__all__ = ["TracingTensor", "TraceError", "ops", "trace"]


class TraceError(ValueError):
    """``fn`` did something the tracer cannot record."""


def _tensor_type(array: np.ndarray) -> TensorType:
    sizes = tuple(int(s) for s in array.shape)
    strides = tuple(int(s) // array.itemsize for s in array.strides)
    return TensorType(dtype_name(array.dtype), sizes, strides, False, "cpu")


class _Recorder:
    def __init__(self) -> None:
        self.graph = Graph()

    def emit(self, kind: str, inputs: Sequence[Any]) -> TracingTensor:
        """Record ``kind`` on ``inputs`` (tensors and constants) and compute it with the
        op library's kernel for the overload the node resolves to, as the interpreter does."""
        values = [x.value if isinstance(x, TracingTensor) else x for x in inputs]
        out = self.graph.insert(kind, values)
        assert isinstance(out, Value)
        kernel = node_kernel(out.node)
        if kernel is None:
            raise TraceError(f"gradview has no kernel for {node_summary(out.node)}")
        result = np.asarray(kernel(np, *[x.array if isinstance(x, TracingTensor) else x for x in inputs]))
        out.set_type(_tensor_type(result))
        return TracingTensor(result, out, self)


class TracingTensor:
    """A NumPy array plus the graph value that computes it."""

    __array_priority__ = 1000  # numpy scalars on the left defer to our operators

    def __init__(self, array: np.ndarray, value: Value, recorder: _Recorder) -> None:
        self.array = np.asarray(array)
        self.value = value
        self.recorder = recorder

    @property
    def shape(self) -> tuple[int, ...]:
        return self.array.shape

    @property
    def dtype(self) -> np.dtype:
        return self.array.dtype

    def _other(self, other: Any) -> tuple[Any, Any]:
        """``other``'s array and what goes into the graph (a value or a Python number)."""
        if isinstance(other, TracingTensor):
            if other.recorder is not self.recorder:
                raise TraceError("cannot mix tensors of two different traces")
            return other.array, other
        if isinstance(other, (bool, int, float)):
            return other, other
        raise TraceError(
            f"cannot trace an operation with a {type(other).__name__}: pass arrays as inputs to trace()"
        )

    def _binary(self, kind: str, other: Any, alpha: bool) -> TracingTensor:
        _, arg = self._other(other)
        return self.recorder.emit(kind, [self, arg, 1] if alpha else [self, arg])

    def __add__(self, other: Any) -> TracingTensor:
        return self._binary("aten::add", other, True)

    __radd__ = __add__

    def __sub__(self, other: Any) -> TracingTensor:
        return self._binary("aten::sub", other, True)

    def __rsub__(self, other: Any) -> TracingTensor:
        return (-self) + other

    def __mul__(self, other: Any) -> TracingTensor:
        return self._binary("aten::mul", other, False)

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> TracingTensor:
        return self._binary("aten::div", other, False)

    def __pow__(self, other: Any) -> TracingTensor:
        return self._binary("aten::pow", other, False)

    def __matmul__(self, other: Any) -> TracingTensor:
        if not isinstance(other, TracingTensor):
            raise TraceError("matmul needs two tensors")
        return self._binary("aten::matmul", other, False)

    def __neg__(self) -> TracingTensor:
        return self.recorder.emit("aten::neg", [self])

    def __bool__(self) -> bool:
        raise TraceError("a traced tensor cannot decide control flow: the trace would bake in one branch")

    # -- methods ------------------------------------------------------------------
    def tanh(self) -> TracingTensor:
        return self.recorder.emit("aten::tanh", [self])

    def relu(self) -> TracingTensor:
        return self.recorder.emit("aten::relu", [self])

    def sigmoid(self) -> TracingTensor:
        return self.recorder.emit("aten::sigmoid", [self])

    def exp(self) -> TracingTensor:
        return self.recorder.emit("aten::exp", [self])

    def log(self) -> TracingTensor:
        return self.recorder.emit("aten::log", [self])

    def t(self) -> TracingTensor:
        return self.recorder.emit("aten::t", [self])

    def matmul(self, other: TracingTensor) -> TracingTensor:
        return self @ other

    def _reduce(self, kind: str, dim: int | Sequence[int] | None, keepdim: bool) -> TracingTensor:
        if dim is None:
            return self.recorder.emit(kind, [self, None])
        dims = [dim] if isinstance(dim, int) else list(dim)
        return self.recorder.emit(kind, [self, dims, keepdim, None])

    def sum(self, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> TracingTensor:
        return self._reduce("aten::sum", dim, keepdim)

    def mean(self, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> TracingTensor:
        return self._reduce("aten::mean", dim, keepdim)

    def __repr__(self) -> str:
        return f"TracingTensor(%{self.value.debug_name()}, shape={self.array.shape})"


ops = SimpleNamespace(
    tanh=TracingTensor.tanh,
    relu=TracingTensor.relu,
    sigmoid=TracingTensor.sigmoid,
    exp=TracingTensor.exp,
    log=TracingTensor.log,
    matmul=TracingTensor.matmul,
    mean=TracingTensor.mean,
    sum=TracingTensor.sum,
)
"""Torch-like functions for traced code: ``ops.tanh(x)``, ``ops.sum(x, 1)``..."""


def trace(fn: Callable[..., Any], example_inputs: Sequence[Any]) -> Graph:
    """Run ``fn`` on tracing tensors made from ``example_inputs`` (arrays) and return its graph.

    The graph's inputs are the arrays, typed with their dtype and shape; its
    outputs are ``fn``'s result (a tensor, or a tuple of tensors packed with
    ``prim::TupleConstruct``).
    """
    recorder = _Recorder()
    graph = recorder.graph
    args = []
    for i, example in enumerate(example_inputs):
        array = np.asarray(example)
        value = graph.add_input(f"x{i}" if len(example_inputs) > 1 else "x", _tensor_type(array))
        args.append(TracingTensor(array, value, recorder))
    result = fn(*args)
    graph.register_output(_output(graph, result, recorder))
    return graph


def _output(graph: Graph, result: Any, recorder: _Recorder) -> Value:
    if isinstance(result, TracingTensor):
        if result.recorder is not recorder:
            raise TraceError("fn returned a tensor from another trace")
        return result.value
    if isinstance(result, (tuple, list)):
        values = [_output(graph, r, recorder) for r in result]
        node = graph.create("prim::TupleConstruct", values, 0)
        node.add_output(TupleType(tuple(v.type() for v in values)))
        return graph.insert_node(node).output()
    raise TraceError(f"fn must return tensors, got {type(result).__name__}")
