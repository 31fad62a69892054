"""Does a recorded graph draw random values? The op library says which ops draw,
and when (:mod:`gradview.ops.random_draws`); this reads a trace's records for it.

gradview's draws (dropout masks, bernoulli, normal, rand...) come from its own
seeded generator (kernels/dropout.py), the same on every run of a step, never
PyTorch's numbers: the viewer says so where a graph draws.
"""

from __future__ import annotations

from typing import Any

from gradview.ir.constants import NOT_CONSTANT
from gradview.ops import draws_random_values, may_draw_random_values

from .trace_records import BlockRecord, walk_records

__all__ = ["graph_draws_random_values", "may_draw_random_values"]


def _constant(text: str | None) -> Any:
    """A constant's printed value (``0.5``, ``0``, ``None``) as Python's."""
    if text is None or text == "None":
        return None
    for parse in (int, float):
        try:
            return parse(text)
        except ValueError:
            pass
    return {"True": True, "False": False}.get(text, text)


class _RecordInputs:
    """A node record's inputs as the op library's ConstantInputs."""

    def __init__(self, inputs: tuple[int, ...], constants: dict[int, Any], types: dict[int, str]) -> None:
        self._inputs, self._constants, self._types = inputs, constants, types

    def __len__(self) -> int:
        return len(self._inputs)

    def constant(self, position: int) -> Any:
        return self._constants.get(self._inputs[position], NOT_CONSTANT)

    def type_text(self, position: int) -> str:
        return self._types.get(self._inputs[position], "")


def graph_draws_random_values(block: BlockRecord) -> bool:
    """Whether a node of ``block`` (nested blocks and subgraphs included) draws random values."""
    constants: dict[int, Any] = {}
    types: dict[int, str] = {}
    for node in walk_records(block):
        for value in node.outputs:
            types[value.id] = value.type
        if node.kind == "prim::Constant" and node.outputs:
            constants[node.outputs[0].id] = _constant(dict(node.attrs).get("value"))
        elif may_draw_random_values(node.kind) and draws_random_values(
            node.kind, _RecordInputs(node.inputs, constants, types)
        ):
            return True
    return False
