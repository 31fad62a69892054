"""ArgumentSpec: what a graph executor specializes a graph on.

For every input the executor notes the facts that change how the graph should
be optimized: for a tensor (or an optional tensor, ``Tensor?``) whether it is
defined, whether it requires grad, its dtype and its rank; for anything else
just its kind. As in TorchScript's ArgumentSpecCreator, the tensors inside a
list (``Tensor[]``) are not specialized: the list's type stays as declared, so
its elements may require grad and the graph is differentiated for them. Two calls with the
same spec reuse one compiled plan; a new spec compiles a new one. Sizes are
deliberately left out (TorchScript does the same), so a batch of 64 and a
batch of 65 share a plan.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from numpy import ndarray

from gradview.ir import Graph, NoneType, OptionalType, TensorType, Type
from gradview.kernels.dtypes import dtype_name

from .tensor import Tensor

__all__ = ["ArgumentSpec", "SpecKey", "TensorSpec", "gatherer", "is_specialized_tensor", "specialize_types"]


class TensorSpec(NamedTuple):
    # A NamedTuple, not a dataclass: one is built per tensor input per run.
    defined: bool
    requires_grad: bool
    dtype: str | None
    rank: int | None

    def __str__(self) -> str:
        if not self.defined:
            return "undefined"
        grad = ", requires_grad" if self.requires_grad else ""
        return f"{self.dtype}(rank {self.rank}{grad})"


@dataclass(frozen=True, slots=True)
class ArgumentSpec:
    """One entry per graph input: a TensorSpec, or the Python type name of a value."""

    grad_enabled: bool
    args: tuple[TensorSpec | str, ...]

    @staticmethod
    def of(graph: Graph, inputs: Sequence[Any], grad_enabled: bool = True) -> ArgumentSpec:
        """The spec of ``inputs``; a wrong count or a non-tensor for a tensor
        input raises TypeError naming the input, as TorchScript does."""
        params = graph.inputs()
        if len(inputs) != len(params):
            names = ", ".join("%" + v.debug_name() for v in params)
            raise TypeError(f"the graph takes {len(params)} inputs ({names}), got {len(inputs)}")
        specs: list[TensorSpec | str] = []
        for index, (value, given) in enumerate(zip(params, inputs, strict=True)):
            if not is_specialized_tensor(value.type()):
                specs.append(type(given).__name__)
                continue
            if given is not None and not hasattr(given, "dtype") and not hasattr(given, "requires_grad"):
                raise TypeError(
                    f"expected a value of type '{value.type()}' for input {index} (%{value.debug_name()}) "
                    f"but instead found type '{type(given).__name__}'"
                )
            specs.append(_tensor_spec(given, grad_enabled))
        return ArgumentSpec(grad_enabled, tuple(specs))

    def __str__(self) -> str:
        return "(" + ", ".join(str(a) for a in self.args) + ")"


class SpecKey:
    """A cheap hashable stand-in for an ArgumentSpec, computed on every run.

    It holds the facts a plan depends on in raw form (dtype objects, ranks,
    flags) for the tensor inputs only: plans are specialized on those alone,
    as TorchScript's ArgumentSpec records tensors only. The executor finds a
    known plan without building TensorSpecs and dtype names; the full
    ArgumentSpec is only built when the key is new.
    """

    def __init__(self, graph: Graph) -> None:
        self.count = len(graph.inputs())
        self.tensor_positions = [
            index for index, value in enumerate(graph.inputs()) if is_specialized_tensor(value.type())
        ]
        self._select = gatherer(self.tensor_positions)

    def of(self, inputs: Sequence[Any], grad_enabled: bool) -> tuple[Any, ...]:
        if len(inputs) != self.count:
            # ArgumentSpec.of (on the miss) raises the clear error for a wrong count.
            return (len(inputs),)
        values = self._select(inputs)
        kinds = tuple(map(type, values))
        if _PLAIN_KINDS.issuperset(kinds):
            # Arrays, Tensors and None (the common case): the facts read in C
            # loops (map), not a Python loop per input.
            dtypes = tuple(map(getattr, values, _DTYPE, _NONE))
            ranks = tuple(map(getattr, values, _NDIM, _NONE))
            flags = tuple(map(getattr, values, _REQUIRES_GRAD, _FALSE)) if grad_enabled else None
            return (grad_enabled, kinds, dtypes, ranks, flags)
        key: list[Any] = [grad_enabled]
        append = key.append
        for given in values:
            requires_grad = getattr(given, "requires_grad", None)
            array = given if requires_grad is None else given.data
            dtype = getattr(array, "dtype", None)
            if dtype is None:  # not a tensor: ArgumentSpec.of names the input on the miss
                append(type(given))
            else:
                append((dtype, getattr(array, "ndim", None), bool(requires_grad) and grad_enabled))
        return tuple(key)


_PLAIN_KINDS = frozenset({ndarray, Tensor, type(None)})
# Endless argument streams for map(getattr, values, names, defaults).
_DTYPE, _NDIM, _REQUIRES_GRAD = itertools.repeat("dtype"), itertools.repeat("ndim"), itertools.repeat("_requires_grad")
_NONE, _FALSE = itertools.repeat(None), itertools.repeat(False)


def gatherer(positions: Sequence[int]) -> Callable[[Sequence[Any]], list[Any]]:
    """``lambda values: [values[i] for i in positions]``, through operator.itemgetter
    (a C-level getter: the executor gathers on every run)."""
    if not positions:
        return lambda values: []
    if len(positions) == 1:
        (only,) = positions
        return lambda values: [values[only]]
    getter = operator.itemgetter(*positions)
    return lambda values: list(getter(values))


def is_specialized_tensor(type_: Type) -> bool:
    """Inputs the spec records tensor facts for: ``Tensor`` and ``Tensor?``."""
    if isinstance(type_, OptionalType):
        type_ = type_.elem
    return isinstance(type_, TensorType)


def _tensor_spec(value: Any, grad_enabled: bool) -> TensorSpec:
    if value is None:
        return TensorSpec(False, False, None, None)
    requires_grad = getattr(value, "requires_grad", None)
    if requires_grad is None:  # a bare array
        return TensorSpec(True, False, _dtype_name(value.dtype), value.ndim)
    array = value.data
    return TensorSpec(True, bool(requires_grad) and grad_enabled, _dtype_name(array.dtype), array.ndim)


_DTYPE_NAMES: dict[Any, str] = {}


def _dtype_name(dtype: Any) -> str:
    # dtype_name normalizes through numpy.dtype(); remember each dtype object's answer.
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = dtype_name(dtype)
    return name


def specialize_types(graph: Graph, spec: ArgumentSpec) -> None:
    """Give the graph's inputs the dtype, rank, requires_grad (and undefinedness) of ``spec``;
    a ``Tensor?`` input becomes a Tensor when given one and NoneType when given None."""
    for value, arg in zip(graph.inputs(), spec.args, strict=True):
        if not isinstance(arg, TensorSpec):
            continue
        if not arg.defined:
            optional = isinstance(value.type(), OptionalType)
            value.set_type(NoneType() if optional else TensorType(undefined=True))
            continue
        sizes = tuple(None for _ in range(arg.rank)) if arg.rank is not None else None
        value.set_type(TensorType(arg.dtype, sizes, None, arg.requires_grad, "cpu", undefined=False))
