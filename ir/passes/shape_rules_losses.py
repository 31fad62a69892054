"""Shape rules for the losses (mse_loss, the nll_loss family, cross_entropy_loss and
their backward ops).

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
