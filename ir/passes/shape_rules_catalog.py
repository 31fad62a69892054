"""Shape rules for the ops the op catalogue found without one: the backward helpers
gradient formulas emit.

* A backward helper returns the gradient of an input it differentiates, so its
  result has that input's size (given as an ``int[]`` argument, or taken from
  the input's type) and the incoming gradient's dtype: ``select_backward`` and
  ``slice_backward`` scatter into zeros of ``input_sizes``;
  ``split``/``chunk``/``unbind_backward`` join the pieces back into ``sizes``;
  the loss and bilinear backwards are shaped like the inputs they differentiate.
  List results (``cat_backward``, ``meshgrid_backward``,
  ``broadcast_tensors_backward``) have one element per piece or input.

Results built by zero-filling (``zeros(sizes).index_put_``...) are contiguous;
where a helper returns a view or a sum whose layout depends on its input, only
the sizes and dtype are given.
"""

from __future__ import annotations

from gradview.ops.registry import shape_rule
from gradview.ops.shape_toolkit import (
    ElementList,
    NodeArgs,
    RuleResult,
    Sizes,
    device_of,
    fresh,
    make_tensor,
)

from ..types import NoneType, TensorType, Type

__all__: list[str] = []


# -- gradients into zeros of the input's size ------------------------------------------------
def _sizes(args: NodeArgs, index: int) -> Sizes | None:
    values = args.int_list(index)
    return tuple(values) if values is not None else None


def _grad_shaped(grad_index: int, size_index: int, contiguous: bool = True):  # noqa: ANN202
    """A rule: the gradient's dtype and device, the sizes of the ``int[]`` input ``size_index``."""

    def rule(args: NodeArgs) -> RuleResult:
        grad = args.tensor(grad_index)
        if grad is None:
            return None
        sizes = _sizes(args, size_index)
        if contiguous:
            return [fresh(grad.scalar_type, sizes, grad.device)]
        return [make_tensor(grad.scalar_type, sizes, None, grad.device)]

    return rule


shape_rule("aten::select_backward", "aten::slice_backward")(_grad_shaped(0, 1))
shape_rule("aten::value_selecting_reduction_backward")(_grad_shaped(0, 3))
shape_rule("gradview::index_backward")(_grad_shaped(0, 1))
shape_rule("gradview::pad_backward")(_grad_shaped(0, 1, contiguous=False))


def _first_tensor(types: tuple[Type, ...] | None) -> TensorType | None:
    for t in types or ():
        if isinstance(t, TensorType):
            return t
    return None


@shape_rule(
    "gradview::split_with_sizes_backward", "gradview::split_backward", "gradview::chunk_backward",
    "gradview::unbind_backward",
)
def _joined_pieces(args: NodeArgs) -> RuleResult:
    """The pieces' gradients joined into a fresh tensor of ``sizes`` (the last argument)."""
    piece = _first_tensor(args.elements(0))
    sizes = _sizes(args, len(args) - 1)
    if piece is None and sizes is None:
        return None
    return [fresh(piece.scalar_type if piece else None, sizes, piece.device if piece else None)]


# -- shaped like the inputs they differentiate ---------------------------------------------------
def _like(grad: TensorType, t: TensorType | None) -> TensorType:
    return fresh(grad.scalar_type, t.sizes if t is not None else None, grad.device)


@shape_rule("gradview::nll_loss_nd_backward")
def _nll_loss_nd_backward(args: NodeArgs) -> RuleResult:
    grad = args.tensor(0)
    return None if grad is None else [_like(grad, args.tensor(1))]


@shape_rule("gradview::cross_entropy_loss_backward")
def _cross_entropy_loss_backward(args: NodeArgs) -> RuleResult:
    """(d self, d target): the second only for probability targets (output_mask[1])."""
    grad = args.tensor(0)
    if grad is None:
        return None
    mask = args.value(7, None)
    wants_target = isinstance(mask, (list, tuple)) and len(mask) == 2 and mask[1] is True
    return [_like(grad, args.tensor(1)), _like(grad, args.tensor(2)) if wants_target else None]


# -- list results --------------------------------------------------------------------------------
@shape_rule("gradview::cat_backward")
def _cat_backward(args: NodeArgs) -> RuleResult:
    """One piece of the gradient per length (``-1``: a skipped empty 1-D tensor, shape ``[0]``)."""
    grad, lengths, dim = args.tensor(0), args.int_list(1), args.int_value(2)
    if grad is None or lengths is None:
        return None
    sizes = grad.sizes
    axis = None if dim is None or sizes is None else dim + len(sizes) if dim < 0 else dim
    pieces: list[Type] = []
    for length in lengths:
        if length == -1:
            pieces.append(fresh(grad.scalar_type, (0,), grad.device))
        elif sizes is None or axis is None or not 0 <= axis < len(sizes):
            pieces.append(make_tensor(grad.scalar_type, None, None, grad.device))
        else:
            piece = tuple(length if i == axis else s for i, s in enumerate(sizes))
            pieces.append(make_tensor(grad.scalar_type, piece, None, grad.device))
    return [ElementList(tuple(pieces))]


def _per_input(grads: tuple[Type, ...] | None, tensors: tuple[Type, ...] | None) -> RuleResult:
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


@shape_rule("gradview::meshgrid_backward", "gradview::broadcast_tensors_backward")
def _summed_back_per_input(args: NodeArgs) -> RuleResult:
    return _per_input(args.elements(0), args.elements(1))
