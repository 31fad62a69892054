"""Buffer reuse: an elementwise op may write its result into an input that dies there.

In ``tanh(matmul(x, w) + b)`` the sum needs a fresh array only because
NumPy does not know that ``matmul``'s result is never read again; NumPy's
own temporary elision does this for expressions, and TorchScript's static
runtime plans memory for the same reason. The code generator asks
:class:`BufferReuse`, node by node in program order, which input of an
elementwise ufunc call it may pass as ``out=``.

An input ``v`` qualifies when, all in one block,

* ``v`` was made by a direct ufunc or matmul call (so ``v`` owns its buffer:
  not a graph input, not a view, not something a kernel may have passed
  through);
* every other use of ``v`` reads only its shape (``aten::size``,
  ``aten::numel``, ``aten::dim``: the result has the same shape) or is an
  earlier direct ufunc/matmul call (those read ``v`` and keep nothing);
  a use by a list, a tuple, a return or any other op keeps ``v`` reachable,
  so it never qualifies.

The caller still checks at run time that ``v`` is an array (a matmul of two
vectors gives a scalar) and, for binary ops, that broadcasting does not grow
the result beyond ``v``'s shape.
"""

from __future__ import annotations

from gradview.ir import Node, Value

__all__ = ["BufferReuse"]

SHAPE_ONLY_KINDS = frozenset({"aten::size", "aten::numel", "aten::dim"})


class BufferReuse:
    """Tracks, while a graph's code is generated, which values own their buffer."""

    def __init__(self) -> None:
        self._owning: set[Value] = set()
        self._readers: set[Node] = set()

    def record_direct_call(self, node: Node) -> None:
        """``node`` was emitted as a direct ufunc or matmul call (no run-time
        guard): it reads its inputs, keeps nothing, and its output is a new
        array it owns."""
        self._readers.add(node)
        if len(node.outputs()) == 1:
            self._owning.add(node.output())

    def reusable_input(self, node: Node, positions: tuple[int, ...]) -> int | None:
        """The index (into ``node.inputs()``) of an input ``node`` may overwrite, or None."""
        inputs = node.inputs()
        for position in positions:
            value = inputs[position]
            if value in self._owning and self._dies_here(value, node):
                return position
        return None

    def _dies_here(self, value: Value, node: Node) -> bool:
        block = node.owning_block
        if value.node.owning_block is not block:
            return False
        for use in value.uses:
            user = use.user
            if user is node:
                continue
            if user.owning_block is not block:
                return False
            if user.kind() in SHAPE_ONLY_KINDS:
                continue
            if user in self._readers and user.topo_position < node.topo_position:
                continue
            return False
        return True
