"""Shape rules for the losses (mse_loss, the nll_loss family, cross_entropy_loss and
their backward ops) and for baddbmm and bilinear.

A loss with ``reduction`` none (0) keeps one value per sample: the broadcast
shape for mse_loss, the target's shape for nll_loss (the input's without its
class dim for cross_entropy_loss); mean (1) and sum (2) give a 0-d tensor. A
reduction known only at run time leaves the rank unknown. The backward ops
return the input's shape. Results are fresh, in the input's dtype.
"""

from __future__ import annotations

from gradview.ops.registry import shape_rule
from gradview.ops.shape_toolkit import NodeArgs, RuleResult, Sizes, broadcast, fresh

from ..types import TensorType

__all__: list[str] = []


def _reduced(self: TensorType, args: NodeArgs, index: int, per_sample: Sizes | None) -> TensorType:
    reduction = args.int_value(index) if index < len(args) else 1
    if reduction is None:
        return fresh(self.scalar_type, None, self.device)
    return fresh(self.scalar_type, per_sample if reduction == 0 else (), self.device)


def _without_class_dim(self: TensorType) -> Sizes | None:
    if self.sizes is None:
        return None
    class_dim = 0 if len(self.sizes) == 1 else 1
    return tuple(s for d, s in enumerate(self.sizes) if d != class_dim)


@shape_rule("aten::mse_loss")
def _mse_loss(args: NodeArgs) -> RuleResult:
    self, target = args.tensor(0), args.tensor(1)
    if self is None or target is None:
        return None
    return [_reduced(self, args, 2, broadcast(self.sizes, target.sizes))]


@shape_rule("aten::mse_loss_backward")
def _mse_loss_backward(args: NodeArgs) -> RuleResult:
    grad, self, target = args.tensor(0), args.tensor(1), args.tensor(2)
    if grad is None or self is None or target is None:
        return None
    return [fresh(self.scalar_type, broadcast(self.sizes, target.sizes), self.device)]


@shape_rule("aten::nll_loss", "aten::nll_loss2d", "aten::nll_loss_nd")
def _nll_loss(args: NodeArgs) -> RuleResult:
    self, target = args.tensor(0), args.tensor(1)
    if self is None or target is None:
        return None
    return [_reduced(self, args, 3, target.sizes)]


@shape_rule("aten::nll_loss_forward", "aten::nll_loss2d_forward")
def _nll_loss_forward(args: NodeArgs) -> RuleResult:
    self, target = args.tensor(0), args.tensor(1)
    if self is None or target is None:
        return None
    return [_reduced(self, args, 3, target.sizes), fresh(self.scalar_type, (), self.device)]


@shape_rule("aten::nll_loss_backward", "aten::nll_loss2d_backward")
def _nll_loss_backward(args: NodeArgs) -> RuleResult:
    self = args.tensor(1)
    if self is None:
        return None
    return [fresh(self.scalar_type, self.sizes, self.device)]


@shape_rule("aten::cross_entropy_loss")
def _cross_entropy_loss(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    return [_reduced(self, args, 3, _without_class_dim(self))]


# -- baddbmm, bilinear ----------------------------------------------------------------------------
@shape_rule("aten::baddbmm")
def _baddbmm(args: NodeArgs) -> RuleResult:
    self, batch1, batch2 = args.tensor(0), args.tensor(1), args.tensor(2)
    if self is None or batch1 is None or batch2 is None:
        return None
    sizes = None
    if batch1.sizes is not None and batch2.sizes is not None and len(batch1.sizes) == len(batch2.sizes) == 3:
        sizes = (batch1.sizes[0], batch1.sizes[1], batch2.sizes[2])
    dtype = batch1.scalar_type
    if len(args) > 3 and str(args.type(3)) == "int":  # baddbmm.dtype(..., out_dtype)
        from gradview.ops.dtype_rules import scalar_type_name

        index = args.int_value(3)
        dtype = scalar_type_name(index) if index is not None else None
    return [fresh(dtype, sizes, batch1.device)]


@shape_rule("aten::bilinear")
def _bilinear(args: NodeArgs) -> RuleResult:
    input1, weight = args.tensor(0), args.tensor(2)
    if input1 is None or weight is None:
        return None
    sizes = None
    if input1.sizes is not None and weight.sizes is not None and len(weight.sizes) == 3:
        sizes = input1.sizes[:-1] + (weight.sizes[0],)
    return [fresh(weight.scalar_type, sizes, input1.device)]
