"""Views: ops that show a tensor's elements in another shape or order.

A view (``view``, ``reshape``, ``flatten``, ``t``, ``transpose``, ``permute``,
``expand``, ``squeeze``/``unsqueeze``, ``select``, ``slice``, ``narrow``) shares
its input's memory, so its shape rule gives the input's strides rearranged; the
``*_copy`` variants return the same elements in a fresh contiguous tensor.
The kernels are in ``kernels/views.py``; issue 22's ops (flips, rolls, diagonals,
triangles, windows, ``movedim``, the transposes, ``tile``, ``repeat_interleave``,
``kron``, ``as_strided`` and more ``*_copy`` ops) have their facts and gradients
at the end of this module. Joining and splitting (``cat``, ``split``...) are
in :mod:`gradview.ops.concat_split`.

**Gradients.** Such an op is a fixed rearrangement of its input, so its
backward is the reverse rearrangement of the gradient; no input values are
needed, only sizes and dims:

* **Reshapes** (``view``, ``reshape``, ``_unsafe_view``, ``flatten``,
  ``unflatten``, ``view_as``, the ``squeeze`` overloads and their ``_copy``):
  reshape the gradient back to the input's size. That size is a constant when
  the input's type fixes it, otherwise ``aten::size`` is taken in the forward
  and captured (never the tensor).
* **Broadcasts** (``expand``, ``expand_as``, ``broadcast_tensors``): every
  input element was copied to several places, so the gradient is summed back
  (``_grad_sum_to_size``); ``_size_if_not_equal`` folds to a constant, or to
  None when nothing was expanded, once shapes are known.
* **Dim moves** (and their ``_copy`` variants, which only return a fresh
  tensor): ``unsqueeze(d)`` is undone by ``squeeze(d)``; ``t`` and
  ``transpose`` are their own inverse; ``permute(dims)`` is undone by the
  inverse permutation, computed at compile time when ``dims`` is a constant.
* **Reads of a part** (``select``, ``slice``, ``narrow``): the gradient is zero
  except where the part came from (PyTorch's ``select_backward``/``slice_backward``).
* **Repeats** (``repeat``): the copies' gradients are added up.
* **Copies** (``contiguous``, ``clone``): the gradient passes unchanged.
"""

from __future__ import annotations

from gradview.ir import NOT_CONSTANT, IntType, ListType, Node, OptionalType, TensorType, Value
from gradview.ir.types import NoneType, Type
from gradview.kernels import views as kernels
from gradview.kernels.views import INT64_MAX

from .containers import list_item
from .emit_util import arg, emit_if, grad_list, static_sizes
from .gradients import BACKWARD_KERNEL
from .registry import Emitter, fast_path, formula, kernel, no_gradient, schema, shape_rule
from .shape_by_kernel import by_kernel
from .shape_toolkit import (
    ElementList,
    NodeArgs,
    RuleResult,
    Sizes,
    all_known,
    broadcast,
    device_of,
    fresh,
    layout_of,
    make_tensor,
    numel,
    wrap_dim,
)
from .static_info import const, fail, int_list, needs_grad, none_grads, rank_of, size_of
from .static_info import wrap_dim as wrap_known_dim
from .tensor_layout import contiguous_strides, view_strides

__all__ = ["drop_dims", "inverse_permutation", "per_input", "tensor_elements"]

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]



def _save_self_size(emit: Emitter, node: Node) -> Saved:
    return {"self_size": size_of(emit, node.inputs()[0])}


def _save_self_size_if_needed(emit: Emitter, node: Node) -> Saved:
    self_ = node.inputs()[0]
    return {"self_size": size_of(emit, self_)} if needs_grad(self_) else {}


def _copied(result: RuleResult) -> RuleResult:
    """A ``*_copy`` op's result: the view's sizes, in a fresh contiguous tensor."""
    if not result or not isinstance(result[0], TensorType):
        return result
    view = result[0]
    return [fresh(view.scalar_type, view.sizes, view.device)]


# -- aten::view, reshape, _unsafe_view, flatten, unflatten, view_as --------------------------
kernel("aten::view")(kernels.view)
kernel("aten::reshape")(kernels.reshape)
kernel("aten::_unsafe_view")(kernels.unsafe_view)
kernel("aten::view.dtype")(kernels.view_dtype)
kernel("aten::flatten.using_ints")(kernels.flatten)
kernel("aten::unflatten.int")(kernels.unflatten)
kernel("aten::view_as")(kernels.view_as)


def _view_result(self: TensorType, sizes: Sizes | None, reshape: bool) -> TensorType:
    """``self`` seen with new ``sizes``: view strides if memory allows (else a contiguous copy)."""
    layout = layout_of(self)
    strides = None
    if layout is not None and all_known(sizes):
        strides = view_strides(layout[0], layout[1], sizes)  # type: ignore[arg-type]
        if strides is None and reshape:
            strides = contiguous_strides(sizes)  # type: ignore[arg-type]
    return make_tensor(self.scalar_type, sizes, strides, self.device)


def _resolve_sizes(self: TensorType, requested: list[int | None]) -> Sizes:
    """A view's sizes: fill in the ``-1`` (or a single unknown size) from the element count."""
    sizes = list(requested)
    if sizes.count(-1) + sizes.count(None) == 1:
        index = sizes.index(-1) if -1 in sizes else sizes.index(None)
        total = numel(self.sizes)
        rest = numel(tuple(s for i, s in enumerate(sizes) if i != index))
        sizes[index] = total // rest if total is not None and rest else None
    return tuple(None if s == -1 else s for s in sizes)


