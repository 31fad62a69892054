"""The ops of gradient bookkeeping: what gradient formulas emit and the runtime uses
to combine gradients.

Reverse-mode autodiff needs a few ops of its own besides each op's formula
(TorchScript inserts the same ones into its gradient graphs):

* **Undoing broadcasting.** ``a + b`` with ``a: [4, 5]`` and ``b: [5]``
  broadcasts ``b``; ``b``'s gradient is the output's gradient summed back to
  ``[5]``. The forward records ``_size_if_not_equal(b.size(), out.size())``
  (``None`` when nothing was broadcast), and the backward calls
  ``_grad_sum_to_size(grad, that)``, which returns ``grad`` itself for
  ``None``. ``sum_to_size`` is the same sum as a user-facing op; its gradient
  expands back (a sum's adjoint is an expand).
* **Accumulating.** A value used twice gets the sum of both uses' gradients:
  ``prim::AutogradAdd``, where an undefined gradient (``AutogradZero``, None
  at run time) counts as zero, and lists add element by element.
* **Testing which gradients exist.** ``prim::AutogradAnyNonZero``,
  ``AllZero`` and ``AllNonZero`` guard the backward branches that can be
  skipped when no gradient flows.
* **Fused-graph sizes.** ``prim::BroadcastSizes`` broadcasts size lists;
  ``prim::ConstantChunk`` and ``prim::ChunkSizes`` (with ``chunks`` and
  ``dim`` attributes, passed as keyword arguments) split a tensor or its size.

The schema-less prims are keyed by kind and keep the types they are
created with (they have no shape rule).
"""

from __future__ import annotations

from gradview.ir import Node, Value
from gradview.ir.types import TensorType
from gradview.kernels import gradient_helpers as kernels

from .registry import Emitter, fast_path, formula, kernel, shape_rule
from .shape_toolkit import NodeArgs, RuleResult, fresh, make_tensor
from .static_info import needs_grad, none_grads, size_of

__all__: list[str] = []

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]


# -- aten::_grad_sum_to_size, sum_to_size, _size_if_not_equal: undoing broadcasting ------------
kernel("aten::sum_to_size")(kernels.sum_to_size)
kernel("aten::_grad_sum_to_size")(kernels.grad_sum_to_size)
fast_path("aten::_grad_sum_to_size")(kernels.fast_grad_sum_to_size)
kernel("aten::_size_if_not_equal")(kernels.size_if_not_equal)
fast_path("aten::_size_if_not_equal")(kernels.fast_size_if_not_equal)


@shape_rule("aten::_grad_sum_to_size", "aten::sum_to_size")
def _sum_to_size(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    if args.is_none(1):  # _grad_sum_to_size(self, None) is self
        return [TensorType(self.scalar_type, self.sizes, self.strides, None, self.device)]
    target = args.int_list(1)
    if target is None:
        return [make_tensor(self.scalar_type, None, None, self.device)]
    if self.sizes is not None and tuple(target) == self.sizes:
        return [TensorType(self.scalar_type, self.sizes, self.strides, None, self.device)]
    return [fresh(self.scalar_type, tuple(target), self.device)]


def _save_self_size(emit: Emitter, node: Node) -> Saved:
    self_ = node.inputs()[0]
    return {"self_size": size_of(emit, self_)} if needs_grad(self_) else {}


@formula("aten::sum_to_size", forward=_save_self_size)
def _sum_to_size_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """A sum's adjoint: expand the gradient back to the input's size."""
    if not saved:
        return none_grads(node)
    return none_grads(node, emit.op("aten::expand", grads[0], saved["self_size"], False))


def _save_input_size(emit: Emitter, node: Node) -> Saved:
    return {"self_size": size_of(emit, node.inputs()[0])}


@formula("aten::_grad_sum_to_size", forward=_save_input_size)
def _grad_sum_to_size_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """A sum's adjoint is an expand: back to the input's size (a no-op when nothing was summed)."""
    return [emit.op("aten::expand", grads[0], saved["self_size"]), None]


# -- prim::AutogradAdd: accumulating gradients ---------------------------------------------------
kernel("prim::AutogradAdd")(kernels.autograd_add)

# -- prim::AutogradAnyNonZero, AllZero, AllNonZero: which gradients are defined ---------------------
kernel("prim::AutogradAnyNonZero")(kernels.autograd_any_non_zero)
kernel("prim::AutogradAllZero")(kernels.autograd_all_zero)
kernel("prim::AutogradAllNonZero")(kernels.autograd_all_non_zero)

# -- prim::BroadcastSizes, ConstantChunk, ChunkSizes: sizes and chunks of fused graphs -------------
kernel("prim::BroadcastSizes")(kernels.broadcast_sizes)
kernel("prim::ChunkSizes")(kernels.chunk_sizes)
# prim::ConstantChunk, a chunk with constant arguments, is with chunk in ops/concat_split.py.
