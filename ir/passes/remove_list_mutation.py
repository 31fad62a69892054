"""RemoveListMutation: fold list edits that follow a list's creation into the creation.

``l = [a]; l.append(b)`` builds a list and then changes it. As long as nobody
can look at the list between the two steps, the program cannot tell the
difference from building ``[a, b]`` in one go, and a list without mutation
is much easier for the other passes: alias analysis sees no write, and the
peephole pass and constant propagation can read the elements straight from
the ``prim::ListConstruct``. The edits folded are

* ``aten::append(l, x)``: ``x`` becomes the construct's last input;
* ``aten::insert(l, i, x)`` with a constant ``i``: ``x`` is inserted at ``i``
  (clamped to the list, as Python's ``list.insert`` does);
* ``aten::_set_item(l, i, x)`` with a constant ``i`` inside the list
  (negative counts from the end): ``x`` replaces input ``i``.

The list must come straight from a ``prim::ListConstruct`` in the same block
as the edit. Because ``x`` is often computed after the list was built, the
construct has to move down to just before the edit; alias analysis only
allows that when no node in between uses the list, reads or writes memory
it may share, or needs the nodes that move. If the move is not allowed,
nothing changes. The edit node is removed, and its output (the same list)
is replaced by the construct's output.

The executor runs it after unrolling loops, which turns loops that fill a
list into straight runs of appends.

Before::

    %l : Tensor[] = prim::ListConstruct(%a)
    %b : Tensor = aten::relu(%x)
    %1 : Tensor[] = aten::append(%l, %b)
    %r : Tensor = aten::cat(%l, %zero)

After::

    %b : Tensor = aten::relu(%x)
    %l : Tensor[] = prim::ListConstruct(%a, %b)
    %r : Tensor = aten::cat(%l, %zero)
"""

from __future__ import annotations

from typing import Literal

from ..constants import constant_value
from ..graph import Block, Graph
from ..node import Node, Value
from .alias_db import AliasDb

__all__ = ["remove_list_mutation"]

# What folding one edit does to the construct: add, insert at or replace at a position.
Plan = tuple[Literal["add", "insert", "replace"], int, Value]


def remove_list_mutation(graph: Graph) -> bool:
    """Fold appends, inserts and constant-index stores into their ListConstruct.

    Returns True if any list edit was removed.
    """
    return _block(graph.block, AliasDb(graph))


def _block(block: Block, db: AliasDb) -> bool:
    changed = False
    # block.nodes() tolerates destroying the node it just yielded.
    for node in block.nodes():
        for sub in node.blocks():
            changed |= _block(sub, db)
        plan = _plan(node)
        if plan is None:
            continue
        the_list = node.inputs()[0]
        construct = the_list.node
        if not db.move_before_topologically_valid(construct, node):
            continue
        action, position, element = plan
        if action == "add":
            construct.add_input(element)
        elif action == "insert":
            construct.insert_input(position, element)
        else:
            construct.replace_input(position, element)
        db.refresh(construct)  # the construct now also holds the new element
        for output in node.outputs():
            output.replace_all_uses_with(the_list)
        node.destroy()
        changed = True
    return changed


def _plan(node: Node) -> Plan | None:
    """How ``node`` changes the ListConstruct it edits, or None if it cannot be folded."""
    kind, inputs = node.kind(), node.inputs()
    if kind not in ("aten::append", "aten::insert", "aten::_set_item") or not inputs:
        return None
    construct = inputs[0].node
    if construct.kind() != "prim::ListConstruct":
        return None
    size = len(construct.inputs())
    if kind == "aten::append":
        return ("add", size, inputs[1]) if len(inputs) == 2 else None
    if len(inputs) != 3:
        return None
    position = constant_value(inputs[1])
    if not isinstance(position, int) or isinstance(position, bool):
        return None
    if kind == "aten::insert":
        # list.insert clamps: -100 means the front, 100 the end.
        position = max(position + size, 0) if position < 0 else min(position, size)
        return ("insert", position, inputs[2])
    if position < 0:
        position += size
    if not 0 <= position < size:
        return None  # an out-of-range store raises at run time; keep it
    return ("replace", position, inputs[2])
