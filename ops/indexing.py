"""Indexing and selecting: ops that read some elements of a tensor, and the ops
that return positions (``nonzero``, ``_dim_arange``, ``list.index``).

* ``index.Tensor`` (what ``x[idx]`` traces to) takes one entry per leading dim:
  None keeps a dim, integer tensors broadcast together into the indexed dims'
  place (in front when they are not adjacent), a bool mask stands for the dims
  it covers: NumPy's rule, which is PyTorch's. Its kernel is in
  ``kernels/indexing.py``.
* ``max``/``min`` (whole tensor or along a dim), ``topk``, ``kthvalue`` and max
  pooling select elements too; they live with the reductions and the pooling
  ops, and their gradients follow the same idea as ``index``'s.

**Gradients.** Reading elements copies them to the output, so the backward
routes each output gradient back to the element it was read from, and every
other element gets 0:

* ``x[indices]`` may read an element several times, so its gradient *adds*
  each incoming gradient element back where it was read:
  ``zeros(x.size()).index_put_(indices, grad, accumulate=True)``, PyTorch's
  ``index_backward``, here the kernel ``gradview::index_backward``. It needs the
  input's size (a constant when the type knows it) and the indices, never the
  input itself.
* ops that return indices say which element was selected (``max.dim``,
  ``topk``, ``max_pool2d_with_indices``): their backward scatters the gradient
  into zeros at those indices (ops/reductions.py, ops/pooling.py).

``slice_scatter(self, src, dim, start, end, step)`` (AOTAutograd's functional
``z[:, :2] = src``) is a copy of ``self`` with that slice replaced by ``src``: the
gradient's slice goes to ``src``, the rest to ``self``.

``nonzero`` and ``_dim_arange`` return integer tensors: TorchScript's symbolic
script still lists them, with a backward returning no gradient, so that they
may sit inside differentiable graphs; gradview's formulas do the same.
"""

from __future__ import annotations

from gradview.ir import Node, Value
from gradview.ir.types import NoneType, TensorType
from gradview.kernels import indexing as kernels

from .emit_util import grad_list
from .gradients import BACKWARD_KERNEL
from .registry import Emitter, formula, kernel, no_gradient, schema, shape_rule
from .shape_by_kernel import by_kernel
from .shape_toolkit import (
    NodeArgs,
    RuleResult,
    Sizes,
    broadcast,
    fresh,
    layout_of,
    make_tensor,
    wrap_dim,
)
from .static_info import const, fail, needs_grad, size_of
from .tensor_layout import contiguous_strides, preserve_strides

__all__: list[str] = []

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]


def _save_self_size(emit: Emitter, node: Node) -> Saved:
    self_ = node.inputs()[0]
    return {"self_size": size_of(emit, self_)} if needs_grad(self_) else {}


# -- aten::index.Tensor (x[indices]) ---------------------------------------------------------
kernel("aten::index.Tensor", "aten::index.Tensor_hacked_twin")(kernels.index)


_MASKS = ("Bool", "Byte")


def _indexed_sizes(self: TensorType, entries: tuple[object, ...]) -> Sizes | None:
    """The result's sizes by NumPy's rule, or None when an index's rank is unknown."""
    assert self.sizes is not None
    consumed = 0
    advanced: list[Sizes] = []
    positions: list[int] = []
    kept_before: list[int | None] = []
    kept_after: list[int | None] = []
    for position, entry in enumerate(entries):
        if entry == NoneType() or entry is None:
            (kept_after if advanced else kept_before).append(
                self.sizes[consumed] if consumed < len(self.sizes) else None
            )
            consumed += 1
            continue
        if not isinstance(entry, TensorType) or entry.sizes is None or entry.scalar_type is None:
            return None
        if entry.scalar_type in _MASKS:
            advanced.append((None,))
            consumed += len(entry.sizes)
        else:
            advanced.append(entry.sizes)
            consumed += 1
        positions.append(position)
    rest = tuple(self.sizes[consumed:])
    if not advanced:
        return tuple(kept_before) + rest
    indexed = broadcast(*advanced)
    if indexed is None:
        return None
    if positions == list(range(positions[0], positions[-1] + 1)):
        return tuple(kept_before) + indexed + tuple(kept_after) + rest
    return indexed + tuple(kept_before) + tuple(kept_after) + rest


