"""Losses: mse_loss, the nll_loss family and cross_entropy_loss, with their backward ops;
and the other losses of torch.nn.functional (l1, smooth_l1, huber, binary_cross_entropy
with and without logits, kl_div, soft_margin, margin_ranking, hinge_embedding, poisson_nll,
cosine_embedding, triplet_margin, multi_margin, multilabel_margin, ctc), each with one
gradview backward op giving every differentiable input's gradient (see the section below).

``reduction`` is PyTorch's enum: 0 none, 1 mean, 2 sum. Kernels are in
``kernels/losses.py``.

Shapes. A loss with ``reduction`` none (0) keeps one value per sample: the
broadcast shape for mse_loss, the target's shape for nll_loss (the input's
without its class dim for cross_entropy_loss); mean (1) and sum (2) give a 0-d
tensor. A reduction known only at run time leaves the rank unknown. The
backward ops return the input's shape. Results are fresh, in the input's dtype.

Gradients. Each loss calls PyTorch's own backward op (or a gradview kernel where
PyTorch's is composite), as derivatives.yaml and TorchScript's symbolic script do:

* ``mse_loss``: ``self`` gets ``mse_loss_backward(grad, self, target)`` and
  ``target`` gets ``mse_loss_backward(grad, target, self)`` (so a mean divides by
  each one's own element count, as in eager PyTorch), summed back to its size
  where the two broadcast. ``mse_loss_backward`` itself is differentiable (double
  backward): it is linear in ``grad_output`` and in ``self - target``.
* ``nll_loss``/``nll_loss2d``: TorchScript's formula replaces the node by
  ``nll_loss_forward``, which also returns the total weight of the counted
  targets, and its backward is ``nll_loss_backward(grad, ..., total_weight)``;
  gradview does the same. ``nll_loss_nd`` (any rank) uses
  ``gradview::nll_loss_nd_backward``. ``nll_loss_backward`` is linear in its
  ``grad_output``, whose gradient is ``nll_loss`` of the incoming gradient.
* ``cross_entropy_loss``: ``gradview::cross_entropy_loss_backward`` (log_softmax
  then nll, label smoothing, class-probability targets, which get a gradient too).

Class weights get no gradient: PyTorch's nll_loss refuses a weight that requires
grad ("not differentiable with respect to argument 'weight'"), and gradview says
so, naming the node, for every loss here.
"""

from __future__ import annotations

from typing import Any

from gradview.ir import Node, Value
from gradview.ir.types import TensorType
from gradview.kernels import losses as kernels

from .gradients import BACKWARD_KERNEL
from .registry import Emitter, formula, kernel, no_gradient, schema, shape_rule
from .shape_toolkit import NodeArgs, RuleResult, Sizes, broadcast, fresh
from .static_info import (
    NOT_CONSTANT,
    const,
    fail,
    input_at,
    is_none,
    needs_grad,
    size_of,
)

__all__: list[str] = []

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]

_NONE, _MEAN = 0, 1


# -- shared by the shape rules -----------------------------------------------------------------
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


def _like(grad: TensorType, t: TensorType | None) -> TensorType:
    return fresh(grad.scalar_type, t.sizes if t is not None else None, grad.device)


# -- shared by the formulas --------------------------------------------------------------------
def _refuse_weight_grad(node: Node, index: int) -> None:
    weight = input_at(node, index)
    if weight is not None and not is_none(weight) and needs_grad(weight):
        fail(node, f"{node.kind()} is not differentiable with respect to argument 'weight'")


def _reduction(node: Node, index: int) -> int:
    value = const(node.inputs()[index]) if index < len(node.inputs()) else _MEAN
    if value is NOT_CONSTANT:
        fail(node, f"the gradient of {node.kind()} needs a constant reduction")
    return int(value)


# -- aten::mse_loss ---------------------------------------------------------------------------
kernel("aten::mse_loss")(kernels.mse_loss)


@shape_rule("aten::mse_loss")
def _mse_loss_shapes(args: NodeArgs) -> RuleResult:
    self, target = args.tensor(0), args.tensor(1)
    if self is None or target is None:
        return None
    return [_reduced(self, args, 2, broadcast(self.sizes, target.sizes))]


