"""The pieces of a gradient computed by one backward kernel of gradview's own.

Many ops' gradients are simplest (and closest to PyTorch's numbers) as one array
function taking the output gradient and the op's inputs and returning the gradient of
each differentiable input: ``gradview::cumprod_backward(grad, self, dim, dtype)``. This
module builds the three facts such a backward op needs; the family module declares them
itself (so each fact is recorded as its family's)::

    schema(backward_schema("cumprod_backward", "Tensor self, int dim, ScalarType? dtype", 1))
    kernel("gradview::cumprod_backward")(kernels.cumprod_backward)
    no_gradient("gradview::cumprod_backward", reason=BACKWARD_KERNEL)
    shape_rule("gradview::cumprod_backward")(grads_like(0))
    formula("aten::cumprod")(calls_backward("gradview::cumprod_backward", (0,)))
"""

from __future__ import annotations

from gradview.ir import Node, Value

from .gradients import Backward, Emitter
from .shape_toolkit import NodeArgs, RuleResult, ShapeRule, fresh
from .static_info import input_at, needs_grad

__all__ = ["backward_schema", "grads_like", "calls_backward"]


def backward_schema(name: str, signature: str, outputs: int) -> str:
    """``gradview::name(Tensor grad, <signature>) -> (Tensor, ...)``: ``outputs`` gradients."""
    return f"gradview::{name}(Tensor grad, {signature}) -> ({', '.join(['Tensor'] * outputs)})"


def grads_like(*indices: int) -> ShapeRule:
    """Outputs shaped like the forward's inputs ``indices`` (input ``i`` is the backward's
    ``i + 1``), in the gradient's dtype."""

    def rule(args: NodeArgs) -> RuleResult:
        grad = args.tensor(0)
        if grad is None:
            return None
        shaped = [args.tensor(i + 1) for i in indices]
        return [fresh(grad.scalar_type, t.sizes if t is not None else None, grad.device) for t in shaped]

    return rule


def calls_backward(backward: str, differentiable: tuple[int, ...]) -> Backward:
    """A formula calling ``backward(grad, *inputs)``, whose outputs are the gradients of the
    inputs ``differentiable``, in that order."""

    def formula(emit: Emitter, node: Node, saved: dict[str, Value], grads: list[Value]) -> list[Value | None]:
        result: list[Value | None] = [None] * len(node.inputs())
        if not any(needs_grad(input_at(node, i)) for i in differentiable):
            return result
        outputs = emit.op(backward, grads[0], *node.inputs())
        outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        for position, index in enumerate(differentiable):
            if needs_grad(input_at(node, index)):
                result[index] = outputs[position]
        return result

    return formula
