"""ArgumentSpec: what a graph executor specializes a graph on.

For every input the executor notes the facts that change how the graph should
be optimized: for a tensor whether it is defined, whether it requires grad,
its dtype and its rank; for anything else just its kind. Two calls with the
same spec reuse one compiled plan; a new spec compiles a new one. Sizes are
deliberately left out (TorchScript does the same), so a batch of 64 and a
batch of 65 share a plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gradview.ir import Graph, TensorType
from gradview.kernels.dtypes import dtype_name

__all__ = ["ArgumentSpec", "TensorSpec", "specialize_types"]


@dataclass(frozen=True, slots=True)
class TensorSpec:
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
        specs: list[TensorSpec | str] = []
        for value, given in zip(graph.inputs(), inputs, strict=True):
            if isinstance(value.type(), TensorType):
                specs.append(_tensor_spec(given, grad_enabled))
            else:
                specs.append(type(given).__name__)
        return ArgumentSpec(grad_enabled, tuple(specs))

    def __str__(self) -> str:
        return "(" + ", ".join(str(a) for a in self.args) + ")"


def _tensor_spec(value: Any, grad_enabled: bool) -> TensorSpec:
    if value is None:
        return TensorSpec(False, False, None, None)
    array = getattr(value, "data", value) if hasattr(value, "requires_grad") else value
    requires_grad = bool(getattr(value, "requires_grad", False)) and grad_enabled
    return TensorSpec(True, requires_grad, dtype_name(array.dtype), len(array.shape))


def specialize_types(graph: Graph, spec: ArgumentSpec) -> None:
    """Give the graph's inputs the dtype, rank, requires_grad (and undefinedness) of ``spec``."""
    for value, arg in zip(graph.inputs(), spec.args, strict=True):
        if not isinstance(arg, TensorSpec):
            continue
        if not arg.defined:
            value.set_type(TensorType(undefined=True))
            continue
        sizes = tuple(None for _ in range(arg.rank)) if arg.rank is not None else None
        value.set_type(TensorType(arg.dtype, sizes, None, arg.requires_grad, "cpu", undefined=False))
