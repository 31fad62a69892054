"""Products: addmv, addr, addbmm, inner, outer, tensordot, einsum, trace and cross
(``kernels/products.py``; mm, bmm, matmul, dot and vdot are in linalg.py).

Shapes run the kernel on stand-in inputs (ops/shape_by_kernel.py).

Gradients, as derivatives.yaml gives them:

* ``addmv = beta self + alpha mat @ vec``: ``self`` gets ``beta grad`` (summed to its
  size), ``mat`` ``alpha outer(grad, vec)``, ``vec`` ``alpha mat^T grad``; ``addr`` and
  ``addbmm`` likewise (``addbmm``'s batches see the gradient expanded over the batch);
* ``outer``: each vector gets the gradient contracted with the other; ``inner`` is a
  product for a 0-d operand, else a tensordot over the last dims;
* ``tensordot``, ``einsum`` and ``trace`` through backward kernels of gradview's own
  (each operand's gradient is the output gradient contracted with the other operands;
  ``trace``'s is the gradient on the diagonal).
"""

from __future__ import annotations

from gradview.ir import Node, Value
from gradview.kernels import products as kernels

from .gradients import BACKWARD_KERNEL
from .kernel_backward import backward_schema, calls_backward, grads_like
from .registry import Emitter, formula, kernel, no_gradient, schema, shape_rule
from .shape_by_kernel import by_kernel
from .static_info import NOT_CONSTANT, const, input_at, needs_grad

__all__: list[str] = []

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]

for _name, _fn in (
    ("aten::addmv", kernels.addmv), ("aten::addr", kernels.addr), ("aten::addbmm", kernels.addbmm),
    ("aten::inner", kernels.inner), ("aten::outer", kernels.outer), ("aten::tensordot", kernels.tensordot),
    ("aten::einsum", kernels.einsum), ("aten::trace", kernels.trace), ("aten::cross", kernels.cross),
):
    kernel(_name)(_fn)
    shape_rule(_name)(by_kernel(_fn))


def _scale(emit: Emitter, grad: Value, factor: Value | None) -> Value:
    """``grad * factor``, skipped for a constant 1 (PyTorch's ``maybe_multiply``)."""
    if factor is None:
        return grad
    known = const(factor)
    return grad if known is not NOT_CONSTANT and known == 1 else emit.op("aten::mul", grad, factor)


def _self_grad(emit: Emitter, node: Node, grad: Value) -> Value | None:
    self_ = node.inputs()[0]
    if not needs_grad(self_):
        return None
    scaled = _scale(emit, grad, input_at(node, 3))
    return emit.sum_to(scaled, emit.size_if_not_equal(self_, node.output()))


@formula("aten::addmv")
def addmv(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    g = grads[0]
    _, mat, vec = node.inputs()[:3]
    alpha = input_at(node, 4)
    result: Result = [None] * len(node.inputs())
    result[0] = _self_grad(emit, node, g)
    if needs_grad(mat):
        result[1] = _scale(emit, emit.op("aten::outer", g, vec), alpha)
    if needs_grad(vec):
        result[2] = _scale(emit, emit.op("aten::mv", emit.op("aten::t", mat), g), alpha)
    return result


@formula("aten::addr")
def addr(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    g = grads[0]
    _, vec1, vec2 = node.inputs()[:3]
    alpha = input_at(node, 4)
    result: Result = [None] * len(node.inputs())
    result[0] = _self_grad(emit, node, g)
    if needs_grad(vec1):
        result[1] = _scale(emit, emit.op("aten::mv", g, vec2), alpha)
    if needs_grad(vec2):
        result[2] = _scale(emit, emit.op("aten::mv", emit.op("aten::t", g), vec1), alpha)
    return result


@formula("aten::addbmm")
def addbmm(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    g = grads[0]
    _, batch1, batch2 = node.inputs()[:3]
    alpha = input_at(node, 4)
    result: Result = [None] * len(node.inputs())
    result[0] = _self_grad(emit, node, g)
    spread = emit.op("aten::unsqueeze", g, 0)  # matmul broadcasts it over the batch, as expand does
    if needs_grad(batch1):
        result[1] = _scale(emit, emit.op("aten::matmul", spread, emit.op("aten::transpose", batch2, 1, 2)), alpha)
    if needs_grad(batch2):
        result[2] = _scale(emit, emit.op("aten::matmul", emit.op("aten::transpose", batch1, 1, 2), spread), alpha)
    return result


@formula("aten::outer")
def outer(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    g = grads[0]
    self_, vec2 = node.inputs()
    return [
        emit.op("aten::mv", g, vec2) if needs_grad(self_) else None,
        emit.op("aten::mv", emit.op("aten::t", g), self_) if needs_grad(vec2) else None,
    ]


@formula("aten::inner")
def inner(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """A 0-d operand makes it a product; otherwise tensordot over both last dims."""
    self_, other = node.inputs()
    if not (needs_grad(self_) or needs_grad(other)):
        return [None, None]
    grad_self, grad_other = emit.op("gradview::inner_backward", grads[0], self_, other)
    return [grad_self if needs_grad(self_) else None, grad_other if needs_grad(other) else None]


# -- the backward kernels ----------------------------------------------------------------------
for _name, _signature, _fn, _inputs in (
    ("inner_backward", "Tensor self, Tensor other", kernels.inner_backward, (0, 1)),
    ("tensordot_backward", "Tensor self, Tensor other, int[] dims_self, int[] dims_other",
     kernels.tensordot_backward, (0, 1)),
    ("trace_backward", "Tensor self", kernels.trace_backward, (0,)),
    ("cross_backward", "Tensor self, Tensor other, int? dim", kernels.cross_backward, (0, 1)),
):
    schema(backward_schema(_name, _signature, len(_inputs)))
    kernel(f"gradview::{_name}")(_fn)
    no_gradient(f"gradview::{_name}", reason=BACKWARD_KERNEL)
    shape_rule(f"gradview::{_name}")(grads_like(*_inputs))
formula("aten::tensordot")(calls_backward("gradview::tensordot_backward", (0, 1)))
formula("aten::trace")(calls_backward("gradview::trace_backward", (0,)))
formula("aten::cross")(calls_backward("gradview::cross_backward", (0, 1)))

schema("gradview::einsum_backward(Tensor grad, str equation, Tensor[] tensors, int[]? path=None) -> Tensor[]")
kernel("gradview::einsum_backward")(kernels.einsum_backward)
no_gradient("gradview::einsum_backward", reason=BACKWARD_KERNEL)
shape_rule("gradview::einsum_backward")(by_kernel(kernels.einsum_backward))
formula("aten::einsum")(calls_backward("gradview::einsum_backward", (1,)))
