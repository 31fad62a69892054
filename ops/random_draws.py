"""When a node draws random values: the op library's fact, read by the runtime,
the viewer (through the runtime) and the op tests.

An op family declares its random kinds with :func:`gradview.ops.registry.random`:
``random("aten::rand")`` draws on every run; ``random("aten::dropout",
when=unless_constant_zero(1, 2))`` draws unless ``p`` or ``train`` is a constant
0 / False. A test reads the node's constant inputs through :class:`ConstantInputs`,
so the same fact answers for an IR node (:func:`node_draws_random_values`) and
for a trace's records (the runtime's adapter).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from gradview.ir import Node
from gradview.ir.constants import NOT_CONSTANT, constant_value

__all__ = [
    "ConstantInputs", "DrawTest", "NOT_CONSTANT", "draws_random_values", "is_constant_zero", "may_draw_random_values",
    "node_draws_random_values", "unless_constant_zero",
]


class ConstantInputs(Protocol):
    """A node's inputs as far as the graph knows them before it runs."""

    def __len__(self) -> int: ...

    def constant(self, position: int) -> Any:
        """The input's constant value (a bool, number, None...), or NOT_CONSTANT."""
        ...

    def type_text(self, position: int) -> str:
        """The input's type as the IR prints it (``float``, ``Tensor``)."""
        ...


DrawTest = Callable[[ConstantInputs], bool]


def is_constant_zero(value: Any) -> bool:
    """A constant False, 0 or 0.0 (not a run-time value, not None)."""
    return value is not NOT_CONSTANT and isinstance(value, (bool, int, float)) and value == 0


def unless_constant_zero(*positions: int) -> DrawTest:
    """Draws unless one of the inputs at ``positions`` is a constant 0 / False
    (dropout's ``p`` or ``train``); a node with fewer inputs draws nothing."""

    def draws(inputs: ConstantInputs) -> bool:
        return len(inputs) > max(positions) and not any(is_constant_zero(inputs.constant(p)) for p in positions)

    return draws


def _registry() -> dict[str, DrawTest | None]:
    from .registry import RANDOM

    return RANDOM


def may_draw_random_values(kind: str) -> bool:
    """Whether nodes of ``kind`` draw random values for some inputs."""
    return kind in _registry()


def draws_random_values(kind: str, inputs: ConstantInputs) -> bool:
    """Whether a node of ``kind`` with these inputs draws random values when it runs."""
    table = _registry()
    if kind not in table:
        return False
    test = table[kind]
    return test is None or test(inputs)


class _NodeInputs:
    """An IR node's inputs as :class:`ConstantInputs`."""

    def __init__(self, node: Node) -> None:
        self._inputs = node.inputs()

    def __len__(self) -> int:
        return len(self._inputs)

    def constant(self, position: int) -> Any:
        return constant_value(self._inputs[position])

    def type_text(self, position: int) -> str:
        return str(self._inputs[position].type())


def node_draws_random_values(node: Node) -> bool:
    """Whether the IR node draws random values when it runs."""
    return draws_random_values(node.kind(), _NodeInputs(node))
