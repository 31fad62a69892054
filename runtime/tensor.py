"""Eager tensors with a tape: a NumPy (or CuPy) array plus autograd metadata.

``Tensor(array, requires_grad=False)`` wraps an array. Arithmetic operators
and a few methods run the registered kernels (``gradview.kernels``) and, when
an input requires grad and grad mode is on, record a
:class:`~gradview.runtime.autograd.function.FunctionNode` whose backward rule
is written with these same tensor operations, so ``create_graph=True`` builds
a differentiable backward graph. The operation set is deliberately small: it
exists for tests and for higher-order gradients, not as a tensor library.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy

from gradview.ops import KERNELS

from .autograd.function import FunctionNode, attach
from .autograd.grad_mode import is_grad_enabled

__all__ = ["Tensor", "stack"]


def _array_module(array: Any) -> Any:
    """The array namespace of ``array``: NumPy, CuPy, or whatever the array says it
    belongs to (``__array_namespace__``, as any other backend's arrays answer)."""
    if isinstance(array, numpy.ndarray):
        return numpy
    if type(array).__module__.split(".")[0] == "cupy":
        import cupy  # noqa: PLC0415 - only when given a CuPy array

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
    other = _array_module(array)
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
            self.xp = _array_module(array)
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
        self.xp = numpy if type(array) is numpy.ndarray else _array_module(array)

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
        from .autograd import backward  # noqa: PLC0415

        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    # ----- differentiable operations ---------------------------------------------
    def _kernel(self, name: str, *args: Any) -> Any:
        raws = [_raw(a) for a in args]
        xp = self.xp
        if xp is not numpy or not all(type(r) is numpy.ndarray or not hasattr(r, "shape") for r in raws):
            if xp is numpy and self._data.ndim == 0:
                # A 0-d host tensor (a number) goes to the device of the other operand.
                xp = next((_array_module(r) for r in raws if _array_module(r) is not numpy
                           and getattr(r, "ndim", 0) > 0), xp)
            raws = [_on_device(xp, raw) for raw in raws]
        return KERNELS[name](xp, *raws)

    def __add__(self, other: Any) -> Tensor:
        return _op(
            "AddBackward0",
            self._kernel("aten::add.Tensor", self, other),
            [self, other],
            lambda g: [g, g],
            saves_state=False,
        )

    def __radd__(self, other: Any) -> Tensor:
        return _op(
            "AddBackward0",
            self._kernel("aten::add.Tensor", other, self),
            [other, self],
            lambda g: [g, g],
            saves_state=False,
        )

    def __sub__(self, other: Any) -> Tensor:
        return _op(
            "SubBackward0",
            self._kernel("aten::sub.Tensor", self, other),
            [self, other],
            lambda g: [g, -g],
            saves_state=False,
        )

    def __rsub__(self, other: Any) -> Tensor:
        return _op(
            "SubBackward0",
            self._kernel("aten::sub.Tensor", other, self),
            [other, self],
            lambda g: [g, -g],
            saves_state=False,
        )

    def __mul__(self, other: Any) -> Tensor:
        return _mul(self, other, self._kernel("aten::mul.Tensor", self, other))

    def __rmul__(self, other: Any) -> Tensor:
        return _mul(other, self, self._kernel("aten::mul.Tensor", other, self))

    def __truediv__(self, other: Any) -> Tensor:
        return _div(self, other, self._kernel("aten::div.Tensor", self, other))

    def __rtruediv__(self, other: Any) -> Tensor:
        return _div(other, self, self._kernel("aten::div.Tensor", other, self))

    def __neg__(self) -> Tensor:
        return _op(
            "NegBackward0",
            self._kernel("aten::neg", self),
            [self],
            lambda g: [-g],
            saves_state=False,
        )

    def __pow__(self, exponent: Any) -> Tensor:
        return _pow(self, exponent, self._kernel("aten::pow.Tensor_Tensor", self, exponent))

    def __rpow__(self, base: Any) -> Tensor:
        return _pow(base, self, self._kernel("aten::pow.Tensor_Tensor", base, self))

    def __matmul__(self, other: Any) -> Tensor:
        return self.matmul(other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return Tensor(other).matmul(self)

    def matmul(self, other: Tensor) -> Tensor:
        """Matrix product; differentiable for 2-D operands."""
        a, b = self, other if isinstance(other, Tensor) else Tensor(other)
        out = self._kernel("aten::matmul", a, b)
        if _records([a, b]) and (a.ndim != 2 or b.ndim != 2):
            raise NotImplementedError("matmul backward is implemented for 2-D operands only")
        return _op("MmBackward0", out, [a, b], lambda g: [g.matmul(b.t()), a.t().matmul(g)])

    def t(self) -> Tensor:
        return _op(
            "TBackward0",
            self._kernel("aten::t", self),
            [self],
            lambda g: [g.t()],
            saves_state=False,
        )

    def sum(self, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
        shape = self.shape
        if dim is None:
            out = self._kernel("aten::sum", self, None)
            dims = list(range(len(shape)))
        else:
            dims = [dim] if isinstance(dim, int) else list(dim)
            out = self._kernel("aten::sum.dim_IntList", self, dims, keepdim, None)
        dims = [d % len(shape) for d in dims] if shape else []
        kept = tuple(1 if i in dims else s for i, s in enumerate(shape))

        def backward(g: Tensor) -> list[Tensor]:
            return [g.reshape(kept)._broadcast_to(shape)]

        return _op("SumBackward0", out, [self], backward, saves_state=False)

    def mean(self, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
        total = self.sum(dim, keepdim)
        count = self.numel() // max(total.numel(), 1) if self.numel() else 0
        return total / count

    def exp(self) -> Tensor:
        out = self._kernel("aten::exp", self)
        result = _op("ExpBackward0", out, [self], lambda g: [g * result])
        return result

    def log(self) -> Tensor:
        return _op("LogBackward0", self._kernel("aten::log", self), [self], lambda g: [g / self])

    def tanh(self) -> Tensor:
        out = self._kernel("aten::tanh", self)
        result = _op("TanhBackward0", out, [self], lambda g: [g * (1 - result * result)])
        return result

    def sigmoid(self) -> Tensor:
        out = self._kernel("aten::sigmoid", self)
        result = _op("SigmoidBackward0", out, [self], lambda g: [g * result * (1 - result)])
        return result

    def relu(self) -> Tensor:
        out = self._kernel("aten::relu", self)
        mask = Tensor((self._data > 0).astype(self._data.dtype))
        return _op("ReluBackward0", out, [self], lambda g: [g * mask])

    def reshape(self, *shape: Any) -> Tensor:
        target = tuple(shape[0]) if len(shape) == 1 and not isinstance(shape[0], int) else shape
        original = self.shape
        return _op(
            "ViewBackward0",
            self._data.reshape(target),
            [self],
            lambda g: [g.reshape(original)],
            saves_state=False,
        )

    def sum_to_size(self, shape: Sequence[int]) -> Tensor:
        """Sum broadcast dimensions away so the result has ``shape``."""
        original = self.shape
        out = self._kernel("aten::sum_to_size", self, list(shape))
        return _op(
            "SumToSizeBackward0",
            out,
            [self],
            lambda g: [g._broadcast_to(original)],
            saves_state=False,
        )

    def _broadcast_to(self, shape: Sequence[int]) -> Tensor:
        original = self.shape
        out = self.xp.broadcast_to(self._data, tuple(shape)).copy()
        return _op(
            "ExpandBackward0", out, [self], lambda g: [g.sum_to_size(original)], saves_state=False
        )

    def select(self, dim: int, index: int) -> Tensor:
        """``index`` along dimension ``dim``, which disappears (``x.select(dim, index)``)."""
        shape = self.shape
        dim %= len(shape)
        index %= shape[dim]
        return _op(
            "SelectBackward0",
            self.xp.take(self._data, index, axis=dim),
            [self],
            lambda g: [_select_backward(g, shape, dim, index)],
            saves_state=False,
        )

    def to(self, dtype: Any) -> Tensor:
        """A copy converted to ``dtype`` (a NumPy dtype)."""
        original = self.dtype
        return _op(
            "ToCopyBackward0",
            self._data.astype(dtype),
            [self],
            lambda g: [g.to(original)],
            saves_state=False,
        )


def stack(tensors: Sequence[Tensor]) -> Tensor:
    """Tensors of one shape stacked along a new first dimension (``torch.stack(..., 0)``)."""
    first = tensors[0]
    array = first.xp.stack([t.data for t in tensors])
    return _op(
        "StackBackward0",
        array,
        list(tensors),
        lambda g: [g.select(0, i) for i in range(len(tensors))],
        saves_state=False,
    )


def _select_backward(grad: Tensor, shape: tuple[int, ...], dim: int, index: int) -> Tensor:
    """Zeros of ``shape`` holding ``grad`` at ``index`` along ``dim``: select's gradient."""
    array = grad.xp.zeros(shape, dtype=grad.dtype)
    array[(slice(None),) * dim + (index,)] = grad.data
    return _op(
        "SelectBackwardBackward0",
        array,
        [grad],
        lambda g: [g.select(dim, index)],
        saves_state=False,
    )


def _records(inputs: Sequence[Any]) -> bool:
    return is_grad_enabled() and any(isinstance(v, Tensor) and v.requires_grad for v in inputs)


def _op(
    name: str,
    array: Any,
    inputs: Sequence[Any],
    backward: Callable[[Tensor], list[Any]],
    *,
    saves_state: bool = True,
) -> Tensor:
    """Wrap a kernel's result; record a differentiable backward node when needed."""
    out = Tensor(array)
    if _records(inputs):

        def backward_fn(grads: list[Tensor | None]) -> list[Any]:
            (grad,) = grads
            return backward(grad)

        node = FunctionNode(name, backward_fn, inputs, differentiable=True, saves_state=saves_state)
        attach(node, [out])
    return out


def _needs(value: Any) -> bool:
    return isinstance(value, Tensor) and value.requires_grad


def _mul(a: Any, b: Any, array: Any) -> Tensor:
    def backward(g: Tensor) -> list[Any]:
        return [g * b if _needs(a) else None, g * a if _needs(b) else None]

    return _op("MulBackward0", array, [a, b], backward)


def _div(a: Any, b: Any, array: Any) -> Tensor:
    def backward(g: Tensor) -> list[Any]:
        return [g / b if _needs(a) else None, -g * a / (b * b) if _needs(b) else None]

    return _op("DivBackward0", array, [a, b], backward)


def _pow(a: Any, b: Any, array: Any) -> Tensor:
    def backward(g: Tensor) -> list[Any]:
        grad_a = g * b * a ** (b - 1) if _needs(a) else None
        grad_b = None
        if _needs(b):
            base = a if isinstance(a, Tensor) else Tensor(b.xp.asarray(a, dtype=b.dtype))
            grad_b = g * result * base.log()
        return [grad_a, grad_b]

    result = _op("PowBackward0", array, [a, b], backward)
    return result
