"""Ops with no gradient at all, and PyTorch's reason.

PyTorch's autograd gives these ops no derivative: their floating-point results
still require grad, but a backward pass that reaches them raises "derivative
for ... is not implemented". gradview says the same, naming the node.
"""

from __future__ import annotations

from .registry import no_gradient

_NOT_IMPLEMENTED = "PyTorch implements no derivative for it (its autograd raises too)"

no_gradient("aten::floor_divide", "aten::floor_divide.Scalar", reason=f"floor_divide: {_NOT_IMPLEMENTED}")