@shape_rule("aten::index")
def _index(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None  # list.index and str.index
    entries = args.elements(1)
    if self.sizes is None or entries is None:
        return [make_tensor(self.scalar_type, None, None, self.device)]
    sizes = _indexed_sizes(self, entries)
    layout = layout_of(self)
    if layout is not None and layout[1] == contiguous_strides(layout[0]):
        return [fresh(self.scalar_type, sizes, self.device)]  # PyTorch keeps a contiguous input's layout
    return [make_tensor(self.scalar_type, sizes, None, self.device)]


@formula("aten::index.Tensor", "aten::index.Tensor_hacked_twin", forward=_save_self_size)
def index(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    if not saved:
        return grad_list(node)
    indices = node.inputs()[1]
    return grad_list(node, emit.op("gradview::index_backward", grads[0], saved["self_size"], indices))


# gradview::index_backward: zeros(self_size).index_put_(indices, grad, accumulate=True).
schema("gradview::index_backward(Tensor grad, int[] self_size, Tensor?[] indices) -> Tensor")
kernel("gradview::index_backward")(kernels.index_backward)


@formula("gradview::index_backward")
def index_backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Linear in the gradient, the transpose of index: its own gradient indexes again
    (derivatives.yaml's index_put's ``values: grad.index(indices)``)."""
    return grad_list(node, emit.op("aten::index", grads[0], node.inputs()[2]))


@shape_rule("gradview::index_backward")
def _index_backward(args: NodeArgs) -> RuleResult:
    """Zeros of ``self_size`` (contiguous) in the gradient's dtype."""
    grad = args.tensor(0)
    if grad is None:
        return None
    values = args.int_list(1)
    return [fresh(grad.scalar_type, tuple(values) if values is not None else None, grad.device)]


# -- aten::nonzero, _dim_arange: integer results ---------------------------------------------
kernel("aten::nonzero")(kernels.nonzero)
kernel("aten::_dim_arange")(kernels.dim_arange)


@shape_rule("aten::nonzero")
def _nonzero(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    rank = None if self.sizes is None else len(self.sizes)
    return [fresh("Long", None if rank is None else (None, rank), self.device)]


@shape_rule("aten::_dim_arange")
def _dim_arange(args: NodeArgs) -> RuleResult:
    like = args.tensor(0)
    if like is None:
        return None
    if like.sizes is None:
        return [fresh("Long", (None,), like.device)]
    dim = wrap_dim(args.int_value(1), len(like.sizes))
    return [fresh("Long", (None if dim is None else like.sizes[dim],), like.device)]


@formula("aten::nonzero", "aten::_dim_arange")
def integer_result(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Integer results: no gradient reaches the inputs (TorchScript's backward returns None)."""
    return grad_list(node)


# -- TorchScript's list.index and str.index --------------------------------------------------
kernel("aten::index.list_int", "aten::index.list_float", "aten::index.list_bool", "aten::index.list_str")(
    kernels.index_list
)
kernel("aten::index.list_Tensor")(kernels.index_list_tensor)
kernel("aten::index.str")(kernels.index_str)
no_gradient(
    "aten::index.str", "aten::index.list_int", "aten::index.list_float", "aten::index.list_bool",
    "aten::index.list_Tensor", "aten::index.list_str",
    reason="list.index/str.index: their result is a position (an int), which carries no gradient",
)


# -- aten::slice_scatter (AOTAutograd's functional slice write) ---------------------------------
kernel("aten::slice_scatter")(kernels.slice_scatter)


@shape_rule("aten::slice_scatter")
def _slice_scatter_shapes(args: NodeArgs) -> RuleResult:
    """A clone of ``self`` (``empty_like(preserve_format)``'s layout)."""
    self = args.tensor(0)
    if self is None:
        return None
    layout = layout_of(self)
    strides = preserve_strides(*layout) if layout is not None else None
    return [make_tensor(self.scalar_type, self.sizes, strides, self.device)]


@formula("aten::slice_scatter")
def _slice_scatter_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``src``'s gradient is the gradient's slice; ``self``'s is the gradient with that slice
    zeroed (``slice_scatter(grad, zeros_like(src), ...)``, PyTorch's formula)."""
    self_, src, dim, start, end, step = node.inputs()
    part = emit.op("aten::slice", grads[0], dim, start, end, step)
    grad_self = None
    if needs_grad(self_):
        grad_self = emit.op(
            "aten::slice_scatter", grads[0], emit.op("aten::zeros_like", part), dim, start, end, step
        )
    grad_src = part if needs_grad(src) else None
    return [grad_self, grad_src, None, None, None, None]


# -- issue 22: gather/scatter, index_* ops, take/put, masked_*, *_scatter --------------------
def _same_as_self(args: NodeArgs) -> RuleResult:
    """A fresh contiguous tensor of ``self``'s sizes and dtype."""
    self = args.tensor(0)
    return None if self is None else [fresh(self.scalar_type, self.sizes, self.device)]


def _unknown_rows(dtype: str | None, rank: int | None, args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    return None if self is None else [fresh(dtype or self.scalar_type, None if rank is None else (None,) * rank,
                                           self.device)]


kernel("aten::gather")(kernels.gather)
kernel("aten::scatter.src", "aten::scatter.value", "aten::scatter.reduce", "aten::scatter.value_reduce")(
    kernels.scatter
)
kernel("aten::scatter_add")(kernels.scatter_add)
kernel("aten::scatter_reduce.two")(kernels.scatter_reduce)
kernel("aten::index_select")(kernels.index_select)
kernel("aten::index_add")(kernels.index_add)
kernel("aten::index_copy")(kernels.index_copy)
kernel("aten::index_fill.int_Scalar", "aten::index_fill.int_Tensor")(kernels.index_fill)
kernel("aten::take")(kernels.take)
kernel("aten::put")(kernels.put)
kernel("aten::masked_select")(kernels.masked_select)
kernel("aten::masked_scatter")(kernels.masked_scatter)
kernel("aten::argwhere")(kernels.argwhere)
kernel("aten::nonzero_static")(kernels.nonzero_static)
kernel("aten::nonzero_numpy")(kernels.nonzero_numpy)
kernel("aten::select_scatter")(kernels.select_scatter)
kernel("aten::diagonal_scatter")(kernels.diagonal_scatter)
kernel("aten::as_strided_scatter")(kernels.as_strided_scatter)

for _kind in ("aten::scatter", "aten::scatter_add", "aten::scatter_reduce", "aten::index_add", "aten::index_copy",
              "aten::index_fill", "aten::put", "aten::select_scatter", "aten::diagonal_scatter",
              "aten::as_strided_scatter"):
    shape_rule(_kind)(_same_as_self)


@shape_rule("aten::gather")
def _gather_shapes(args: NodeArgs) -> RuleResult:
    self, index = args.tensor(0), args.tensor(2)
    return None if self is None or index is None else [fresh(self.scalar_type, index.sizes, self.device)]


@shape_rule("aten::take")
def _take_shapes(args: NodeArgs) -> RuleResult:
    self, index = args.tensor(0), args.tensor(1)
    return None if self is None or index is None else [fresh(self.scalar_type, index.sizes, self.device)]


shape_rule("aten::index_select")(by_kernel(kernels.index_select))
shape_rule("aten::masked_scatter")(by_kernel(kernels.masked_scatter))


@shape_rule("aten::masked_select")
def _masked_select_shapes(args: NodeArgs) -> RuleResult:
    return _unknown_rows(None, 1, args)


@shape_rule("aten::argwhere")
def _argwhere_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    rank = None if self is None or self.sizes is None else len(self.sizes)
    return _unknown_rows("Long", None, args) if rank is None else [fresh("Long", (None, rank), self.device)]


shape_rule("aten::nonzero_static")(by_kernel(kernels.nonzero_static))
shape_rule("aten::nonzero_numpy")(by_kernel(kernels.nonzero_numpy))
no_gradient("aten::argwhere", "aten::nonzero_static", "aten::nonzero_numpy",
            reason="the result is integer positions, which carry no gradient")


def _zeros_like(emit: Emitter, value: Value) -> Value:
    return emit.op("aten::zeros_like", value)


@formula("aten::gather")
def _gather_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``gather_backward``: zeros like self, the gradient added back at the gathered positions."""
    self_, dim, index = node.inputs()[:3]
    return grad_list(node, emit.op("aten::scatter_add", _zeros_like(emit, self_), dim, index, grads[0]))


@formula("aten::scatter_add")
def _scatter_add_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    self_, dim, index, src = node.inputs()
    return [grads[0] if needs_grad(self_) else None, None, None,
            emit.op("aten::gather", grads[0], dim, index, False) if needs_grad(src) else None]


@formula("aten::scatter.src", "aten::scatter.value")
def _scatter_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """self: the gradient with the written positions zeroed; src: the gradient read back there."""
    self_, dim, index, src = node.inputs()
    grad_self = emit.op("aten::scatter", grads[0], dim, index, 0.0) if needs_grad(self_) else None
    grad_src = None
    if isinstance(src.type(), TensorType) and needs_grad(src):
        grad_src = emit.op("aten::gather", grads[0], dim, index, False)
    return [grad_self, None, None, grad_src]


@formula("aten::index_select")
def _index_select_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``index_select_backward``: zeros like self with the gradient's slices added at index."""
    self_, dim, index = node.inputs()
    return grad_list(node, emit.op("aten::index_add", _zeros_like(emit, self_), dim, index, grads[0], 1))


@formula("aten::index_add")
def _index_add_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """self: grad; source: ``alpha * grad.index_select(dim, index)`` (shaped like source)."""
    self_, dim, index, source, alpha = node.inputs()
    grad_source = None
    if needs_grad(source):
        picked = emit.op("aten::index_select", grads[0], dim, index)
        grad_source = emit.op("aten::reshape", emit.op("aten::mul", picked, alpha), size_of(emit, source))
    return [grads[0] if needs_grad(self_) else None, None, None, grad_source, None]


@formula("aten::index_copy")
def _index_copy_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    self_, dim, index, source = node.inputs()
    grad_self = emit.op("aten::index_fill", grads[0], dim, index, 0.0) if needs_grad(self_) else None
    grad_source = None
    if needs_grad(source):
        picked = emit.op("aten::index_select", grads[0], dim, index)
        grad_source = emit.op("aten::reshape", picked, size_of(emit, source))
    return [grad_self, None, None, grad_source]


@formula("aten::index_fill.int_Scalar")
def _index_fill_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    self_, dim, index, _ = node.inputs()
    return grad_list(node, emit.op("aten::index_fill", grads[0], dim, index, 0.0))


@formula("aten::index_fill.int_Tensor")
def _index_fill_tensor_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """self: grad with the filled slices zeroed; value: the sum of the filled slices, each once
    (PyTorch selects ``_unique(index)``; grad minus the zeroed grad is that, exactly)."""
    self_, dim, index, value = node.inputs()
    kept = emit.op("aten::index_fill", grads[0], dim, index, 0.0)
    grad_value = None
    if needs_grad(value):
        grad_value = emit.op("aten::sum", emit.op("aten::sub", grads[0], kept, 1), None)
    return [kept if needs_grad(self_) else None, None, None, grad_value]


@formula("aten::take")
def _take_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """zeros like self, the gradient put back at index with accumulate (repeats sum)."""
    self_, index = node.inputs()
    return grad_list(node, emit.op("aten::put", _zeros_like(emit, self_), index, grads[0], True))


@formula("aten::put")
def _put_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """self: grad (accumulate) or grad with the written positions zeroed; source: grad.take(index)."""
    self_, index, source, accumulate = node.inputs()
    grad_self = None
    if needs_grad(self_):
        grad_self = grads[0] if const(accumulate) is True else emit.op(
            "aten::put", grads[0], index, _zeros_like(emit, source), False)
    grad_source = None
    if needs_grad(source):
        grad_source = emit.op("aten::reshape", emit.op("aten::take", grads[0], index), size_of(emit, source))
    return [grad_self, None, grad_source, None]


@formula("aten::select_scatter")
def _select_scatter_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    self_, src, dim, index = node.inputs()
    part = emit.op("aten::select", grads[0], dim, index)
    grad_self = None
    if needs_grad(self_):
        grad_self = emit.op("aten::select_scatter", grads[0], _zeros_like(emit, part), dim, index)
    return [grad_self, part if needs_grad(src) else None, None, None]


@formula("aten::diagonal_scatter")
def _diagonal_scatter_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    self_, src, offset, dim1, dim2 = node.inputs()
    part = emit.op("aten::diagonal", grads[0], offset, dim1, dim2)
    grad_self = None
    if needs_grad(self_):
        grad_self = emit.op("aten::diagonal_scatter", grads[0], _zeros_like(emit, part), offset, dim1, dim2)
    return [grad_self, part if needs_grad(src) else None, None, None, None]


@formula("aten::masked_select")
def _masked_select_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``masked_select_backward``: zeros like the broadcast self, the gradient scattered where the
    mask is set, summed back to self's sizes."""
    self_, mask = node.inputs()
    spread = emit.op("aten::masked_scatter", _zeros_like(emit, self_), mask, grads[0])
    return [emit.op("aten::sum_to_size", spread, size_of(emit, self_)), None]


@formula("aten::masked_scatter")
def _masked_scatter_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    self_, mask, source = node.inputs()
    grad_self = None
    if needs_grad(self_):
        kept = emit.op("aten::masked_fill", grads[0], mask, 0.0)
        grad_self = emit.op("aten::sum_to_size", kept, size_of(emit, self_))
    grad_source = None
    if needs_grad(source):
        grad_source = emit.op("gradview::masked_scatter_backward", grads[0], mask, size_of(emit, source))
    return [grad_self, None, grad_source]


schema("gradview::masked_scatter_backward(Tensor grad, Tensor mask, int[] sizes) -> Tensor")
kernel("gradview::masked_scatter_backward")(kernels.masked_scatter_backward)
shape_rule("gradview::masked_scatter_backward")(by_kernel(kernels.masked_scatter_backward))
no_gradient("gradview::masked_scatter_backward", reason=BACKWARD_KERNEL)


# -- aten::take_along_dim: gather of self and indices broadcast together (but along dim) --------
kernel("aten::take_along_dim")(kernels.take_along_dim)
shape_rule("aten::take_along_dim")(by_kernel(kernels.take_along_dim))


@formula("aten::take_along_dim")
def _take_along_dim_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    self_, indices, dim = node.inputs()
    return [emit.op("gradview::take_along_dim_backward", grads[0], self_, indices, dim), None, None]


schema("gradview::take_along_dim_backward(Tensor grad, Tensor self, Tensor indices, int? dim) -> Tensor")
kernel("gradview::take_along_dim_backward")(kernels.take_along_dim_backward)
shape_rule("gradview::take_along_dim_backward")(by_kernel(kernels.take_along_dim_backward, arity=None))
no_gradient("gradview::take_along_dim_backward", reason=BACKWARD_KERNEL)


# scatter with a ``reduce=`` argument: derivatives.yaml has no entry, so PyTorch's result
# requires grad and its backward raises; gradview refuses the backward the same way.
no_gradient(
    "aten::scatter.reduce", "aten::scatter.value_reduce",
    reason="the derivative for aten::scatter with a reduce argument is not implemented (PyTorch has none)",
)


# -- aten::scatter_reduce.two and aten::index_reduce: derivatives.yaml's *_reduce_backward -------
kernel("aten::index_reduce")(kernels.index_reduce)
shape_rule("aten::index_reduce")(_same_as_self)


class _Along:
    """How ``index`` relates ``self``'s positions to ``src``'s, as graph ops: element by
    element along ``dim`` (scatter_reduce: gather/scatter_add/scatter) or slice by slice
    (index_reduce: index_select/index_add/index_fill)."""

    def __init__(self, emit: Emitter, node: Node, reduce: str, include_self: bool) -> None:
        self.emit, self.by_slice = emit, node.kind() == "aten::index_reduce"
        self.dim, self.index = node.inputs()[1], node.inputs()[2]
        self.reduce, self.include_self = reduce, include_self

    def pick(self, t: Value) -> Value:
        if self.by_slice:
            return self.emit.op("aten::index_select", t, self.dim, self.index)
        return self.emit.op("aten::gather", t, self.dim, self.index, False)

    def add_into(self, base: Value, values: Value) -> Value:
        if self.by_slice:
            return self.emit.op("aten::index_add", base, self.dim, self.index, values, 1)
        return self.emit.op("aten::scatter_add", base, self.dim, self.index, values)

    def zero(self, t: Value) -> Value:
        kind = "aten::index_fill" if self.by_slice else "aten::scatter"
        return self.emit.op(kind, t, self.dim, self.index, 0.0)

    def again(self, self_: Value, src: Value) -> Value:
        kind = "aten::index_reduce" if self.by_slice else "aten::scatter_reduce"
        return self.emit.op(kind, self_, self.dim, self.index, src, self.reduce, self.include_self)


def _prod_gradients(emit: Emitter, along: _Along, grad: Value, self_: Value, src: Value,
                    result: Value) -> tuple[Value, Value]:
    """prod divides the product by the factor; a single zero factor of ``src`` gets the
    product of the others (PyTorch's masked reductions, step for step)."""
    masked_self = emit.op("aten::masked_fill", self_, emit.op("aten::eq", self_, 0), 1)
    grad_self = emit.op("aten::div", emit.op("aten::mul", grad, along.again(masked_self, src)), masked_self)
    src_zero = emit.op("aten::eq", src, 0)
    zeros_at = along.pick(along.add_into(_zeros_like(emit, self_), emit.op("aten::type_as", src_zero, self_)))
    single = emit.op("aten::logical_and", src_zero, emit.op("aten::eq", zeros_at, 1))
    single_result = along.again(self_, emit.op("aten::masked_fill", src, single, 1))
    others = along.pick(emit.op("aten::mul", grad, single_result))
    divided = emit.op("aten::div", along.pick(emit.op("aten::mul", grad, result)),
                      emit.op("aten::masked_fill", src, src_zero, 1))
    return grad_self, emit.op("aten::where", single, others, divided)


@formula("aten::scatter_reduce.two", "aten::index_reduce")
def _reduce_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``self, src: scatter_reduce_backward(grad, self, dim, index, src, reduce, include_self,
    result)`` (index_reduce_backward alike), written with graph ops so that it differentiates
    again: amax/amin split the gradient evenly among the elements equal to the result (self's
    counted even without ``include_self``, as PyTorch does), mean divides by the count, and
    without ``include_self`` the reduced-into positions of self get 0."""
    self_, _, _, src, reduce_value, include_value = node.inputs()
    if not (needs_grad(self_) or needs_grad(src)):
        return [None] * 6
    reduce, include_self = const(reduce_value), const(include_value)
    if not isinstance(reduce, str) or not isinstance(include_self, bool):
        fail(node, "the gradient needs `reduce` and `include_self` as constants")
    along, grad, result = _Along(emit, node, reduce, include_self), grads[0], node.output()
    if reduce == "sum":
        grad_self, grad_src = grad, along.pick(grad)
    elif reduce == "mean":
        count = along.add_into(emit.op("aten::ones_like" if include_self else "aten::zeros_like", grad),
                               emit.op("aten::ones_like", src))
        count = emit.op("aten::masked_fill", count, emit.op("aten::eq", count, 0), 1)
        grad_self = emit.op("aten::div", grad, count)
        grad_src = emit.op("aten::div", along.pick(grad), along.pick(count))
    elif reduce in ("amax", "amin"):
        self_is = emit.op("aten::type_as", emit.op("aten::eq", self_, result), self_)
        src_is = emit.op("aten::type_as", emit.op("aten::eq", src, along.pick(result)), self_)
        spread = emit.op("aten::div", grad, along.add_into(self_is, src_is))
        grad_self = emit.op("aten::mul", self_is, spread)
        grad_src = emit.op("aten::mul", src_is, along.pick(spread))
    elif reduce == "prod":
        grad_self, grad_src = _prod_gradients(emit, along, grad, self_, src, result)
    else:
        fail(node, f"no gradient for reduce={reduce!r}")
    if not include_self:
        grad_self = along.zero(grad_self)
    return [grad_self if needs_grad(self_) else None, None, None, grad_src if needs_grad(src) else None, None, None]


# -- aten::as_strided_scatter: derivatives.yaml's rule, with graph ops -------------------------
@formula("aten::as_strided_scatter")
def _as_strided_scatter_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``src: grad.contiguous().as_strided(size, stride, storage_offset)``; ``self:
    as_strided_scatter_backward``, which for a contiguous self is zeros with that same window
    of the gradient copied in: the gradient *at* the written positions, not elsewhere. That is
    PyTorch's number (its OpInfo marks the gradcheck of this op an expected failure), and
    gradview gives it as PyTorch does."""
    self_, src, size, stride, offset = node.inputs()
    # clone, not contiguous: as_strided reads the storage of a fresh tensor, never of a view's base
    window = emit.op("aten::as_strided", emit.op("aten::clone", grads[0], 0), size, stride, offset)
    grad_self = None
    if needs_grad(self_):
        grad_self = emit.op("aten::as_strided_scatter", _zeros_like(emit, grads[0]), window, size, stride, offset)
    return [grad_self, window if needs_grad(src) else None, None, None, None]


# -- aten::index_put (what ``x[idx] = v`` traces to, functionally) -----------------------------
kernel("aten::index_put", "aten::index_put.hacked_twin")(kernels.index_put)
shape_rule("aten::index_put")(_same_as_self)


@formula("aten::index_put", "aten::index_put.hacked_twin")
def _index_put_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """derivatives.yaml: ``self: accumulate ? grad : grad.index_put(indices, zeros_like(values),
    false)``; ``values: grad.index(indices)``, summed back to values' sizes where they broadcast."""
    self_, indices, values, accumulate = node.inputs()
    grad_self = None
    if needs_grad(self_):
        flag = const(accumulate)
        if not isinstance(flag, bool):
            fail(node, "index_put's gradient needs `accumulate` as a constant")
        grad_self = grads[0] if flag else emit.op(
            "aten::index_put", grads[0], indices, _zeros_like(emit, values), False)
    grad_values = None
    if needs_grad(values):
        grad_values = emit.sum_to(emit.op("aten::index", grads[0], indices), size_of(emit, values))
    return [grad_self, None, grad_values, None]


# -- aten::_unsafe_masked_index and its backward (inductor's masked gather) ----------------------
kernel("aten::_unsafe_masked_index")(kernels.unsafe_masked_index)
kernel("aten::_unsafe_masked_index_put_accumulate")(kernels.unsafe_masked_index_put_accumulate)
shape_rule("aten::_unsafe_masked_index_put_accumulate")(_same_as_self)


@shape_rule("aten::_unsafe_masked_index")
def _unsafe_masked_index_shapes(args: NodeArgs) -> RuleResult:
    """``self[indices]``'s sizes broadcast with the mask's."""
    self, mask, entries = args.tensor(0), args.tensor(1), args.elements(2)
    if self is None or mask is None:
        return None
    sizes = None
    if self.sizes is not None and entries is not None and mask.sizes is not None:
        picked = _indexed_sizes(self, entries)
        sizes = None if picked is None else broadcast(picked, mask.sizes)
    return [fresh(self.scalar_type, sizes, self.device)]


@formula("aten::_unsafe_masked_index")
def _unsafe_masked_index_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``self: _unsafe_masked_index_put_accumulate(zeros(self.sizes), mask, indices, grad)``."""
    self_, mask, indices, _ = node.inputs()
    return grad_list(node, emit.op(
        "aten::_unsafe_masked_index_put_accumulate", _zeros_like(emit, self_), mask, indices, grads[0]))


@formula("aten::_unsafe_masked_index_put_accumulate")
def _unsafe_masked_index_put_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``self: grad``; ``values: _unsafe_masked_index(grad, mask, indices, 0)`` (summed back to
    values' sizes where they broadcast)."""
    self_, mask, indices, values = node.inputs()
    grad_values = None
    if needs_grad(values):
        picked = emit.op("aten::_unsafe_masked_index", grads[0], mask, indices, 0.0)
        grad_values = emit.sum_to(picked, size_of(emit, values))
    return [grads[0] if needs_grad(self_) else None, None, None, grad_values]


# -- aten::segment_reduce and aten::_segment_reduce_backward -----------------------------------
kernel("aten::segment_reduce")(kernels.segment_reduce)
kernel("aten::_segment_reduce_backward")(kernels.segment_reduce_backward)
no_gradient(
    "aten::_segment_reduce_backward",
    reason="the derivative for aten::_segment_reduce_backward is not implemented (PyTorch has none)",
)


@shape_rule("aten::segment_reduce")
def _segment_reduce_shapes(args: NodeArgs) -> RuleResult:
    """``data``'s sizes with ``axis`` holding one entry per segment (the last size of
    ``lengths``, or of ``offsets`` less 1)."""
    data, lengths, offsets = args.tensor(0), args.tensor(2), args.tensor(4)
    if data is None:
        return None
    bounds, extra = (offsets, 1) if offsets is not None else (lengths, 0)
    axis = args.int_value(5)
    sizes = None
    if data.sizes is not None and bounds is not None and bounds.sizes and axis is not None:
        dim = wrap_dim(axis, len(data.sizes))
        last = bounds.sizes[-1]
        if dim is not None:
            sizes = tuple(data.sizes[:dim]) + (None if last is None else last - extra,) + tuple(data.sizes[dim + 1:])
    return [fresh(data.scalar_type, sizes, data.device)]


@shape_rule("aten::_segment_reduce_backward")
def _segment_reduce_backward_shapes(args: NodeArgs) -> RuleResult:
    grad, data = args.tensor(0), args.tensor(2)
    return None if grad is None or data is None else [fresh(grad.scalar_type, data.sizes, data.device)]


@formula("aten::segment_reduce")
def _segment_reduce_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``data: _segment_reduce_backward(grad, result, data, reduce, lengths, offsets, axis,
    initial)``."""
    data, reduce, lengths, _, offsets, axis, _, initial = node.inputs()
    return grad_list(node, emit.op(
        "aten::_segment_reduce_backward", grads[0], node.output(), data, reduce, lengths, offsets, axis, initial))
