"""Shape rules for the ops the op catalogue found without one: the backward helpers
gradient formulas emit.

* A backward helper returns the gradient of an input it differentiates, so its
  result has that input's size (given as an ``int[]`` argument, or taken from
  the input's type) and the incoming gradient's dtype;
  the loss and bilinear backwards are shaped like the inputs they differentiate.

Results built by zero-filling (``zeros(sizes).index_put_``...) are contiguous;
where a helper returns a view or a sum whose layout depends on its input, only
the sizes and dtype are given.
"""

from __future__ import annotations

from gradview.ops.registry import shape_rule
from gradview.ops.shape_toolkit import (
    NodeArgs,
    RuleResult,
    Sizes,
    fresh,
    make_tensor,
)

from ..types import TensorType

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
