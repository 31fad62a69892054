"""Ops with no gradient at all, and PyTorch's reason.

PyTorch's autograd gives these ops no derivative: their floating-point results
still require grad, but a backward pass that reaches them raises "derivative
for ... is not implemented". gradview says the same, naming the node.
"""

from __future__ import annotations

__all__: list[str] = []  # every entry moved into its op family in gradview.ops
