"""What the types and constants of a node tell a formula at compile time.

A TorchScript backward formula is a small program that runs at run time,
with ``if``s on ranks and sizes (``AD_sum_backward``, ``AD_matmul_size``).
gradview's formulas are Python functions that run while the backward graph
is being *built*, so they can settle those questions once, from what the
forward graph already knows:

* a tensor input typed ``Double(4, 3)`` has a known rank and size, so the
  backward gets ``[4, 3]`` as a constant instead of capturing ``size(x)``;
* constant arguments (``dim``, ``keepdim``, ``p``) pick the branch of the
  formula, so the backward graph holds only the ops that branch needs.

When a fact is not known (a plain ``Tensor`` type), the helpers fall back to
computing it at run time (``size_of``), or report that the formula cannot be
built (``fail``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NoReturn

from gradview.ir import ListType, Node, NoneType, TensorType, Value
from gradview.ir.constants import NOT_CONSTANT, constant_value
from gradview.ir.types import IntType
from gradview.kernels.dtypes import scalar_type_index, to_dtype

from .errors import DifferentiationError
from .gradients import Emitter

__all__ = [
    "NOT_CONSTANT",
    "cast_back",
    "const",
    "dtype_index",
    "dtype_of",
    "fail",
    "full_size",
    "input_at",
    "int_list",
    "is_none",
    "needs_grad",
    "none_grads",
    "rank_of",
    "reduced_dims",
    "restore_reduced_dims",
    "reduction_supported",
    "size_of",
    "wrap_dim",
]


def fail(node: Node, message: str) -> NoReturn:
    """Raise DifferentiationError naming the node."""
    from gradview.ir import node_summary

    raise DifferentiationError(f"{message}: `{node_summary(node)}`")


def const(value: Value) -> Any:
    """The constant's Python value, or NOT_CONSTANT. A ``prim::ListConstruct``
    of constants (how scripted code writes ``x.sum([0, 1])``) counts as a list."""
    node = value.node
    if node.kind() == "prim::ListConstruct":
        items = [constant_value(item) for item in node.inputs()]
        return NOT_CONSTANT if any(item is NOT_CONSTANT for item in items) else items
    return constant_value(value)


def input_at(node: Node, index: int) -> Value | None:
    """Input ``index``, or None where hand-written IR left out a trailing default."""
    inputs = node.inputs()
    return inputs[index] if index < len(inputs) else None


def none_grads(node: Node, *grads: Value | None) -> list[Value | None]:
    """One gradient per input of the node: ``grads`` first, None for the rest."""
    result = list(grads)[: len(node.inputs())]
    return result + [None] * (len(node.inputs()) - len(result))


def is_none(value: Value | None) -> bool:
    """True when the value is statically None (or a left-out optional argument)."""
    return value is None or value.type() == NoneType()


def needs_grad(value: Value | None) -> bool:
    """Does the input want a gradient? A formula skips (returns None for) the
    ones that do not, so it neither computes nor captures anything for them."""
    return value is not None and value.requires_grad()


def rank_of(value: Value) -> int | None:
    type_ = value.type()
    if isinstance(type_, TensorType) and type_.sizes is not None:
        return len(type_.sizes)
    return None


def full_size(value: Value) -> list[int] | None:
    """Every size of the tensor, when the type knows them all."""
    type_ = value.type()
    if isinstance(type_, TensorType) and type_.sizes is not None and None not in type_.sizes:
        return [int(s) for s in type_.sizes]  # type: ignore[arg-type]
    return None


def size_of(emit: Emitter, value: Value) -> Value:
    """The tensor's size as an ``int[]`` value: a constant when the type knows it,
    else ``aten::size`` (call this in a formula's forward, so the size is
    captured rather than the tensor)."""
    known = full_size(value)
    return emit.const(known) if known is not None else emit.size(value)


def int_list(emit: Emitter, items: Sequence[int | Value]) -> Value:
    """An ``int[]``: a constant when every item is an int, else a ListConstruct."""
    if all(isinstance(item, int) for item in items):
        return emit.const(list(items))
    values = [item if isinstance(item, Value) else emit.const(item) for item in items]
    return emit.op("prim::ListConstruct", *values, types=[ListType(IntType())])


def wrap_dim(dim: int, rank: int) -> int:
    """A non-negative dim; a 0-d tensor accepts 0 and -1, as in PyTorch."""
    return dim + max(rank, 1) if dim < 0 else dim


def dtype_index(value: Value) -> int | None:
    """The ScalarType number of the tensor's dtype, when the type knows it."""
    type_ = value.type()
    if isinstance(type_, TensorType) and type_.scalar_type is not None:
        return scalar_type_index(to_dtype(type_.scalar_type))
    return None


def dtype_of(emit: Emitter, tensor: Value) -> Value:
    """``prim::dtype(tensor)``: its ScalarType number, at run time."""
    return emit.op("prim::dtype", tensor, types=[IntType()])


def cast_back(emit: Emitter, grad: Value, dtype: int | Value | None) -> Value:
    """``grad.to(dtype)``: the gradient of an op called with ``dtype=`` goes back to
    the input's dtype (autograd casts it; TorchScript's formulas call ``.to``)."""
    if dtype is None:
        return grad
    return emit.op("aten::to", grad, dtype, False, False, None)


# -- reductions ---------------------------------------------------------------------
def reduced_dims(node: Node, dim: Value | None, keepdim: Value | None) -> tuple[list[int] | None, bool]:
    """(dims, keepdim) of a reduction, as constants; dims None means every dim.

    ``dim`` may be an ``int``, an ``int[]`` (``[]`` also means every dim) or None.
    """
    dims: Any = None if dim is None else const(dim)
    keep: Any = False if keepdim is None else const(keepdim)
    if dims is NOT_CONSTANT or keep is NOT_CONSTANT:
        fail(node, f"the gradient of {node.kind()} needs constant dims and keepdim")
    if isinstance(dims, int):
        dims = [dims]
    return (list(dims) if dims else None), bool(keep)


def reduction_supported(node: Node, dim: Value | None, keepdim: Value | None, rank: int | None) -> bool:
    """Can ``reduced_dims`` and ``restore_reduced_dims`` handle this reduction?"""
    dims: Any = None if dim is None else const(dim)
    keep: Any = False if keepdim is None else const(keepdim)
    if dims is NOT_CONSTANT or keep is NOT_CONSTANT:
        return False
    if isinstance(dims, int):
        dims = [dims]
    if keep or not dims or rank is not None:
        return True
    return all(d >= 0 for d in dims) or all(d < 0 for d in dims)


def restore_reduced_dims(
    emit: Emitter, node: Node, grad: Value, dims: list[int] | None, keepdim: bool, rank: int | None
) -> Value:
    """Re-insert, as size-1 dims, the dims a reduction removed (``keepdim=False``).

    The result broadcasts against the reduction's input, which is what every
    reduction's backward needs (``grad.unsqueeze(d)`` for each reduced ``d``,
    in increasing order). Reducing every dim leaves a 0-d gradient, which
    broadcasts already.
    """
    if keepdim or dims is None or rank == 0:
        return grad
    if rank is not None:
        order = sorted(wrap_dim(d, rank) for d in dims)
    elif all(d >= 0 for d in dims):
        order = sorted(dims)
    elif all(d < 0 for d in dims):
        # Counted from the end: insert the last dims first (-1, then -2...).
        order = sorted(dims, reverse=True)
    else:
        fail(node, "mixing negative and non-negative dims needs the input's rank in its type")
    for d in order:
        grad = emit.op("aten::unsqueeze", grad, d)
    return grad
