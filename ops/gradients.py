"""How a gradient formula is written: the Emitter it builds IR with, and the Formula pair.

A formula is a forward/backward pair for one operator overload, the way
TorchScript's symbolic scripts pair a forward with a backward closure:

* ``forward(emit, node)`` runs with the insert point just after ``node`` in
  the forward graph. It may add nodes there (usually sizes needed to undo
  broadcasting) and returns the values it wants to keep, by name. Anything
  the backward uses from the forward graph, the node's own inputs and
  outputs included, becomes a captured value of the Gradient.
* ``backward(emit, node, saved, grads)`` runs inside the ``prim::GradOf``
  block: ``grads`` has one gradient per output of the node (an
  ``AutogradZero`` value where none flows), and it returns one gradient per
  input of the node, None for inputs that get none (sizes, flags, dims).

Keeping the backward's uses small keeps the captures small: a formula that
needs only a size captures the size, not the tensor.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gradview.ir import Graph, Node, Value

__all__ = ["Emitter", "Formula", "Forward", "Backward", "Supports", "BACKWARD_KERNEL"]


class Emitter:
    """Builds IR at the graph's current insert point, one call per node."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph

    def op(self, kind: str, *inputs: Any, types: Sequence[Any] | None = None) -> Any:
        """Insert ``kind(*inputs)``; Python values become constants. Returns its output(s)."""
        return self.graph.insert(kind, list(inputs), output_types=types)

    def const(self, value: Any) -> Value:
        return self.graph.insert_constant(value)

    def size(self, tensor: Value) -> Value:
        return self.op("aten::size", tensor)

    def size_if_not_equal(self, tensor: Value, result: Value) -> Value:
        """``tensor``'s size if broadcasting changed it in ``result``, else None (at run time)."""
        return self.op("aten::_size_if_not_equal", self.size(tensor), self.size(result))

    def sum_to(self, grad: Value, size: Value) -> Value:
        """Undo broadcasting: sum ``grad`` down to ``size`` (a no-op when size is None)."""
        return self.op("aten::_grad_sum_to_size", grad, size)


# The no-gradient reason of the backward kernels formulas emit (tanh_backward, ...):
# PyTorch differentiates most of them again (double backward); gradview does not yet,
# and says so, naming the node, when a backward pass reaches one.
BACKWARD_KERNEL = (
    "a backward kernel: gradview does not differentiate it again (no double backward through it yet)"
)

Forward = Callable[[Emitter, Node], dict[str, Value]]
Backward = Callable[[Emitter, Node, dict[str, Value], list[Value]], list[Value | None]]
Supports = Callable[[Node], bool]


@dataclass(frozen=True)
class Formula:
    """A forward/backward pair. ``supports(node)`` says whether the node belongs
    in a differentiable graph: False when the formula cannot handle it (a
    reduction over dims known only at run time) or when no gradient flows
    through it anyway (``zeros_like``, a list of sizes), as TorchScript's
    isDifferentiable would say."""

    name: str
    forward: Forward | None
    backward: Backward
    supports: Supports | None = None

    def can_differentiate(self, node: Node) -> bool:
        return self.supports is None or self.supports(node)

    def run_forward(self, emit: Emitter, node: Node) -> dict[str, Value]:
        return self.forward(emit, node) if self.forward is not None else {}
