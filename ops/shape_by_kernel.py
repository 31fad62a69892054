"""Shape rules that run the op's own kernel on stand-in inputs.

For rearranging ops (``flip``, ``unfold``, ``hsplit``, ``block_diag``...) the
result's sizes follow from the input sizes and the constant arguments by the
same arithmetic the kernel does; rather than repeat it, the rule calls the
kernel on zero arrays of the known sizes (zero-strided views, so nothing is
allocated for the inputs) and reads back its outputs' sizes. The rule gives up
(sizes unknown, dtype kept) when a size or argument is known only at run time,
when the inputs are large, or when the kernel refuses the arguments: the run
then says why, naming the node.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy

from gradview.ir import TensorType
from gradview.ir.types import ListType, Type
from gradview.kernels.dtypes import dtype_name, to_dtype

from .shape_toolkit import ElementList, NodeArgs, RuleResult, device_of, fresh, make_tensor

__all__ = ["by_kernel", "by_kernel_outputs"]

_UNKNOWN = object()
_MAX_ELEMENTS = 1 << 16  # stand-ins and results stay small; larger inputs get unknown sizes


def _stand_in(t: Type | None) -> Any:
    if not isinstance(t, TensorType) or t.sizes is None or None in t.sizes or t.scalar_type is None:
        return _UNKNOWN
    if int(numpy.prod(t.sizes, dtype=numpy.int64)) > _MAX_ELEMENTS:
        return _UNKNOWN
    return numpy.broadcast_to(numpy.zeros((), to_dtype(t.scalar_type)), tuple(t.sizes))  # type: ignore[arg-type]


def _argument(args: NodeArgs, i: int) -> Any:
    t = args.type(i)
    if isinstance(t, TensorType):
        return _stand_in(t)
    if isinstance(t, ListType) and isinstance(t.elem, TensorType):
        elements = args.elements(i)
        if elements is None:
            return _UNKNOWN
        arrays = [_stand_in(e) for e in elements]
        return _UNKNOWN if any(a is _UNKNOWN for a in arrays) else arrays
    value = args.value(i, _UNKNOWN)
    if isinstance(value, list) and None in value:
        return _UNKNOWN
    return value


def _typed(result: Any, device: str | None, view: bool) -> Type:
    sizes = tuple(int(s) for s in result.shape)
    dtype = dtype_name(result.dtype)
    return make_tensor(dtype, sizes, None, device) if view else fresh(dtype, sizes, device)


def by_kernel(
    kernel: Callable[..., Any], *, view: bool = False, dtype_from: int = 0, arity: int | None = None
) -> Callable[[NodeArgs], RuleResult]:
    """A shape rule calling ``kernel`` on the node's first ``arity`` inputs (all by default).

    ``view``: the result shares memory (strides left unknown); otherwise it is fresh and
    contiguous. When the sizes cannot be known, the result keeps input ``dtype_from``'s
    dtype (a list of unknown length for list results)."""

    def rule(args: NodeArgs) -> RuleResult:
        count = len(args) if arity is None else min(arity, len(args))
        values = [_argument(args, i) for i in range(count)]
        tensors = [args.tensor(i) for i in range(len(args))]
        device = device_of(*tensors)
        if not _any_unknown(values):
            try:
                result = kernel(numpy, *values)
            except Exception:  # the run reports the kernel's refusal, naming the node
                result = None
            if isinstance(result, (list, tuple)):
                return [ElementList(tuple(_typed(r, device, view) for r in result))]
            if result is not None:
                return [_typed(result, device, view)]
        return _unknown(args, dtype_from, device)

    return rule


def _any_unknown(values: list[Any]) -> bool:
    # By identity: ``in`` would compare stand-in arrays with the marker element-wise.
    return any(value is _UNKNOWN for value in values if not isinstance(value, list))


def _unknown(args: NodeArgs, dtype_from: int, device: str | None) -> RuleResult:
    source = args.tensor(dtype_from)
    if source is None and dtype_from < len(args):
        elements = args.elements(dtype_from) or ()
        source = next((e for e in elements if isinstance(e, TensorType)), None)  # type: ignore[assignment]
    dtype = source.scalar_type if source is not None else None
    tensor = make_tensor(dtype, None, None, device)
    if isinstance(args.node.outputs()[0].type(), ListType):
        return [ListType(tensor)]
    return [tensor]



def by_kernel_outputs(kernel: Callable[..., Any]) -> Callable[[NodeArgs], RuleResult]:
    """A shape rule for an op with several outputs (``values, indices``; ``hist, bin_edges``),
    one type per output, from the kernel run on stand-ins as :func:`by_kernel` does; a list
    output (``Tensor[]``) is an :class:`ElementList`. Unknown sizes leave every output as it is."""

    def rule(args: NodeArgs) -> RuleResult:
        values = [_argument(args, i) for i in range(len(args))]
        device = device_of(*[args.tensor(i) for i in range(len(args))])
        if _any_unknown(values):
            return None
        try:
            result = kernel(numpy, *values)
        except Exception:  # the run reports the kernel's refusal, naming the node
            return None
        return [ElementList(tuple(_typed(e, device, False) for e in r)) if isinstance(r, list)
                else _typed(r, device, False) for r in result]

    return rule
