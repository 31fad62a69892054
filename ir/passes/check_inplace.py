"""CheckInplace: refuse graphs that change, in place, an input autograd must differentiate.

An in-place operator (``x.add_(y)``; its schema marks the argument it writes
with ``(a!)``) overwrites its operand. If that operand is a graph input that
requires grad, the value autograd needs to compute gradients is gone, and
PyTorch refuses such code too ("a leaf Variable that requires grad is being
used in an in-place operation"). This pass checks every node, nested ones
included, and raises :class:`InplaceError` naming the first node that writes
to such an input, directly or through a view of it (``aten::t``,
``aten::view``... whose schema says the result shares the input's memory).
It only looks: the graph is never changed.

An input "requires grad" when its type says so or says nothing
(:meth:`Value.requires_grad`): ``Float(3, requires_grad=0)`` may be written
in place, plain ``Tensor`` may not. Like TorchScript's pass, it also
rejects a ``prim::PythonOp`` flagged ``inplace``.

The executor runs it last in runOptimization, so a graph that would give
wrong gradients is rejected before it runs.

Rejected::

    graph(%x : Tensor, %y : Tensor):
      %one : int = prim::Constant[value=1]()
      %z : Tensor = aten::add_(%x, %y, %one)   # writes the input %x
      return (%z)

Accepted: the same graph with ``%x : Float(3, requires_grad=0)``, or with
``aten::add_`` applied to a value computed inside the graph.
"""

from __future__ import annotations

from ..graph import Graph
from ..node import Node, Value
from ..operators import schemas_for
from ..printer import node_summary
from ..types import TensorType

__all__ = ["check_inplace", "InplaceError"]



class InplaceError(ValueError):
    """An in-place operation writes to a graph input that requires grad."""

    def __init__(self, message: str, node: Node) -> None:
        super().__init__(message)
        self.node = node


def check_inplace(graph: Graph) -> bool:
    """Raise InplaceError if an in-place op writes to an input requiring grad; else return False."""
    guarded = {v for v in graph.inputs() if isinstance(v.type(), TensorType) and v.requires_grad()}
    for node in graph.all_nodes():
        if node.kind() == "prim::PythonOp" and node.has_attribute("inplace") and node.attribute("inplace"):
            raise InplaceError(f"in-place Python operator `{node_summary(node)}` is not supported in the JIT", node)
        for index in _written_inputs(node):
            source = _memory_source(node.inputs()[index])
            if source in guarded:
                raise InplaceError(
                    f"in-place operation `{node_summary(node)}` writes to graph input "
                    f"%{source.debug_name()}, which requires grad; autograd cannot differentiate "
                    "through that (use the out-of-place operator)",
                    node,
                )
    return False


def _written_inputs(node: Node) -> list[int]:
    """Positions of the inputs ``node`` writes to, according to its schema."""
    count = len(node.inputs())
    schema = node.maybe_schema()
    if schema is not None:
        return [i for i, arg in enumerate(schema.arguments) if arg.is_write and i < count]
    # No overload matched the input types (an unusual alpha, say): if every
    # overload of the operator writes its first argument, so does this node.
    overloads = schemas_for(node.kind())
    if count and overloads and all(s.arguments and s.arguments[0].is_write for s in overloads):
        return [0]
    return []


def _memory_source(value: Value) -> Value:
    """Follow views (results that share an argument's memory) back to where the memory came from."""
    while True:
        node = value.node
        schema = node.maybe_schema()
        if schema is None or value.offset >= len(schema.returns):
            return value
        alias = schema.returns[value.offset].alias
        if alias is None or alias == "*":
            return value
        name = alias.rstrip("!")
        for arg, source in zip(schema.arguments, node.inputs(), strict=False):
            if arg.alias is not None and arg.alias.split("->")[0].strip().rstrip("!") == name:
                value = source
                break
        else:
            return value
