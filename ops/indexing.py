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
from gradview.kernels import shapes_extra as extra_kernels

from .emit_util import grad_list
from .registry import Emitter, formula, kernel, no_gradient, schema, shape_rule
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
from .static_info import needs_grad, size_of
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
kernel("aten::_dim_arange")(extra_kernels.dim_arange)


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
