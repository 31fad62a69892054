"""Which nodes of a graph gradview cannot run, each with the reason, before running it.

The interpreter stops at the first node it has no kernel for; a user opening
a model wants every such node at once, so that one op gradview cannot run
does not hide the others. ``cannot_run`` walks the graph (blocks and
subgraphs included) and names each node with the same reason the interpreter
would give: no kernel, an op gradview declines to run (``refuse`` in the op
library: complex results...), a call of a Python function, an operator the IR does not know, or a
prim that only exists inside PyTorch.
"""

from __future__ import annotations

from dataclasses import dataclass

from gradview.ir import Graph, Node, node_summary
from gradview.ir.operators import is_known_op
from gradview.ir.passes.op_eval import kernel_key, node_kernel
from gradview.ir.python_op import python_function_name
from gradview.ops import refusal_for

from .interpreter import STRUCTURAL_HANDLERS
from .prims import STRUCTURAL_PRIMS

__all__ = ["CannotRun", "cannot_run", "describe_cannot_run"]


@dataclass(frozen=True, slots=True)
class CannotRun:
    """A node gradview cannot run: the node as printed, its op, and why."""

    node: str  # node_summary: ``%b : Tensor = aten::fft_rfft(%a)``
    op: str  # the overload or kind: ``aten::fft_rfft``
    reason: str

    def __str__(self) -> str:
        return f"{self.op} ({self.reason}): `{self.node}`"


def _reason(node: Node) -> tuple[str, str] | None:
    kind = node.kind()
    if kind in STRUCTURAL_HANDLERS:
        return None
    python_name = python_function_name(node)
    if python_name is not None:
        return kind, f"it calls the Python function {python_name}, which only PyTorch can run"
    if kind in STRUCTURAL_PRIMS:
        return kind, STRUCTURAL_PRIMS[kind]
    if not is_known_op(kind):
        return kind, "an operator gradview's IR does not know"
    if not kind.startswith(("aten::", "gradview::")):
        return None  # the interpreter's own prims (lists, tuples...)
    key = kernel_key(node)
    if key is None:
        return kind, f"no overload of {kind} accepts these {len(node.inputs())} inputs"
    if node_kernel(node) is not None:
        return None
    refusal = refusal_for(key)
    return key, (f"gradview does not run it: {refusal}" if refusal else "gradview has no kernel for it")


def cannot_run(graph: Graph) -> list[CannotRun]:
    """Every node of ``graph`` (nested blocks and subgraphs too) that gradview cannot
    run, in order; empty when all of them can."""
    found: list[CannotRun] = []
    pending = [graph]
    while pending:
        current = pending.pop()
        for node in current.all_nodes():
            why = _reason(node)
            if why is not None:
                found.append(CannotRun(node_summary(node), why[0], why[1]))
            for name in node.attribute_names():
                if node.attribute_kind(name) == "g":
                    pending.append(node.g(name))
    return found


def describe_cannot_run(found: list[CannotRun], shown: int = 3) -> str:
    """``2 nodes cannot run: aten::x (why): `...`; ...`` for a note of one line."""
    ops = list(dict.fromkeys(f"{item.op} ({item.reason})" for item in found))
    count = f"{len(found)} node{'s' if len(found) != 1 else ''} cannot run"
    more = f"; and {len(ops) - shown} more op{'s' if len(ops) - shown != 1 else ''}" if len(ops) > shown else ""
    return f"{count}: " + "; ".join(ops[:shown]) + more