def _mse_forward(emit: Emitter, node: Node) -> Saved:
    self_, target = node.inputs()[:2]
    saved: Saved = {}
    if needs_grad(self_):
        saved["self_size"] = size_of(emit, self_)
    if needs_grad(target):
        saved["target_size"] = size_of(emit, target)
    return saved


@formula("aten::mse_loss", forward=_mse_forward)
def mse_loss(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    self_, target = node.inputs()[:2]
    reduction = input_at(node, 2) or _MEAN
    result: Result = [None] * len(node.inputs())
    if "self_size" in saved:
        grad = emit.op("aten::mse_loss_backward", grads[0], self_, target, reduction)
        result[0] = emit.sum_to(grad, saved["self_size"])
    if "target_size" in saved:
        grad = emit.op("aten::mse_loss_backward", grads[0], target, self_, reduction)
        result[1] = emit.sum_to(grad, saved["target_size"])
    return result


# -- aten::mse_loss_backward ------------------------------------------------------------------
kernel("aten::mse_loss_backward")(kernels.mse_loss_backward)


@shape_rule("aten::mse_loss_backward")
def _mse_loss_backward_shapes(args: NodeArgs) -> RuleResult:
    grad, self, target = args.tensor(0), args.tensor(1), args.tensor(2)
    if grad is None or self is None or target is None:
        return None
    return [fresh(self.scalar_type, broadcast(self.sizes, target.sizes), self.device)]


def _mse_double_forward(emit: Emitter, node: Node) -> Saved:
    _, self_, target, _ = node.inputs()
    saved = {}
    if needs_grad(self_):
        saved["self_size"] = size_of(emit, self_)
    if needs_grad(target):
        saved["target_size"] = size_of(emit, target)
    return saved


@formula("aten::mse_loss_backward", forward=_mse_double_forward)
def mse_loss_backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``mse_loss_backward(g, s, t) = c * (s - t) * g`` with ``c = 2`` (``2 / s.numel()`` for mean)."""
    grad_output, self_, target, reduction_value = node.inputs()
    reduction = _reduction(node, 3)
    v = grads[0]
    result: Result = [None, None, None, None]
    if needs_grad(grad_output):
        if reduction == _NONE:
            result[0] = emit.op("aten::mse_loss_backward", v, self_, target, reduction_value)
        else:
            ones = emit.op("aten::ones_like", grad_output, None, None, None, None, None)
            unit = emit.op("aten::mse_loss_backward", ones, self_, target, reduction_value)
            result[0] = emit.op("aten::sum", emit.op("aten::mul", unit, v), None)
    for position, value, key in ((1, self_, "self_size"), (2, target, "target_size")):
        if key not in saved:
            continue
        doubled = emit.op("aten::mul", emit.op("aten::mul", v, grad_output), 2.0)
        if reduction == _MEAN:
            doubled = emit.op("aten::div", doubled, emit.op("aten::numel", value))
        if position == 2:
            doubled = emit.op("aten::neg", doubled)
        result[position] = emit.sum_to(doubled, saved[key])
    return result


# -- aten::nll_loss, nll_loss2d, nll_loss_forward, nll_loss2d_forward -------------------------
# (the _forward ops, which PyTorch's JIT formula calls, have their schemas in the IR's catalogue)
kernel("aten::nll_loss")(kernels.nll_loss)
kernel("aten::nll_loss2d")(kernels.nll_loss2d)
kernel("aten::nll_loss_forward")(kernels.nll_loss_forward)
kernel("aten::nll_loss2d_forward")(kernels.nll_loss2d_forward)


@shape_rule("aten::nll_loss", "aten::nll_loss2d", "aten::nll_loss_nd")
def _nll_loss_shapes(args: NodeArgs) -> RuleResult:
    self, target = args.tensor(0), args.tensor(1)
    if self is None or target is None:
        return None
    return [_reduced(self, args, 3, target.sizes)]


@shape_rule("aten::nll_loss_forward", "aten::nll_loss2d_forward")
def _nll_loss_forward_shapes(args: NodeArgs) -> RuleResult:
    self, target = args.tensor(0), args.tensor(1)
    if self is None or target is None:
        return None
    return [_reduced(self, args, 3, target.sizes), fresh(self.scalar_type, (), self.device)]


_FORWARD_OF = {"aten::nll_loss": "aten::nll_loss_forward", "aten::nll_loss2d": "aten::nll_loss2d_forward"}
_BACKWARD_OF = {"aten::nll_loss": "aten::nll_loss_backward", "aten::nll_loss2d": "aten::nll_loss2d_backward",
                "aten::nll_loss_forward": "aten::nll_loss_backward",
                "aten::nll_loss2d_forward": "aten::nll_loss2d_backward"}


def _nll_forward(emit: Emitter, node: Node) -> Saved:
    """Replace ``nll_loss`` by ``nll_loss_forward`` (as TorchScript's formula does) to get
    the total weight; the ``_forward`` ops return it themselves."""
    _refuse_weight_grad(node, 2)
    if not needs_grad(node.inputs()[0]):
        return {}
    if node.kind() in _FORWARD_OF:
        inputs = list(node.inputs()) + [None] * (5 - len(node.inputs()))
        defaults = [inputs[0], inputs[1], inputs[2], _MEAN if inputs[3] is None else inputs[3],
                    -100 if inputs[4] is None else inputs[4]]
        result, total_weight = emit.op(_FORWARD_OF[node.kind()], *defaults)
        result.set_type(node.output().type())
        node.output().replace_all_uses_with(result)
        return {"result": result, "total_weight": total_weight}
    return {"total_weight": node.outputs()[1]}


@formula("aten::nll_loss", "aten::nll_loss2d", "aten::nll_loss_forward", "aten::nll_loss2d_forward",
         forward=_nll_forward)
def nll_loss(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    result: Result = [None] * len(node.inputs())
    if not saved:
        return result
    inputs = list(node.inputs()) + [None] * (5 - len(node.inputs()))
    weight = inputs[2]
    reduction = _MEAN if inputs[3] is None else inputs[3]
    ignore_index = -100 if inputs[4] is None else inputs[4]
    result[0] = emit.op(_BACKWARD_OF[node.kind()], grads[0], inputs[0], inputs[1], weight, reduction,
                        ignore_index, saved["total_weight"])
    return result


# -- aten::nll_loss_backward, nll_loss2d_backward ---------------------------------------------
kernel("aten::nll_loss_backward")(kernels.nll_loss_backward)
kernel("aten::nll_loss2d_backward")(kernels.nll_loss2d_backward)


@shape_rule("aten::nll_loss_backward", "aten::nll_loss2d_backward")
def _nll_loss_backward_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(1)
    if self is None:
        return None
    return [fresh(self.scalar_type, self.sizes, self.device)]


@formula("aten::nll_loss_backward", "aten::nll_loss2d_backward")
def nll_loss_backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Linear in ``grad_output``: its gradient is the loss of the incoming gradient;
    ``self`` gets none (the backward does not depend on its values)."""
    _refuse_weight_grad(node, 3)
    grad_output, _, target, weight, reduction, ignore_index, _ = node.inputs()
    result: Result = [None] * len(node.inputs())
    if needs_grad(grad_output):
        loss = "aten::nll_loss" if node.kind() == "aten::nll_loss_backward" else "aten::nll_loss2d"
        result[0] = emit.op(loss, grads[0], target, weight, reduction, ignore_index)
    return result


# -- aten::nll_loss_nd (its shape rule is nll_loss's) and gradview::nll_loss_nd_backward ------
kernel("aten::nll_loss_nd")(kernels.nll_loss_nd)


@formula("aten::nll_loss_nd")
def nll_loss_nd(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    _refuse_weight_grad(node, 2)
    result: Result = [None] * len(node.inputs())
    if not needs_grad(node.inputs()[0]):
        return result
    inputs = list(node.inputs()) + [None] * (5 - len(node.inputs()))
    reduction = _MEAN if inputs[3] is None else inputs[3]
    ignore_index = -100 if inputs[4] is None else inputs[4]
    result[0] = emit.op("gradview::nll_loss_nd_backward", grads[0], inputs[0], inputs[1], inputs[2],
                        reduction, ignore_index)
    return result


schema(
    "gradview::nll_loss_nd_backward(Tensor grad, Tensor self, Tensor target, Tensor? weight, int reduction, "
    "int ignore_index) -> Tensor"
)
kernel("gradview::nll_loss_nd_backward")(kernels.nll_loss_nd_backward)
no_gradient("gradview::nll_loss_nd_backward", reason=BACKWARD_KERNEL)


@shape_rule("gradview::nll_loss_nd_backward")
def _nll_loss_nd_backward_shapes(args: NodeArgs) -> RuleResult:
    grad = args.tensor(0)
    return None if grad is None else [_like(grad, args.tensor(1))]


# -- aten::cross_entropy_loss and gradview::cross_entropy_loss_backward -----------------------
kernel("aten::cross_entropy_loss")(kernels.cross_entropy_loss)


@shape_rule("aten::cross_entropy_loss")
def _cross_entropy_loss_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    return [_reduced(self, args, 3, _without_class_dim(self))]


@formula("aten::cross_entropy_loss")
def cross_entropy_loss(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    _refuse_weight_grad(node, 2)
    inputs = list(node.inputs()) + [None] * (6 - len(node.inputs()))
    self_, target, weight = inputs[:3]
    mask = [needs_grad(self_), needs_grad(target)]
    result: Result = [None] * len(node.inputs())
    if not any(mask):
        return result
    args = [_MEAN if inputs[3] is None else inputs[3], -100 if inputs[4] is None else inputs[4],
            0.0 if inputs[5] is None else inputs[5]]
    grad_self, grad_target = emit.op(
        "gradview::cross_entropy_loss_backward", grads[0], self_, target, weight, *args, mask
    )
    result[0] = grad_self if mask[0] else None
    result[1] = grad_target if mask[1] else None
    return result


schema(
    "gradview::cross_entropy_loss_backward(Tensor grad, Tensor self, Tensor target, Tensor? weight, "
    "int reduction, int ignore_index, float label_smoothing, bool[2] output_mask) -> (Tensor, Tensor)"
)
kernel("gradview::cross_entropy_loss_backward")(kernels.cross_entropy_loss_backward)
no_gradient("gradview::cross_entropy_loss_backward", reason=BACKWARD_KERNEL)


@shape_rule("gradview::cross_entropy_loss_backward")
def _cross_entropy_loss_backward_shapes(args: NodeArgs) -> RuleResult:
    """(d self, d target): the second only for probability targets (output_mask[1])."""
    grad = args.tensor(0)
    if grad is None:
        return None
    mask = args.value(7, None)
    wants_target = isinstance(mask, (list, tuple)) and len(mask) == 2 and mask[1] is True
    return [_like(grad, args.tensor(1)), _like(grad, args.tensor(2)) if wants_target else None]


# -- the pointwise losses of torch.nn.functional ------------------------------------------------
# Each has a gradview backward op returning the gradient of every differentiable input at once
# (summed back to its shape), in the arithmetic of PyTorch's backward kernel (or of eager
# autograd through the decomposition, for PyTorch's composite losses): see kernels/losses.py.
# Inputs PyTorch does not differentiate (class weights, soft_margin_loss's target) are refused
# in PyTorch's words when they require grad; selectors (hinge_embedding_loss's target) get none.
def _no_grad_for(node: Node, index: int, argument: str) -> None:
    value = input_at(node, index)
    if value is not None and not is_none(value) and needs_grad(value):
        fail(node, f"the function '{node.kind().split('::')[-1]}' is not differentiable with respect to "
                   f"argument '{argument}'")


def _loss_gradient(backward_op: str, differentiable: tuple[int, ...], refused: tuple[tuple[int, str], ...] = ()):
    """A formula calling ``backward_op(grad, *inputs)``, which returns one gradient per
    index of ``differentiable``."""

    def backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
        for index, argument in refused:
            _no_grad_for(node, index, argument)
        result: Result = [None] * len(node.inputs())
        if not any(needs_grad(input_at(node, i)) for i in differentiable):
            return result
        outputs = emit.op(backward_op, grads[0], *node.inputs())
        outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        for position, index in enumerate(differentiable):
            if needs_grad(input_at(node, index)):
                result[index] = outputs[position]
        return result

    return backward


def _grads_like(*indices: int):  # a shape rule factory
    """Backward op outputs shaped like its inputs ``indices`` (the grad is input 0)."""

    def rule(args: NodeArgs) -> RuleResult:
        grad = args.tensor(0)
        if grad is None:
            return None
        return [_like(grad, args.tensor(i)) for i in indices]

    return rule


def _broadcast_loss_shapes(per_sample: tuple[int, ...], reduction_index: int):
    """The loss's shape: the broadcast of inputs ``per_sample`` (reduction none), else 0-d."""

    def rule(args: NodeArgs) -> RuleResult:
        tensors = [args.tensor(i) for i in per_sample]
        if any(t is None for t in tensors):
            return None
        return [_reduced(tensors[0], args, reduction_index, broadcast(*(t.sizes for t in tensors)))]

    return rule


def _pointwise_loss(
    name: str, signature: str, differentiable: tuple[int, ...], reduction_index: int,
    refused: tuple[tuple[int, str], ...] = (), per_sample: tuple[int, ...] = (0, 1), rule: Any = None,
) -> None:
    """Declare ``aten::name`` and its ``gradview::name_backward`` (``signature``: the forward's
    arguments)."""
    forward_kernel = getattr(kernels, name)
    backward_kernel = getattr(kernels, f"{name}_backward")
    kernel(f"aten::{name}")(forward_kernel)
    shape_rule(f"aten::{name}")(rule or _broadcast_loss_shapes(per_sample, reduction_index))
    outputs = ", ".join(["Tensor"] * len(differentiable))
    backward_name = f"gradview::{name}_backward"
    schema(f"{backward_name}(Tensor grad, {signature}) -> ({outputs})")
    kernel(backward_name)(backward_kernel)
    no_gradient(backward_name, reason=BACKWARD_KERNEL)
    shape_rule(backward_name)(_grads_like(*(i + 1 for i in differentiable)))
    formula(f"aten::{name}")(_loss_gradient(backward_name, differentiable, refused))


_pointwise_loss("l1_loss", "Tensor self, Tensor target, int reduction", (0, 1), 2)
_pointwise_loss("smooth_l1_loss", "Tensor self, Tensor target, int reduction, float beta", (0, 1), 2)
_pointwise_loss("huber_loss", "Tensor self, Tensor target, int reduction, float delta", (0, 1), 2)
_pointwise_loss(
    "binary_cross_entropy", "Tensor self, Tensor target, Tensor? weight, int reduction", (0, 1), 3,
    refused=((2, "weight"),),
)
_pointwise_loss(
    "binary_cross_entropy_with_logits",
    "Tensor self, Tensor target, Tensor? weight, Tensor? pos_weight, int reduction", (0, 1), 4,
    refused=((2, "weight"), (3, "pos_weight")),
)
_pointwise_loss("kl_div", "Tensor self, Tensor target, int reduction, bool log_target", (0, 1), 2)
_pointwise_loss(
    "soft_margin_loss", "Tensor self, Tensor target, int reduction", (0,), 2, refused=((1, "target"),)
)
_pointwise_loss(
    "margin_ranking_loss", "Tensor input1, Tensor input2, Tensor target, float margin, int reduction",
    (0, 1, 2), 4, per_sample=(0, 1, 2),
)
_pointwise_loss(
    "hinge_embedding_loss", "Tensor self, Tensor target, float margin, int reduction", (0,), 3
)
_pointwise_loss(
    "poisson_nll_loss", "Tensor input, Tensor target, bool log_input, bool full, float eps, int reduction",
    (0, 1), 5,
)



def _triplet_shapes(args: NodeArgs) -> RuleResult:
    """One loss per anchor row: the anchor's sizes without the last dim (reduction none)."""
    anchor = args.tensor(0)
    if anchor is None:
        return None
    per_sample = None if anchor.sizes is None else tuple(anchor.sizes[:-1])
    return [_reduced(anchor, args, 7, per_sample)]


def _margin_shapes(keep_from_rank: int, reduction_index: int):  # a shape rule factory
    """multi_margin_loss (``keep_from_rank`` 1) and multilabel_margin_loss (2): one loss per
    sample when the reduction is none and the target has at least that rank, else 0-d."""

    def rule(args: NodeArgs) -> RuleResult:
        self, target = args.tensor(0), args.tensor(1)
        if self is None or target is None:
            return None
        frames = None
        if self.sizes is not None and target.sizes is not None:
            frames = (self.sizes[0],) if len(target.sizes) >= keep_from_rank and len(self.sizes) == 2 else (
                (1,) if len(target.sizes) >= keep_from_rank else ())
        return [_reduced(self, args, reduction_index, frames)]

    return rule


_pointwise_loss(
    "cosine_embedding_loss", "Tensor input1, Tensor input2, Tensor target, float margin, int reduction", (0, 1), 4,
    per_sample=(2,),
)
_pointwise_loss(
    "triplet_margin_loss", "Tensor anchor, Tensor positive, Tensor negative, float margin, float p, float eps, "
    "bool swap, int reduction", (0, 1, 2), 7, rule=_triplet_shapes,
)
_pointwise_loss(
    "multi_margin_loss", "Tensor self, Tensor target, Scalar p, Scalar margin, Tensor? weight, int reduction", (0,), 5,
    refused=((4, "weight"),), rule=_margin_shapes(1, 5),
)
_pointwise_loss(
    "multilabel_margin_loss", "Tensor self, Tensor target, int reduction", (0,), 2, rule=_margin_shapes(2, 2),
)


# -- aten::ctc_loss (.IntList, .Tensor) and gradview::ctc_loss_backward ---------------------------------
# ATen's composite over _ctc_loss and its reduction; the backward kernel takes the reduction's
# gradient and _ctc_loss_backward's steps (kernels/losses.py). Only log_probs is differentiable.
kernel("aten::ctc_loss.IntList", "aten::ctc_loss.Tensor")(kernels.ctc_loss)
schema(
    "gradview::ctc_loss_backward(Tensor grad, Tensor log_probs, Tensor targets, int[] input_lengths, "
    "int[] target_lengths, int blank, int reduction, bool zero_infinity) -> Tensor",
    "gradview::ctc_loss_backward.Tensor(Tensor grad, Tensor log_probs, Tensor targets, Tensor input_lengths, "
    "Tensor target_lengths, int blank, int reduction, bool zero_infinity) -> Tensor",
)
kernel("gradview::ctc_loss_backward", "gradview::ctc_loss_backward.Tensor")(kernels.ctc_loss_backward)
no_gradient("gradview::ctc_loss_backward", "gradview::ctc_loss_backward.Tensor", reason=BACKWARD_KERNEL)
shape_rule("gradview::ctc_loss_backward")(_grads_like(1))


@shape_rule("aten::ctc_loss")
def _ctc_loss_shapes(args: NodeArgs) -> RuleResult:
    log_probs = args.tensor(0)
    if log_probs is None:
        return None
    per_sample = None
    if log_probs.sizes is not None:
        per_sample = (log_probs.sizes[1],) if len(log_probs.sizes) == 3 else ()
    return [_reduced(log_probs, args, 5, per_sample)]


@formula("aten::ctc_loss.IntList", "aten::ctc_loss.Tensor")
def ctc_loss(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    result: Result = [None] * len(node.inputs())
    if not needs_grad(node.inputs()[0]):
        return result
    overload = "gradview::ctc_loss_backward.Tensor" if node.maybe_schema().overload_name == "Tensor" else (
        "gradview::ctc_loss_backward")
    result[0] = emit.op(overload, grads[0], *node.inputs())
    return result
