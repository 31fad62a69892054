"""Ops with no gradient at all, and PyTorch's reason.

PyTorch's autograd gives these ops no derivative: their floating-point results
still require grad, but a backward pass that reaches them raises "derivative
for ... is not implemented". gradview says the same, naming the node.
"""

from __future__ import annotations

from gradview.ops.registry import no_gradient

_NOT_IMPLEMENTED = "PyTorch implements no derivative for it (its autograd raises too)"

no_gradient("aten::floor_divide", "aten::floor_divide.Scalar", reason=f"floor_divide: {_NOT_IMPLEMENTED}")

# -- results that cannot require grad ---------------------------------------------------------
# PyTorch marks these outputs not differentiable (derivatives.yaml's
# output_differentiability: [False], or integer/bool results): they never
# require grad, whatever their inputs.
_OVERLOADS = ("Tensor", "Scalar")
no_gradient(
    *(f"aten::{op}.{o}" for op in ("eq", "ne", "lt", "le", "gt", "ge") for o in _OVERLOADS),
    reason="a comparison: its result is bool, which cannot require grad "
    "(PyTorch's result does not either)",
)
no_gradient(
    *(f"aten::{op}.{o}" for op in ("__and__", "__or__", "__xor__") for o in _OVERLOADS),
    reason="a logical/bitwise op: it takes and returns bool or integer tensors, "
    "which cannot require grad",
)
no_gradient(
    "aten::where",
    reason="where(condition) returns the indices of the true elements (integers), "
    "which carry no gradient",
)
no_gradient(
    "aten::empty_like", "aten::rand_like", "aten::randn_like", "aten::full_like",
    reason="its values do not depend on the input's values (only its shape and dtype), "
    "so PyTorch's result does not require grad",
)

# -- backward kernels -------------------------------------------------------------------------
# The kernels gradient formulas emit. PyTorch differentiates most of them
# again (double backward); gradview does not yet, and says so when a backward
# pass reaches one (a gradient of a gradient computed through the executor).
_BACKWARD_KERNEL = (
    "a backward kernel: gradview does not differentiate it again (no double backward through it yet)"
)
no_gradient(
    "aten::tanh_backward", "aten::sigmoid_backward", "aten::threshold_backward",
    "aten::gelu_backward",
    "aten::leaky_relu_backward", "aten::hardtanh_backward", "aten::hardshrink_backward",
    "aten::hardswish_backward", "aten::hardsigmoid_backward", "aten::silu_backward",
    "aten::softplus_backward", "aten::elu_backward", "aten::logit_backward",
    reason=_BACKWARD_KERNEL,
)