@shape_rule("aten::view", "aten::reshape", "aten::_unsafe_view", "aten::_reshape_alias")
def _view(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None or args.tensor(1) is not None or str(args.type(1)) == "int":
        return None  # view.dtype changes the dtype, not the shape
    requested = args.int_list(1)
    if requested is None:
        return [make_tensor(self.scalar_type, None, None, self.device)]
    sizes = _resolve_sizes(self, requested)
    return [_view_result(self, sizes, args.node.kind() != "aten::view")]


@shape_rule("aten::view_as", "aten::reshape_as")
def _view_as(args: NodeArgs) -> RuleResult:
    self, other = args.tensor(0), args.tensor(1)
    if self is None or other is None:
        return None
    return [_view_result(self, other.sizes, args.node.kind() == "aten::reshape_as")]


@shape_rule("aten::flatten")
def _flatten(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None or self.sizes is None:
        return None if self is None else [make_tensor(self.scalar_type, None, None, self.device)]
    rank = len(self.sizes)
    if rank == 0:
        return [_view_result(self, (1,), True)]
    start, end = wrap_dim(args.int_value(1), rank), wrap_dim(args.int_value(2), rank)
    if start is None or end is None or start > end:
        return None
    if start == end:
        return [TensorType(self.scalar_type, self.sizes, self.strides, None, self.device)]
    middle = numel(self.sizes[start:end + 1])
    sizes = self.sizes[:start] + (middle,) + self.sizes[end + 1:]
    return [_view_result(self, sizes, True)]


@shape_rule("aten::unflatten")
def _unflatten(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    sizes = args.int_list(2)
    if self.sizes is None or sizes is None:
        return [make_tensor(self.scalar_type, None, None, self.device)]
    rank = len(self.sizes)
    dim = wrap_dim(args.int_value(1), rank)
    if dim is None or rank == 0:
        return None
    pieces = list(sizes)
    if -1 in pieces:
        length = self.sizes[dim]
        known = numel(tuple(s for s in pieces if s != -1))
        pieces[pieces.index(-1)] = length // known if length is not None and known else None
    result = self.sizes[:dim] + tuple(pieces) + self.sizes[dim + 1:]
    layout = layout_of(self)
    strides = view_strides(layout[0], layout[1], result) if layout and None not in result else None  # type: ignore[arg-type]
    return [make_tensor(self.scalar_type, result, strides, self.device)]


@formula(
    "aten::view", "aten::reshape", "aten::_unsafe_view", "aten::flatten.using_ints",
    "aten::squeeze", "aten::squeeze.dim", "aten::squeeze.dims",
    "aten::squeeze_copy", "aten::squeeze_copy.dim", "aten::squeeze_copy.dims", "aten::unflatten.int",
    forward=_save_self_size,
)
def reshape_back(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return grad_list(node, emit.op("aten::reshape", grads[0], saved["self_size"]))


@formula("aten::view_as", forward=_save_self_size_if_needed)
def view_as(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    if not saved:
        return none_grads(node)
    return none_grads(node, emit.op("aten::reshape", grads[0], saved["self_size"]))


no_gradient(
    "aten::view.dtype",
    reason="it reinterprets the input's bits as another dtype; "
    "PyTorch marks its result not differentiable",
)


# -- aten::t, transpose, permute and their copies --------------------------------------------
kernel("aten::t")(kernels.t)
fast_path("aten::t")(kernels.fast_t)
kernel("aten::t_copy")(kernels.t_copy)
kernel("aten::transpose.int")(kernels.transpose)
kernel("aten::permute")(kernels.permute)
kernel("aten::permute_copy")(kernels.permute_copy)


def _permuted(self: TensorType, order: list[int]) -> TensorType:
    sizes = tuple(self.sizes[d] for d in order)  # type: ignore[index]
    layout = layout_of(self)
    strides = tuple(layout[1][d] for d in order) if layout is not None else None
    return make_tensor(self.scalar_type, sizes, strides, self.device)


@shape_rule("aten::t")
def _t(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None or self.sizes is None:
        return None if self is None else [make_tensor(self.scalar_type, None, None, self.device)]
    order = [1, 0] if len(self.sizes) == 2 else list(range(len(self.sizes)))
    return [_permuted(self, order)]


@shape_rule("aten::t_copy")
def _t_copy(args: NodeArgs) -> RuleResult:
    return _copied(_t(args))


@shape_rule("aten::transpose", "aten::swapaxes", "aten::swapdims")
def _transpose(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None or self.sizes is None:
        return None if self is None else [make_tensor(self.scalar_type, None, None, self.device)]
    rank = len(self.sizes)
    d0, d1 = wrap_dim(args.int_value(1), rank), wrap_dim(args.int_value(2), rank)
    if rank == 0:
        return [_permuted(self, [])]
    if d0 is None or d1 is None:
        return [make_tensor(self.scalar_type, (None,) * rank, None, self.device)]
    order = list(range(rank))
    order[d0], order[d1] = d1, d0
    return [_permuted(self, order)]


@shape_rule("aten::permute")
def _permute(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    dims = args.int_list(1)
    rank = self.rank if self.rank is not None else (len(dims) if dims is not None else None)
    if dims is None or rank is None or len(dims) != rank:
        return [make_tensor(self.scalar_type, None if rank is None else (None,) * rank, None, self.device)]
    order = [wrap_dim(d, rank) for d in dims]
    if any(d is None for d in order) or self.sizes is None:
        return [make_tensor(self.scalar_type, (None,) * rank, None, self.device)]
    return [_permuted(self, order)]  # type: ignore[arg-type]


@shape_rule("aten::permute_copy")
def _permute_copy(args: NodeArgs) -> RuleResult:
    return _copied(_permute(args))


@formula("aten::t", "aten::t_copy")
def t(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [emit.op("aten::t", grads[0])]


@formula("aten::transpose.int")
def transpose(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    _, dim0, dim1 = node.inputs()
    return [emit.op("aten::transpose", grads[0], dim0, dim1), None, None]


def inverse_permutation(dims: list[int]) -> list[int]:
    """``inverse[dims[i]] = i``: permuting by ``dims`` then by ``inverse`` is the identity."""
    rank = len(dims)
    inverse = [0] * rank
    for position, dim in enumerate(dims):
        inverse[dim + rank if dim < 0 else dim] = position
    return inverse


@formula("aten::permute", "aten::permute_copy")
def permute(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    dims = arg(node, 1)
    if dims is NOT_CONSTANT:
        inverse = emit.op("gradview::invert_permutation", node.inputs()[1])
    else:
        inverse = inverse_permutation(list(dims))
    return [emit.op("aten::permute", grads[0], inverse), None]


# gradview::invert_permutation: permute's backward when the dims are known only at run time.
schema("gradview::invert_permutation(int[] dims) -> int[]")
kernel("gradview::invert_permutation")(kernels.invert_permutation)


# -- aten::squeeze, unsqueeze and their copies -----------------------------------------------
kernel("aten::squeeze")(kernels.squeeze)
kernel("aten::squeeze.dim")(kernels.squeeze_dim)
kernel("aten::squeeze.dims")(kernels.squeeze_dims)
kernel("aten::squeeze_copy")(kernels.squeeze_copy)
kernel("aten::squeeze_copy.dim")(kernels.squeeze_copy_dim)
kernel("aten::squeeze_copy.dims")(kernels.squeeze_copy_dims)
kernel("aten::unsqueeze")(kernels.unsqueeze)
kernel("aten::unsqueeze_copy")(kernels.unsqueeze_copy)


def drop_dims(self: TensorType, dims: set[int]) -> TensorType:
    sizes = tuple(s for d, s in enumerate(self.sizes) if d not in dims)  # type: ignore[arg-type]
    layout = layout_of(self)
    strides = tuple(s for d, s in enumerate(layout[1]) if d not in dims) if layout else None
    return make_tensor(self.scalar_type, sizes, strides, self.device)


@shape_rule("aten::squeeze")
def _squeeze(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    unknown = make_tensor(self.scalar_type, None, None, self.device)
    if self.sizes is None:
        return [unknown]
    rank = len(self.sizes)
    if len(args) == 1:
        candidates = list(range(rank))
    else:
        wanted = args.int_list(1)
        if wanted is None:
            return [unknown]
        candidates = [wrap_dim(d, rank) for d in wanted]  # type: ignore[misc]
        if any(d is None for d in candidates):
            return None
    if any(self.sizes[d] is None for d in candidates if d < rank):
        return [unknown]
    return [drop_dims(self, {d for d in candidates if d < rank and self.sizes[d] == 1})]


@shape_rule("aten::squeeze_copy")
def _squeeze_copy(args: NodeArgs) -> RuleResult:
    return _copied(_squeeze(args))


@shape_rule("aten::unsqueeze")
def _unsqueeze(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None or self.sizes is None:
        return None if self is None else [make_tensor(self.scalar_type, None, None, self.device)]
    rank = len(self.sizes)
    dim = wrap_dim(args.int_value(1), rank + 1)
    if dim is None:
        return [make_tensor(self.scalar_type, (None,) * (rank + 1), None, self.device)]
    sizes = self.sizes[:dim] + (1,) + self.sizes[dim:]
    layout = layout_of(self)
    strides = None
    if layout is not None:
        inserted = 1 if dim >= rank else layout[0][dim] * layout[1][dim]
        strides = layout[1][:dim] + (inserted,) + layout[1][dim:]
    return [make_tensor(self.scalar_type, sizes, strides, self.device)]


@shape_rule("aten::unsqueeze_copy")
def _unsqueeze_copy(args: NodeArgs) -> RuleResult:
    return _copied(_unsqueeze(args))


@formula("aten::unsqueeze", "aten::unsqueeze_copy")
def unsqueeze(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [emit.op("aten::squeeze", grads[0], node.inputs()[1]), None]


# -- aten::expand, expand_as, broadcast_to, broadcast_tensors --------------------------------
kernel("aten::expand")(kernels.expand)
fast_path("aten::expand")(kernels.fast_expand)
kernel("aten::expand_as")(kernels.expand_as)
kernel("aten::broadcast_tensors")(kernels.broadcast_tensors)


def _expanded(self: TensorType, target: list[int | None]) -> TensorType | None:
    """ATen's ``inferExpandGeometry``: new and stretched dimensions get stride 0.

    ``-1`` keeps a dimension; an unknown target size stays unknown unless the
    input's size is known and not 1 (only size-1 dimensions can stretch).
    """
    if self.sizes is None:
        return make_tensor(self.scalar_type, tuple(None if t == -1 else t for t in target), None, self.device)
    ndim, tdim = len(target), len(self.sizes)
    if ndim < tdim:
        return None
    layout = layout_of(self)
    sizes: list[int | None] = [None] * ndim
    strides: list[int | None] = [None] * ndim
    for i in range(ndim - 1, -1, -1):
        dim = tdim - ndim + i
        size = self.sizes[dim] if dim >= 0 else 1
        stride: int | None = None
        if layout is not None and dim >= 0:
            stride = layout[1][dim]
        elif layout is not None and tdim == 0:
            stride = 0  # a 0-dim tensor expands with stride 0 everywhere
        elif layout is not None and sizes[i + 1] is not None and strides[i + 1] is not None:
            stride = sizes[i + 1] * strides[i + 1]  # type: ignore[operator]
        wanted = target[i]
        if wanted == -1:
            wanted = size if dim >= 0 else None
        if wanted is None:
            if size is None or size == 1 or dim < 0:
                size = None
        elif size != wanted:
            size, stride = wanted, 0
        sizes[i], strides[i] = size, stride
    return make_tensor(self.scalar_type, tuple(sizes), tuple(strides) if all_known(tuple(strides)) else None, self.device)


@shape_rule("aten::expand")
def _expand(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    target = args.int_list(1)
    if target is None:
        return [make_tensor(self.scalar_type, None, None, self.device)]
    result = _expanded(self, target)
    return None if result is None else [result]


@shape_rule("aten::expand_as", "aten::broadcast_to")
def _expand_as(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    other = args.tensor(1)
    target = list(other.sizes) if other is not None and other.sizes is not None else args.int_list(1)
    if target is None:
        return [make_tensor(self.scalar_type, None, None, self.device)]
    result = _expanded(self, target)
    return None if result is None else [result]


def tensor_elements(args: NodeArgs) -> list[TensorType] | None:
    elements = args.elements(0)
    if elements is None or not all(isinstance(e, TensorType) for e in elements):
        return None
    return list(elements)  # type: ignore[arg-type]


@shape_rule("aten::broadcast_tensors")
def _broadcast_tensors(args: NodeArgs) -> RuleResult:
    tensors = tensor_elements(args)
    if not tensors:
        return None
    sizes = broadcast(*(t.sizes for t in tensors))
    if sizes is None:
        return None
    expanded = [_expanded(t, list(sizes)) for t in tensors]
    if any(e is None for e in expanded):
        return None
    return [ElementList(tuple(expanded))]  # type: ignore[arg-type]


def _save_expanded_size(emit: Emitter, node: Node) -> Saved:
    return {"self_size": emit.size_if_not_equal(node.inputs()[0], node.output())}


@formula("aten::expand", "aten::expand_as", forward=_save_expanded_size)
def expand(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return grad_list(node, emit.sum_to(grads[0], saved["self_size"]))


@formula("aten::broadcast_tensors")
def broadcast_tensors(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Each tensor was expanded to the common shape: sum its gradient back to its size."""
    if grads[0].node.kind() == "prim::AutogradZero" or not needs_grad(node.inputs()[0]):
        return [None]
    grad = grads[0]
    if not isinstance(grad.type(), ListType):  # a sum of list gradients is typed Tensor
        grad = emit.op("prim::unchecked_cast", grad, types=[ListType(OptionalType(TensorType()))])
    return [emit.op("gradview::broadcast_tensors_backward", grad, node.inputs()[0])]


# gradview::broadcast_tensors_backward: each gradient summed back to its tensor's size (None
# where an output got no gradient). PyTorch records one expand per tensor instead; gradview
# needs one op because the list's length may be known only at run time.
schema("gradview::broadcast_tensors_backward(Tensor?[] grads, Tensor[] tensors) -> Tensor?[]")
kernel("gradview::broadcast_tensors_backward")(kernels.broadcast_tensors_backward)
no_gradient("gradview::broadcast_tensors_backward", reason=BACKWARD_KERNEL)


def per_input(grads: tuple[Type, ...] | None, tensors: tuple[Type, ...] | None) -> RuleResult:
    """Element ``i``: None where gradient ``i`` is None, else tensor ``i``'s size in the
    gradient's dtype."""
    if grads is None or tensors is None or len(grads) != len(tensors):
        return None
    elements: list[Type] = []
    for g, t in zip(grads, tensors, strict=True):
        if g == NoneType():
            elements.append(NoneType())
            continue
        dtype = g.scalar_type if isinstance(g, TensorType) else None
        sizes = t.sizes if isinstance(t, TensorType) else None
        elements.append(make_tensor(dtype, sizes, None, device_of(g, t)))
    return [ElementList(tuple(elements))]


@shape_rule("gradview::broadcast_tensors_backward")
def _broadcast_tensors_backward(args: NodeArgs) -> RuleResult:
    return per_input(args.elements(0), args.elements(1))


# -- aten::select, slice, narrow -------------------------------------------------------------
kernel("aten::select.int")(kernels.select)
kernel("aten::slice.Tensor")(kernels.slice_)
kernel("aten::narrow")(kernels.narrow)
kernel("aten::narrow.Tensor")(kernels.narrow_tensor)


@shape_rule("aten::select")
def _select(args: NodeArgs) -> RuleResult:
    if isinstance(args.type(0), ListType):
        return list_item(args)
    self = args.tensor(0)
    if self is None or self.sizes is None:
        return None if self is None else [make_tensor(self.scalar_type, None, None, self.device)]
    dim = wrap_dim(args.int_value(1), len(self.sizes))
    if dim is None or not self.sizes:
        return [make_tensor(self.scalar_type, (None,) * max(len(self.sizes) - 1, 0), None, self.device)]
    return [drop_dims(self, {dim})]


def _slice_length(size: int, start: int | None, end: int | None, step: int) -> int:
    start = 0 if start is None else start
    end = INT64_MAX if end is None else end
    if start < 0:
        start += size
    if end < 0:
        end += size
    start = min(max(start, 0), size)
    end = min(max(end, start), size)
    return (end - start + step - 1) // step


_UNKNOWN = object()


@shape_rule("aten::slice", "aten::narrow")
def _slice(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None or self.sizes is None:
        return None if self is None else [make_tensor(self.scalar_type, None, None, self.device)]
    rank = len(self.sizes)
    dim = wrap_dim(args.int_value(1), rank)
    if dim is None or rank == 0:
        return [make_tensor(self.scalar_type, (None,) * rank, None, self.device)]
    size = self.sizes[dim]
    start, end = args.value(2, _UNKNOWN), args.value(3, _UNKNOWN)
    step = args.int_value(4) if args.node.kind() == "aten::slice" else 1
    if args.node.kind() == "aten::narrow":  # narrow(dim, start, length)
        if isinstance(start, int) and start < 0:
            start = start + size if size is not None else _UNKNOWN
        end = start + end if isinstance(start, int) and isinstance(end, int) else _UNKNOWN
    if _UNKNOWN in (start, end) or step is None or step <= 0:
        new_size = None
    elif start in (None, 0) and (end is None or end >= INT64_MAX) and step == 1:
        new_size = size  # x[:] keeps the size, even an unknown one
    elif size is None:
        new_size = None
    else:
        new_size = _slice_length(size, start, end, step)
    sizes = self.sizes[:dim] + (new_size,) + self.sizes[dim + 1:]
    layout = layout_of(self)
    strides = None
    if layout is not None and step is not None:
        strides = layout[1][:dim] + (layout[1][dim] * step,) + layout[1][dim + 1:]
    return [make_tensor(self.scalar_type, sizes, strides, self.device)]


@formula("aten::select.int", forward=_save_self_size)
def select(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    _, dim, index = node.inputs()
    return [emit.op("aten::select_backward", grads[0], saved["self_size"], dim, index), None, None]


def _slice_bound(emit: Emitter, node: Node, index: int, default: int) -> Value | int:
    """A slice argument for ``slice_backward`` (which takes ints): None or left out becomes
    ``default``; an ``int?`` known only at run time is tested with a ``prim::If``."""
    inputs = node.inputs()
    if index >= len(inputs) or arg(node, index) is None:
        return default
    value = inputs[index]
    if not isinstance(value.type(), OptionalType):
        return value
    return emit_if(
        emit,
        emit.op("aten::__is__", value, None),
        lambda: emit.const(default),
        lambda: emit.op("prim::unchecked_cast", value, types=[IntType()]),
        IntType(),
    )


@formula("aten::slice.Tensor", forward=_save_self_size)
def slice_(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    dim = _slice_bound(emit, node, 1, 0)
    start = _slice_bound(emit, node, 2, 0)
    end = _slice_bound(emit, node, 3, INT64_MAX)
    step = _slice_bound(emit, node, 4, 1)
    grad = emit.op("aten::slice_backward", grads[0], saved["self_size"], dim, start, end, step)
    return grad_list(node, grad)


def _narrow_start(emit: Emitter, node: Node, size: Value) -> Value | int:
    """``start`` made non-negative (narrow counts a negative start from the end)."""
    start, dim = node.inputs()[2], node.inputs()[1]
    if isinstance(start.type(), TensorType):
        start = emit.op("aten::Int", start, types=[IntType()])
    known_start, known_dim, rank = const(start), const(dim), rank_of(node.inputs()[0])
    if isinstance(known_start, int) and known_start >= 0:
        return known_start
    if isinstance(known_start, int) and isinstance(known_dim, int) and rank is not None:
        length = const(size)
        if isinstance(length, list):
            return known_start + length[wrap_known_dim(known_dim, rank)]
    dim_size = emit.op("aten::__getitem__", size, dim, types=[IntType()])
    return emit_if(
        emit,
        emit.op("aten::lt", start, 0),
        lambda: emit.op("aten::add", start, dim_size),
        lambda: start,
        IntType(),
    )


@formula("aten::narrow", "aten::narrow.Tensor", forward=_save_self_size_if_needed)
def narrow(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """A slice ``[start, start + length)`` along dim: ``slice_backward`` of the gradient."""
    if not saved:
        return none_grads(node)
    size, dim, length = saved["self_size"], node.inputs()[1], node.inputs()[3]
    start = _narrow_start(emit, node, size)
    known_length = const(length)
    if isinstance(start, int) and isinstance(known_length, int):
        end: Value | int = start + known_length
    else:
        end = emit.op("aten::add", start, length)
    return none_grads(node, emit.op("aten::slice_backward", grads[0], size, dim, start, end, 1))


# aten::select_backward, slice_backward (PyTorch's own backward ops): zeros of the input's size
# with the gradient written where select/slice read from; contiguous, in the gradient's dtype.
kernel("aten::select_backward")(kernels.select_backward)
kernel("aten::slice_backward")(kernels.slice_backward)


# Both are linear in the gradient, and read back the part they wrote: their own gradient
# is select/slice of the incoming one (derivatives.yaml), so double backward goes through.
@formula("aten::select_backward")
def select_backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    _, _, dim, index = node.inputs()
    return grad_list(node, emit.op("aten::select", grads[0], dim, index))


@formula("aten::slice_backward")
def slice_backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    _, _, dim, start, end, step = node.inputs()
    return grad_list(node, emit.op("aten::slice", grads[0], dim, start, end, step))


@shape_rule("aten::select_backward", "aten::slice_backward")
def _part_backward(args: NodeArgs) -> RuleResult:
    grad = args.tensor(0)
    if grad is None:
        return None
    values = args.int_list(1)
    return [fresh(grad.scalar_type, tuple(values) if values is not None else None, grad.device)]


# -- aten::repeat ----------------------------------------------------------------------------
kernel("aten::repeat")(kernels.repeat)


@shape_rule("aten::repeat")
def _repeat(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    repeats = args.int_list(1)
    if self is None or repeats is None or self.sizes is None or len(repeats) < len(self.sizes):
        return None
    padded = (1,) * (len(repeats) - len(self.sizes)) + self.sizes
    sizes = tuple(None if s is None or r is None else s * r for s, r in zip(padded, repeats, strict=True))
    return [fresh(self.scalar_type, sizes, self.device)]


@formula("aten::repeat", forward=_save_self_size_if_needed)
def repeat(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``x.repeat(r)`` lays out ``r[i]`` copies of ``x`` along dim ``i`` (new leading dims
    for extra counts). Reshaping the gradient to ``[r0, s0, r1, s1, ...]`` gives each
    count a dim of its own; summing over those (and the leading dims) adds up the copies.
    Counts or a rank known only at run time: ``gradview::repeat_backward`` does the same
    then (PyTorch's ``repeat_backward``)."""
    if not saved:
        return none_grads(node)
    repeats, rank = const(node.inputs()[1]), rank_of(node.inputs()[0])
    grad, size = grads[0], saved["self_size"]
    if not isinstance(repeats, list) or rank is None or len(repeats) < rank or 0 in repeats:
        return none_grads(node, emit.op("gradview::repeat_backward", grad, node.inputs()[1], size))
    leading = len(repeats) - rank
    if leading:
        grad = emit.op("aten::sum", grad, list(range(leading)), False, None)
    known = const(size)
    shape: list[Value | int] = []
    summed: list[int] = []
    for i in range(rank):
        if isinstance(known, list):
            length: Value | int = known[i]
        else:
            length = emit.op("aten::__getitem__", size, i, types=[IntType()])
        if repeats[leading + i] != 1:
            summed.append(len(shape))
            shape.append(repeats[leading + i])
        shape.append(length)
    if not summed:
        return none_grads(node, grad)
    grad = emit.op("aten::reshape", grad, int_list(emit, shape))
    return none_grads(node, emit.op("aten::sum", grad, summed, False, None))


# gradview::repeat_backward: repeat's gradient when its counts are known only at run time.
# Linear in the gradient: its own gradient repeats the incoming one (PyTorch's
# double backward of repeat_backward).
schema("gradview::repeat_backward(Tensor grad, int[] repeats, int[] input_sizes) -> Tensor")
kernel("gradview::repeat_backward")(kernels.repeat_backward)


@shape_rule("gradview::repeat_backward")
def _repeat_backward_shapes(args: NodeArgs) -> RuleResult:
    grad = args.tensor(0)
    if grad is None:
        return None
    sizes = args.int_list(2)
    return [fresh(grad.scalar_type, tuple(sizes) if sizes is not None else None, grad.device)]


@formula("gradview::repeat_backward")
def _repeat_backward_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    if not needs_grad(node.inputs()[0]):
        return [None, None, None]
    return [emit.op("aten::repeat", grads[0], node.inputs()[1]), None, None]


# -- sizes: aten::size, sym_size, numel, dim, is_floating_point (ints and bools: no gradient) ---
kernel("aten::size")(kernels.size)
kernel("aten::size.int")(kernels.size_int)
# The SymInt forms AOTAutograd's graphs use under dynamic shapes: concrete sizes at run time.
kernel("aten::sym_size")(kernels.size)
kernel("aten::sym_size.int")(kernels.size_int)
kernel("aten::sym_numel")(kernels.numel)
kernel("aten::numel")(kernels.numel)
fast_path("aten::size", "aten::numel")(kernels.fast_sizes)
kernel("aten::dim")(kernels.dim)
kernel("aten::is_floating_point")(kernels.is_floating_point)


# == Issue 22: flips, rolls, diagonals, triangles, windows, dim moves, copies (kernels/views.py) ==
# Their shape rules run the kernel on stand-in inputs (ops/shape_by_kernel.py). Their gradients
# are derivatives.yaml's, in graph ops: the reverse rearrangement, or PyTorch's backward op
# (diagonal_backward, unfold_backward), itself differentiable by the forward op again.
def _inverse(emit: Emitter, node: Node, op: str, *args: object) -> Result:
    if not needs_grad(node.inputs()[0]):
        return none_grads(node)
    return none_grads(node, emit.op(op, *args))


for _name, _fn in (
    ("aten::flip", kernels.flip), ("aten::fliplr", kernels.fliplr),
    ("aten::flipud", kernels.flipud), ("aten::roll", kernels.roll),
    ("aten::rot90", kernels.rot90), ("aten::diag", kernels.diag),
    ("aten::diag_embed", kernels.diag_embed), ("aten::diagflat", kernels.diagflat),
    ("aten::diagonal_copy", kernels.diagonal_copy), ("aten::tril", kernels.tril),
    ("aten::triu", kernels.triu), ("aten::narrow_copy", kernels.narrow_copy),
    ("aten::unfold_copy", kernels.unfold_copy), ("aten::ravel", kernels.ravel),
    ("aten::alias_copy", kernels.alias_copy), ("aten::expand_copy", kernels.expand_copy),
    ("aten::view_copy", kernels.view_copy), ("aten::transpose_copy.int", kernels.transpose_copy),
    ("aten::tile", kernels.tile),
    ("aten::kron", kernels.kron),
):
    kernel(_name)(_fn)
    shape_rule(_name.split(".")[0])(by_kernel(_fn))

kernel("aten::repeat_interleave.self_int")(kernels.repeat_interleave)
_repeat_interleave_by_kernel = by_kernel(kernels.repeat_interleave)


@shape_rule("aten::repeat_interleave")
def _repeat_interleave(args: NodeArgs) -> RuleResult:
    """From the kernel for a count; counts in a tensor are known only at run time."""
    self = args.tensor(0)
    if args.tensor(1) is None:
        return _repeat_interleave_by_kernel(args)
    if self is None:  # repeat_interleave.Tensor(repeats): not this module's
        return None
    dim = args.value(2, None)
    rank = 1 if dim is None else self.rank
    return [fresh(self.scalar_type, None if rank is None else (None,) * max(rank, 1), self.device)]

for _name, _fn in (
    ("aten::diagonal", kernels.diagonal), ("aten::unfold", kernels.unfold),
    ("aten::movedim.intlist", kernels.movedim), ("aten::movedim.int", kernels.movedim),
    ("aten::reshape_as", kernels.reshape_as), ("aten::numpy_T", kernels.numpy_T),
    ("aten::mT", kernels.mT), ("aten::mH", kernels.mH), ("aten::matrix_H", kernels.matrix_H),
    ("aten::broadcast_to", kernels.broadcast_to), ("aten::as_strided", kernels.as_strided),
    ("aten::atleast_1d", kernels.atleast_1d), ("aten::atleast_2d", kernels.atleast_2d),
    ("aten::atleast_3d", kernels.atleast_3d),
    ("aten::atleast_1d.Sequence", kernels.atleast_1d_sequence),
    ("aten::atleast_2d.Sequence", kernels.atleast_2d_sequence),
    ("aten::atleast_3d.Sequence", kernels.atleast_3d_sequence),
):
    kernel(_name)(_fn)

for _kind, _fn in (
    ("aten::diagonal", kernels.diagonal), ("aten::unfold", kernels.unfold),
    ("aten::movedim", kernels.movedim), ("aten::numpy_T", kernels.numpy_T),
    ("aten::mT", kernels.mT), ("aten::mH", kernels.mH), ("aten::matrix_H", kernels.matrix_H),
    ("aten::atleast_1d", kernels.atleast_1d),
    ("aten::atleast_2d", kernels.atleast_2d), ("aten::atleast_3d", kernels.atleast_3d),
):
    shape_rule(_kind)(by_kernel(_fn, view=True))

kernel("aten::as_strided_copy")(kernels.as_strided_copy)


@shape_rule("aten::as_strided", "aten::as_strided_copy")
def _as_strided(args: NodeArgs) -> RuleResult:
    """The sizes (and, for the view, the strides) given; a copy is fresh and contiguous."""
    self = args.tensor(0)
    if self is None:
        return None
    sizes, strides = args.int_list(1), args.int_list(2)
    shape = tuple(sizes) if sizes is not None else None
    if args.node.kind() == "aten::as_strided_copy" or strides is None or None in strides:
        return [fresh(self.scalar_type, shape, self.device)]
    return [make_tensor(self.scalar_type, shape, strides, self.device)]  # type: ignore[arg-type]


@formula("aten::flip")
def flip(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return _inverse(emit, node, "aten::flip", grads[0], node.inputs()[1])


@formula("aten::fliplr")
def fliplr(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return _inverse(emit, node, "aten::fliplr", grads[0])


@formula("aten::flipud")
def flipud(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return _inverse(emit, node, "aten::flipud", grads[0])


@formula("aten::roll")
def roll(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Rolled back by the negated shifts (derivatives.yaml)."""
    shifts = const(node.inputs()[1])
    if isinstance(shifts, (int, list)):
        back: object = [-s for s in ([shifts] if isinstance(shifts, int) else shifts)]
    else:
        back = emit.op("gradview::negated", node.inputs()[1])
    dims = node.inputs()[2] if len(node.inputs()) > 2 else []
    return _inverse(emit, node, "aten::roll", grads[0], back, dims)


# gradview::negated: roll's shifts negated, when they are known only at run time.
schema("gradview::negated(int[] values) -> int[]")
kernel("gradview::negated")(kernels.negated)


@formula("aten::rot90")
def rot90(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Turned back: ``rot90(grad, -k, dims)``."""
    k = const(node.inputs()[1])
    back = -k if isinstance(k, int) else emit.op("aten::neg", node.inputs()[1], types=[IntType()])
    return _inverse(emit, node, "aten::rot90", grads[0], back, node.inputs()[2])


@formula("aten::diag", forward=_save_self_size_if_needed)
def diag(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """A 1-D input was put on a diagonal (read it back); a 2-D one gave its diagonal
    (``diagonal_backward``)."""
    if not saved:
        return none_grads(node)
    rank, offset = rank_of(node.inputs()[0]), node.inputs()[1]
    if rank == 1:
        return none_grads(node, emit.op("aten::diagonal", grads[0], offset, 0, 1))
    if rank != 2:
        fail(node, "the gradient of aten::diag needs an input of known rank (1 or 2)")
    return none_grads(node, emit.op("aten::diagonal_backward", grads[0], saved["self_size"], offset, 0, 1))


@formula("aten::diag_embed")
def diag_embed(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    _, offset, dim1, dim2 = node.inputs()
    return _inverse(emit, node, "aten::diagonal", grads[0], offset, dim1, dim2)


@formula("aten::diagflat", forward=_save_self_size_if_needed)
def diagflat(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    if not saved:
        return none_grads(node)
    diagonal_ = emit.op("aten::diagonal", grads[0], node.inputs()[1], 0, 1)
    return none_grads(node, emit.op("aten::reshape", diagonal_, saved["self_size"]))


@formula("aten::diagonal", "aten::diagonal_copy", forward=_save_self_size_if_needed)
def diagonal(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    if not saved:
        return none_grads(node)
    _, offset, dim1, dim2 = node.inputs()
    return none_grads(node, emit.op("aten::diagonal_backward", grads[0], saved["self_size"], offset, dim1, dim2))


kernel("aten::diagonal_backward")(kernels.diagonal_backward)
kernel("aten::unfold_backward")(kernels.unfold_backward)


@shape_rule("aten::diagonal_backward", "aten::unfold_backward")
def _sized_by_input_sizes(args: NodeArgs) -> RuleResult:
    grad = args.tensor(0)
    if grad is None:
        return None
    values = args.int_list(1)
    return [fresh(grad.scalar_type, tuple(values) if values is not None else None, grad.device)]


@formula("aten::diagonal_backward")
def diagonal_backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    _, _, offset, dim1, dim2 = node.inputs()
    return _inverse(emit, node, "aten::diagonal", grads[0], offset, dim1, dim2)


@formula("aten::tril")
def tril(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return _inverse(emit, node, "aten::tril", grads[0], node.inputs()[1])


@formula("aten::triu")
def triu(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return _inverse(emit, node, "aten::triu", grads[0], node.inputs()[1])


formula("aten::narrow_copy", forward=_save_self_size_if_needed)(narrow)


@formula("aten::unfold", "aten::unfold_copy", forward=_save_self_size_if_needed)
def unfold(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    if not saved:
        return none_grads(node)
    _, dim, size, step = node.inputs()
    return none_grads(node, emit.op("aten::unfold_backward", grads[0], saved["self_size"], dim, size, step))


@formula("aten::unfold_backward")
def unfold_backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    _, _, dim, size, step = node.inputs()
    return _inverse(emit, node, "aten::unfold", grads[0], dim, size, step)


@formula("aten::movedim.intlist", "aten::movedim.int")
def movedim(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    _, source, destination = node.inputs()
    return _inverse(emit, node, "aten::movedim", grads[0], destination, source)


formula(
    "aten::ravel", "aten::view_copy", "aten::atleast_1d", "aten::atleast_2d", "aten::atleast_3d",
    forward=_save_self_size,
)(reshape_back)
formula("aten::reshape_as", forward=_save_self_size_if_needed)(view_as)


@formula("aten::numpy_T", "aten::mT", "aten::mH", "aten::matrix_H", "aten::alias_copy")
def same_op_again(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Transposes are their own inverse (the identity for alias_copy)."""
    if node.kind() == "aten::alias_copy":
        return [grads[0]]
    return _inverse(emit, node, node.kind(), grads[0])


formula("aten::broadcast_to", "aten::expand_copy", forward=_save_expanded_size)(expand)
formula("aten::transpose_copy.int")(transpose)


@formula("aten::atleast_1d.Sequence", "aten::atleast_2d.Sequence", "aten::atleast_3d.Sequence")
def atleast_sequence(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Each tensor was only reshaped: its gradient is reshaped back (``gradview::reshape_each``)."""
    if grads[0].node.kind() == "prim::AutogradZero" or not needs_grad(node.inputs()[0]):
        return [None]
    grad = grads[0]
    if not isinstance(grad.type(), ListType):
        grad = emit.op("prim::unchecked_cast", grad, types=[ListType(OptionalType(TensorType()))])
    return [emit.op("gradview::reshape_each", grad, node.inputs()[0])]


schema("gradview::reshape_each(Tensor?[] grads, Tensor[] tensors) -> Tensor?[]")
kernel("gradview::reshape_each")(kernels.reshape_each)
no_gradient("gradview::reshape_each", reason=BACKWARD_KERNEL)


@shape_rule("gradview::reshape_each")
def _reshape_each(args: NodeArgs) -> RuleResult:
    return per_input(args.elements(0), args.elements(1))


@formula("aten::as_strided", "aten::as_strided_copy", forward=_save_self_size_if_needed)
def as_strided(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Each element read goes back to its storage place (``gradview::as_strided_backward``)."""
    if not saved:
        return none_grads(node)
    _, size, stride, offset = node.inputs()
    return none_grads(node, emit.op("gradview::as_strided_backward", grads[0], saved["self_size"], size, stride, offset))


schema(
    "gradview::as_strided_backward(Tensor grad, int[] input_sizes, int[] size, int[] stride, "
    "int? storage_offset=None) -> Tensor"
)
kernel("gradview::as_strided_backward")(kernels.as_strided_backward)
shape_rule("gradview::as_strided_backward")(_sized_by_input_sizes)


@formula("gradview::as_strided_backward")
def as_strided_backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Linear in the gradient, the transpose of as_strided: its own gradient reads again."""
    _, _, size, stride, offset = node.inputs()
    return _inverse(emit, node, "aten::as_strided", grads[0], size, stride, offset)


@formula("aten::tile", forward=_save_self_size_if_needed)
def tile(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """tile is ``repeat`` with the counts padded by leading 1s to the input's rank:
    ``gradview::tile_backward`` sums the copies back as ``repeat_backward``."""
    if not saved:
        return none_grads(node)
    return none_grads(node, emit.op("gradview::tile_backward", grads[0], node.inputs()[1], saved["self_size"]))


schema("gradview::tile_backward(Tensor grad, int[] dims, int[] input_sizes) -> Tensor")
kernel("gradview::tile_backward")(kernels.tile_backward)


@shape_rule("gradview::tile_backward")
def _tile_backward(args: NodeArgs) -> RuleResult:
    grad = args.tensor(0)
    if grad is None:
        return None
    values = args.int_list(2)
    return [fresh(grad.scalar_type, tuple(values) if values is not None else None, grad.device)]


@formula("gradview::tile_backward")
def tile_backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Linear in the gradient: its own gradient tiles the incoming one again."""
    return _inverse(emit, node, "aten::tile", grads[0], node.inputs()[1])


@formula("aten::repeat_interleave.self_int", forward=_save_self_size_if_needed)
def repeat_interleave(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    if not saved:
        return none_grads(node)
    _, repeats, dim = node.inputs()[:3]
    return none_grads(
        node, emit.op("gradview::repeat_interleave_backward", grads[0], repeats, dim, saved["self_size"])
    )


schema("gradview::repeat_interleave_backward(Tensor grad, int repeats, int? dim, int[] input_sizes) -> Tensor")
kernel("gradview::repeat_interleave_backward")(kernels.repeat_interleave_backward)


@shape_rule("gradview::repeat_interleave_backward")
def _repeat_interleave_backward(args: NodeArgs) -> RuleResult:
    grad = args.tensor(0)
    if grad is None:
        return None
    values = args.int_list(3)
    return [fresh(grad.scalar_type, tuple(values) if values is not None else None, grad.device)]


@formula("gradview::repeat_interleave_backward")
def repeat_interleave_backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    _, repeats, dim, _ = node.inputs()
    return _inverse(emit, node, "aten::repeat_interleave", grads[0], repeats, dim, None)


kernel("aten::repeat_interleave.self_Tensor")(kernels.repeat_interleave_self_tensor)


@formula("aten::repeat_interleave.self_Tensor", forward=_save_self_size_if_needed)
def repeat_interleave_tensor(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Counts per element: each copy's gradient goes back to its element (the repeats,
    integers, get none)."""
    if not saved:
        return none_grads(node)
    _, repeats, dim = node.inputs()[:3]
    return none_grads(node, emit.op(
        "gradview::repeat_interleave_tensor_backward", grads[0], repeats, dim, saved["self_size"]
    ))


schema(
    "gradview::repeat_interleave_tensor_backward(Tensor grad, Tensor repeats, int? dim, int[] input_sizes) -> Tensor"
)
kernel("gradview::repeat_interleave_tensor_backward")(kernels.repeat_interleave_tensor_backward)
shape_rule("gradview::repeat_interleave_tensor_backward")(_repeat_interleave_backward)


@formula("gradview::repeat_interleave_tensor_backward")
def repeat_interleave_tensor_backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    _, repeats, dim, _ = node.inputs()
    return _inverse(emit, node, "aten::repeat_interleave", grads[0], repeats, dim, None)


@formula("aten::kron")
def kron(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """kron multiplies every pair of elements (PyTorch's kron: both sides padded to one
    rank, reshaped to interleaved dims, multiplied): each side's gradient is the gradient
    times the other side, summed over the other side's dims. In graph ops when the sizes
    are known (so it differentiates again), else ``gradview::kron_backward``."""
    self_, other = node.inputs()
    if not needs_grad(self_) and not needs_grad(other):
        return [None, None]
    a_sizes, b_sizes = static_sizes(self_), static_sizes(other)
    if a_sizes is None or b_sizes is None:
        grad_self, grad_other = emit.op("gradview::kron_backward", grads[0], self_, other)
    else:
        rank = max(len(a_sizes), len(b_sizes))
        a = [1] * (rank - len(a_sizes)) + a_sizes
        b = [1] * (rank - len(b_sizes)) + b_sizes
        g = emit.op("aten::reshape", grads[0], [x for p, q in zip(a, b, strict=True) for x in (p, q)])
        left = emit.op("aten::reshape", self_, [x for s in a for x in (s, 1)])
        right = emit.op("aten::reshape", other, [x for s in b for x in (1, s)])
        odd, even = list(range(1, 2 * rank, 2)), list(range(0, 2 * rank, 2))
        grad_self = emit.op("aten::reshape", emit.op("aten::sum", emit.op("aten::mul", g, right), odd, False, None), a_sizes)
        grad_other = emit.op("aten::reshape", emit.op("aten::sum", emit.op("aten::mul", g, left), even, False, None), b_sizes)
    return [grad_self if needs_grad(self_) else None, grad_other if needs_grad(other) else None]


schema("gradview::kron_backward(Tensor grad, Tensor self, Tensor other) -> (Tensor, Tensor)")
kernel("gradview::kron_backward")(kernels.kron_backward)
no_gradient("gradview::kron_backward", reason=BACKWARD_KERNEL)


@shape_rule("gradview::kron_backward")
def _kron_backward(args: NodeArgs) -> RuleResult:
    grad, self, other = args.tensor(0), args.tensor(1), args.tensor(2)
    if grad is None:
        return None
    return [fresh(grad.scalar_type, t.sizes if t is not None else None, grad.device) for t in (self, other)]
