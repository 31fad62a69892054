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

from gradview.ops.shape_toolkit import (
    NodeArgs,
    RuleResult,
    Sizes,
    fresh,
    make_tensor,
)


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
