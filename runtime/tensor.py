"""Eager tensors with a tape: a NumPy (or CuPy) array plus autograd metadata.

``Tensor(array, requires_grad=False)`` wraps an array. Arithmetic operators
and a few methods run the op library's kernels (``gradview.ops.KERNELS``, as
the interpreter does) and, when an input requires grad and grad mode is on, run
the op as a one-node graph differentiated with the op library's gradient
formula (:func:`~gradview.runtime.eager_ops.run_tensor_op`), recorded as a
backward node named as PyTorch names it; its backward runs through the
executor, so ``create_graph=True`` builds a differentiable backward graph.
The operation set is deliberately small: it exists for tests and for
higher-order gradients, not as a tensor library.
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy

from gradview.kernels.dtypes import scalar_type_index
from gradview.ops import KERNELS

from .autograd.function import FunctionNode
from .autograd.grad_mode import is_grad_enabled

__all__ = ["Tensor", "stack"]


def array_module(array: Any) -> Any:
    """The array namespace of ``array``: NumPy, CuPy, or whatever the array says it
    belongs to (``__array_namespace__``, as any other backend's arrays answer)."""
    if isinstance(array, numpy.ndarray):
        return numpy
    if type(array).__module__.split(".")[0] == "cupy":
        import cupy  # only when given a CuPy array

        return cupy
    namespace = getattr(array, "__array_namespace__", None)
    return namespace() if namespace is not None else numpy


def _device_name(xp: Any) -> str:
    return "cpu" if xp is numpy else "cuda:0"


def _on_device(xp: Any, array: Any) -> Any:
    """An operand of an op running on ``xp``'s device (not the host's). PyTorch refuses a
    tensor on another device, but copies a 0-d CPU tensor (a number) over, and so does this."""
    if not hasattr(array, "shape") or isinstance(array, numpy.generic):
        return array  # Python numbers and NumPy scalars go with any device
    other = array_module(array)
    if other is xp:
        return array
    if other is numpy and array.ndim == 0:
        return xp.asarray(array.item(), dtype=array.dtype)  # a number, made on the device
    raise RuntimeError(
        "Expected all tensors to be on the same device, but found at least two devices, "
        f"{_device_name(xp)} and {_device_name(other)}!"
    )


def _raw(value: Any) -> Any:
    return value.data if isinstance(value, Tensor) else value


class Tensor:
    """An array with autograd metadata (``requires_grad``, ``grad``, ``grad_fn``)."""

    __array_ufunc__ = None  # numpy scalars on the left defer to our reflected operators
    # True on a backward function's fresh gradient whose array nothing else holds
    # (autograd.function.owned_tensor): the first .grad it reaches keeps the array.
    _owns_data = False
    # Autograd metadata of a fresh Tensor, as class defaults (autograd makes many
    # Tensors per step; an instance gets its own value when one is set).
    _requires_grad = False
    _grad_fn: FunctionNode | None = None
    _output_nr = 0
    _grad_accumulator: Any = None
    grad: Tensor | None = None

    def __init__(self, array: Any, requires_grad: bool = False) -> None:
        if type(array) is numpy.ndarray:  # the common case, checked first
            self.xp = numpy
        else:
            if isinstance(array, Tensor):
                array = array.data
            if isinstance(array, numbers.Number | list | tuple | numpy.generic):
                array = numpy.asarray(array)
            self.xp = array_module(array)
        self._data = array
        if requires_grad:
            self.requires_grad = True

    # ----- metadata ---------------------------------------------------------------
    @property
    def data(self) -> Any:
        return self._data

    @data.setter
    def data(self, array: Any) -> None:
        self._data = array
        self.xp = numpy if type(array) is numpy.ndarray else array_module(array)

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        value = bool(value)
        if self._grad_fn is not None:
            if not value:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to "
                    "use a computed variable in a subgraph that doesn't require differentiation "
                    "use var_no_grad = var.detach()."
                )
            return
        if value and self._data.dtype.kind not in "fc":
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self._requires_grad = value

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        self.requires_grad = requires_grad
        return self

    @property
    def grad_fn(self) -> FunctionNode | None:
        return self._grad_fn

    @property
    def is_leaf(self) -> bool:
        return self._grad_fn is None

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._data.shape)

    @property
    def dtype(self) -> Any:
        return self._data.dtype

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    def __len__(self) -> int:
        return len(self._data)

    def detach(self) -> Tensor:
        """The same array, cut from the graph (``requires_grad=False``)."""
        return Tensor(self._data)

    def numpy(self) -> numpy.ndarray:
        if self._requires_grad:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. "
                "Use tensor.detach().numpy() instead."
            )
        if self.xp is numpy:
            return self._data
        return self.xp.asnumpy(self._data)

    def item(self) -> Any:
        return self._data.item()

    def __repr__(self) -> str:
        extra = ""
        if self._grad_fn is not None:
            extra = f", grad_fn=<{self._grad_fn.name}>"
        elif self._requires_grad:
            extra = ", requires_grad=True"
        return f"Tensor({self._data!r}{extra})"

    def backward(
        self,
        gradient: Tensor | None = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Any = None,
    ) -> None:
        """``autograd.backward(self, gradient, ...)``."""
        from .autograd import backward

        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    # ----- differentiable operations ---------------------------------------------
    # Each runs the op library's kernel for its overload; when an operand requires
    # grad, it runs as a one-node graph differentiated with the op's gradient formula
    # (runtime/eager_ops.run_tensor_op): no gradient rule is written here.
    def _arrays(self, args: Sequence[Any]) -> tuple[Any, list[Any]]:
        """The array module to run on, and the operands' arrays on its device."""
        raws = [_raw(a) for a in args]
        xp = self.xp
        if xp is not numpy or not all(type(r) is numpy.ndarray or not hasattr(r, "shape") for r in raws):
            if xp is numpy and self._data.ndim == 0:
                # A 0-d host tensor (a number) goes to the device of the other operand.
                xp = next((array_module(r) for r in raws if array_module(r) is not numpy
                           and getattr(r, "ndim", 0) > 0), xp)
            raws = [_on_device(xp, raw) for raw in raws]
        return xp, raws

    def _call(self, name: str, overload: str, operands: Sequence[Any], *constants: Any) -> Tensor:
        """``overload`` on ``operands`` then ``constants``; ``name`` is its backward node (PyTorch's)."""
        xp, arrays = self._arrays(operands)
        if _records(operands):
            return _run_recorded()(name, overload.split(".", 1)[0], operands, arrays, constants)
        return Tensor(KERNELS[overload](xp, *arrays, *constants))

    def __add__(self, other: Any) -> Tensor:
        return self._call("AddBackward0", "aten::add.Tensor", (self, other), 1)

    def __radd__(self, other: Any) -> Tensor:
        return self._call("AddBackward0", "aten::add.Tensor", (other, self), 1)

    def __sub__(self, other: Any) -> Tensor:
        return self._call("SubBackward0", "aten::sub.Tensor", (self, other), 1)

    def __rsub__(self, other: Any) -> Tensor:
        return self._call("SubBackward0", "aten::sub.Tensor", (other, self), 1)

    def __mul__(self, other: Any) -> Tensor:
        return self._call("MulBackward0", "aten::mul.Tensor", (self, other))

    def __rmul__(self, other: Any) -> Tensor:
        return self._call("MulBackward0", "aten::mul.Tensor", (other, self))

    def __truediv__(self, other: Any) -> Tensor:
        return self._call("DivBackward0", "aten::div.Tensor", (self, other))

    def __rtruediv__(self, other: Any) -> Tensor:
        return self._call("DivBackward0", "aten::div.Tensor", (other, self))

    def __neg__(self) -> Tensor:
        return self._call("NegBackward0", "aten::neg", (self,))

    def __pow__(self, exponent: Any) -> Tensor:
        return self._call("PowBackward0", "aten::pow.Tensor_Tensor", (self, exponent))

    def __rpow__(self, base: Any) -> Tensor:
        return self._call("PowBackward0", "aten::pow.Tensor_Tensor", (base, self))

    def __matmul__(self, other: Any) -> Tensor:
        return self.matmul(other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return Tensor(other).matmul(self)

    def matmul(self, other: Tensor) -> Tensor:
        """Matrix product (``torch.matmul``)."""
        other = other if isinstance(other, Tensor) else Tensor(other)
        return self._call("MmBackward0", "aten::matmul", (self, other))

    def t(self) -> Tensor:
        return self._call("TBackward0", "aten::t", (self,))

    def sum(self, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
        if dim is None:
            return self._call("SumBackward0", "aten::sum", (self,), None)
        dims = [dim] if isinstance(dim, int) else list(dim)
        return self._call("SumBackward1", "aten::sum.dim_IntList", (self,), dims, keepdim, None)

    def mean(self, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
        total = self.sum(dim, keepdim)
        count = self.numel() // max(total.numel(), 1) if self.numel() else 0
        return total / count

    def exp(self) -> Tensor:
        return self._call("ExpBackward0", "aten::exp", (self,))

    def log(self) -> Tensor:
        return self._call("LogBackward0", "aten::log", (self,))

    def tanh(self) -> Tensor:
        return self._call("TanhBackward0", "aten::tanh", (self,))

    def sigmoid(self) -> Tensor:
        return self._call("SigmoidBackward0", "aten::sigmoid", (self,))

    def relu(self) -> Tensor:
        return self._call("ReluBackward0", "aten::relu", (self,))

    def reshape(self, *shape: Any) -> Tensor:
        target = list(shape[0]) if len(shape) == 1 and not isinstance(shape[0], int) else list(shape)
        return self._call("ViewBackward0", "aten::reshape", (self,), target)

    def sum_to_size(self, shape: Sequence[int]) -> Tensor:
        """Sum broadcast dimensions away so the result has ``shape``."""
        return self._call("SumToSizeBackward0", "aten::sum_to_size", (self,), list(shape))

    def select(self, dim: int, index: int) -> Tensor:
        """``index`` along dimension ``dim``, which disappears (``x.select(dim, index)``)."""
        return self._call("SelectBackward0", "aten::select.int", (self,), dim, index)

    def to(self, dtype: Any) -> Tensor:
        """A copy converted to ``dtype`` (a NumPy dtype)."""
        code = scalar_type_index(numpy.dtype(dtype))
        return self._call("ToCopyBackward0", "aten::_to_copy", (self,), code, None, None, None, False, None)


def stack(tensors: Sequence[Tensor]) -> Tensor:
    """Tensors of one shape stacked along a new first dimension (``torch.stack(..., 0)``)."""
    first = tensors[0]
    xp, arrays = first._arrays(tensors)
    if _records(tensors):
        return _run_recorded()("StackBackward0", "aten::stack", tensors, arrays, (0,), as_list=True)
    return Tensor(KERNELS["aten::stack"](xp, arrays, 0))


@functools.cache
def _run_recorded() -> Callable[..., Tensor]:
    """runtime.eager_ops.run_tensor_op, looked up once (eager_ops imports this module)."""
    from .eager_ops import run_tensor_op

    return run_tensor_op


def _records(inputs: Sequence[Any]) -> bool:
    return is_grad_enabled() and any(isinstance(v, Tensor) and v.requires_grad for v in inputs)
