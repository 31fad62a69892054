"""Finite differences and integrals: diff, gradient (every overload), trapezoid, trapz and
cumulative_trapezoid (``kernels/calculus.py``, ATen's arithmetic).

Shapes run the kernel on stand-in inputs (ops/shape_by_kernel.py). Every op is linear in
its samples, so each gradient is a backward kernel applying the transposed stencil;
trapezoid's coordinates ``x`` get theirs through the spacing ``dx = x[1:] - x[:-1]``.
``gradient``'s coordinate tensors get none from gradview (its results' gradients reach
``self`` only).
"""

from __future__ import annotations

from gradview.ir import Node, Value
from gradview.ir.types import ListType, OptionalType, TensorType
from gradview.kernels import calculus as kernels

from .gradients import BACKWARD_KERNEL
from .kernel_backward import backward_schema, calls_backward, grads_like
from .registry import Emitter, formula, kernel, no_gradient, schema, shape_rule
from .shape_by_kernel import by_kernel
from .shape_toolkit import NodeArgs, RuleResult, fresh
from .static_info import fail, needs_grad, none_grads

__all__: list[str] = []

# -- diff ---------------------------------------------------------------------------------------
kernel("aten::diff")(kernels.diff)
shape_rule("aten::diff")(by_kernel(kernels.diff))
schema(backward_schema("diff_backward", "Tensor self, int n, int dim, Tensor? prepend, Tensor? append", 3))
kernel("gradview::diff_backward")(kernels.diff_backward)
no_gradient("gradview::diff_backward", reason=BACKWARD_KERNEL)
shape_rule("gradview::diff_backward")(grads_like(0, 3, 4))
formula("aten::diff")(calls_backward("gradview::diff_backward", (0, 3, 4)))

# -- trapezoid, trapz, cumulative_trapezoid -------------------------------------------------------
for _op, _x_kernel, _dx_kernel, _dx_type in (
    ("trapezoid", kernels.trapezoid_x, kernels.trapezoid_dx, "Scalar"),
    ("trapz", kernels.trapezoid_x, kernels.trapezoid_dx, "float"),
    ("cumulative_trapezoid", kernels.cumulative_trapezoid_x, kernels.cumulative_trapezoid_dx, "Scalar"),
):
    _family = "cumulative_trapezoid" if _op.startswith("cumulative") else "trapezoid"
    kernel(f"aten::{_op}.x")(_x_kernel)
    kernel(f"aten::{_op}.dx")(_dx_kernel)
    schema(backward_schema(f"{_op}_x_backward", "Tensor y, Tensor x, int dim", 2))
    schema(backward_schema(f"{_op}_dx_backward", f"Tensor y, {_dx_type} dx, int dim", 1))
    kernel(f"gradview::{_op}_x_backward")(getattr(kernels, f"{_family}_backward"))
    kernel(f"gradview::{_op}_dx_backward")(getattr(kernels, f"{_family}_dx_backward"))
    no_gradient(f"gradview::{_op}_x_backward", f"gradview::{_op}_dx_backward", reason=BACKWARD_KERNEL)
    shape_rule(f"gradview::{_op}_x_backward")(grads_like(0, 1))
    shape_rule(f"gradview::{_op}_dx_backward")(grads_like(0))
    formula(f"aten::{_op}.x")(calls_backward(f"gradview::{_op}_x_backward", (0, 1)))
    formula(f"aten::{_op}.dx")(calls_backward(f"gradview::{_op}_dx_backward", (0,)))


def _by_overload(x_kernel: object, dx_kernel: object):  # a shape rule factory
    """The x form's kernel when input 1 is a tensor, else the dx form's."""
    x_rule, dx_rule = by_kernel(x_kernel), by_kernel(dx_kernel)  # type: ignore[arg-type]

    def rule(args: NodeArgs) -> RuleResult:
        return x_rule(args) if args.tensor(1) is not None else dx_rule(args)

    return rule


shape_rule("aten::trapezoid", "aten::trapz")(_by_overload(kernels.trapezoid_x, kernels.trapezoid_dx))
shape_rule("aten::cumulative_trapezoid")(_by_overload(kernels.cumulative_trapezoid_x, kernels.cumulative_trapezoid_dx))

# -- gradient -------------------------------------------------------------------------------------
_GRADIENT = {  # overload: (its spacing and dim arguments, forward kernel, backward kernel)
    "scalarint": ("Scalar? spacing, int? dim", kernels.gradient, kernels.gradient_backward),
    "scalararray": ("Scalar spacing, int[] dim", kernels.gradient, kernels.gradient_backward),
    "array": ("int[] dim", kernels.gradient_array, kernels.gradient_array_backward),
    "scalarrayint": ("Scalar[] spacing, int? dim", kernels.gradient, kernels.gradient_backward),
    "scalarrayarray": ("Scalar[] spacing, int[] dim", kernels.gradient, kernels.gradient_backward),
    "tensorarrayint": ("Tensor[] spacing, int? dim", kernels.gradient, kernels.gradient_backward),
    "tensorarray": ("Tensor[] spacing, int[] dim", kernels.gradient, kernels.gradient_backward),
}


def _gradient_formula(backward: str):  # a formula factory
    def formula_(emit: Emitter, node: Node, saved: dict[str, Value], grads: list[Value]) -> list[Value | None]:
        self_ = node.inputs()[0]
        spacing = node.inputs()[1]
        if spacing.node.kind() == "prim::ListConstruct" and any(needs_grad(c) for c in spacing.node.inputs()):
            fail(node, "gradview does not differentiate torch.gradient with respect to its coordinate tensors "
                       "(spacing); only with respect to the input")
        if not needs_grad(self_):
            return none_grads(node)
        pieces = grads[0]
        if not isinstance(pieces.type(), ListType):
            pieces = emit.op("prim::unchecked_cast", pieces, types=[ListType(OptionalType(TensorType()))])
        return none_grads(node, emit.op(backward, pieces, *node.inputs()))

    return formula_


def _gradient_backward_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(1)
    return None if self is None else [fresh(self.scalar_type, self.sizes, self.device)]


_FORWARD_RULES = {f"aten::gradient.{name}": by_kernel(spec[1]) for name, spec in _GRADIENT.items()}


@shape_rule("aten::gradient")
def _gradient_shapes(args: NodeArgs) -> RuleResult:
    resolved = args.node.maybe_schema()
    rule = _FORWARD_RULES.get(resolved.qualified_name) if resolved is not None else None
    return None if rule is None else rule(args)


for _overload, (_arguments, _forward, _backward) in _GRADIENT.items():
    kernel(f"aten::gradient.{_overload}")(_forward)
    _name = f"gradview::gradient_{_overload}_backward"
    schema(f"{_name}(Tensor?[] grads, Tensor self, {_arguments}, int edge_order) -> Tensor")
    kernel(_name)(_backward)
    no_gradient(_name, reason=BACKWARD_KERNEL)
    shape_rule(_name)(_gradient_backward_shapes)
    formula(f"aten::gradient.{_overload}")(_gradient_formula(_name))
