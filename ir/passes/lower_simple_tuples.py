"""LowerSimpleTuples: read tuple elements straight from where the tuple was built.

TorchScript code that builds a tuple and then takes it apart again, as in
``t = (a, b); x, y = t`` or ``t[1]``, produces a ``prim::TupleConstruct``
followed by ``prim::TupleUnpack`` or ``prim::TupleIndex``. When both ends are
visible in the graph, the detour through the tuple is pointless: every
element read from the tuple is simply the value that went in. This pass
rewires the readers to those values:

* ``prim::TupleUnpack(t)`` of a TupleConstruct: each output becomes the
  matching input of the construct;
* ``prim::TupleIndex(t, i)`` with a constant ``i`` (negative counts from the
  end, as in Python): the output becomes input ``i`` of the construct;
* ``prim::TupleSlice[beg=b, end=e](t)``: the slice becomes a smaller
  TupleConstruct of the inputs ``b`` to ``e - 1`` (a later unpack of it is
  then forwarded too).

The readers it rewired are deleted, and so are the tuple constructions
(and index constants) that nothing uses any more because of it. Other dead
code is left for dead code elimination.

The executor runs it before optimizing a graph and again in
runNondiffOptimization: fewer tuples mean fewer container values for alias
analysis and more chances for fusion and constant propagation.

Before::

    %t : (Tensor, Tensor) = prim::TupleConstruct(%a, %b)
    %x : Tensor, %y : Tensor = prim::TupleUnpack(%t)
    %r : Tensor = aten::mul(%x, %y)

After::

    %r : Tensor = aten::mul(%a, %b)
"""

from __future__ import annotations

from ..constants import constant_value
from ..graph import Block, Graph
from ..node import Node
from .rewrite_helpers import take_over

__all__ = ["lower_simple_tuples"]

_READERS = frozenset({"prim::TupleUnpack", "prim::TupleIndex", "prim::TupleSlice"})


def lower_simple_tuples(graph: Graph) -> bool:
    """Forward tuple elements past construct/unpack pairs; True if anything changed."""
    changed = False
    emptied: list[Node] = []
    work: list[Block] = [graph.block]
    while work:
        block = work.pop()
        # block.nodes() tolerates destroying the node it just yielded.
        for node in block.nodes():
            work.extend(node.blocks())
            if node.kind() in _READERS and node.inputs():
                changed |= _forward(graph, node, emptied)
    _drop_unused(emptied)
    return changed


def _forward(graph: Graph, reader: Node, emptied: list[Node]) -> bool:
    """Rewire one tuple reader; its inputs' nodes become candidates for removal."""
    construct = reader.inputs()[0].node
    if construct.kind() != "prim::TupleConstruct":
        return False
    elements = construct.inputs()
    kind = reader.kind()
    if kind == "prim::TupleUnpack":
        if len(reader.outputs()) != len(elements):
            return False
        for output, element in zip(reader.outputs(), elements, strict=True):
            output.replace_all_uses_with(element)
    elif kind == "prim::TupleIndex":
        index = constant_value(reader.inputs()[1]) if len(reader.inputs()) == 2 else None
        if not isinstance(index, int) or isinstance(index, bool):
            return False
        if index < 0:
            index += len(elements)
        if not 0 <= index < len(elements):
            return False
        reader.output().replace_all_uses_with(elements[index])
    else:
        bounds = _slice_bounds(reader, len(elements))
        if bounds is None:
            return False
        with graph.insert_point(reader):
            smaller = graph.insert_node(graph.create("prim::TupleConstruct", elements[bounds[0]:bounds[1]]))
        smaller.source_location = reader.source_location
        take_over(reader.output(), smaller.output())
        emptied.append(smaller)
    emptied.extend(value.node for value in reader.inputs())
    reader.destroy()
    return True


def _slice_bounds(reader: Node, length: int) -> tuple[int, int] | None:
    """``(beg, end)`` of a TupleSlice, from its attributes or two constant inputs."""
    if reader.has_attribute("beg") and reader.has_attribute("end") and len(reader.inputs()) == 1:
        beg, end = reader.attribute("beg"), reader.attribute("end")
    elif len(reader.inputs()) == 3:
        beg, end = constant_value(reader.inputs()[1]), constant_value(reader.inputs()[2])
    else:
        return None
    if not all(isinstance(b, int) and not isinstance(b, bool) for b in (beg, end)):
        return None
    if not 0 <= beg <= end <= length:
        return None
    return beg, end


def _drop_unused(candidates: list[Node]) -> None:
    """Delete the tuple constructions and constants this pass left without uses.

    Removing a construct can leave the constructs it was built from unused
    (nested tuples), so those are looked at too.
    """
    while candidates:
        node = candidates.pop()
        if not node.is_alive or node.has_uses():
            continue
        if node.kind() not in ("prim::TupleConstruct", "prim::Constant"):
            continue
        inputs = node.inputs()
        node.destroy()
        candidates.extend(value.node for value in inputs)
