"""EliminateDeadCode: delete computations whose results nobody uses.

A node is *live* when the graph's outputs depend on it, or when it does
something besides computing outputs (prints, raises, writes into a tensor or
list). Everything else is dead and removed. Walking backwards from the
outputs, each live node makes its inputs live; control flow is trimmed too:
an output of a ``prim::If`` (or of autodiff's ``prim::GradOf``) that nobody
reads disappears from its blocks,
and a loop-carried value that neither the loop body nor the code after the
loop needs stops being carried.

The executor runs it after nearly every other pass, because passes leave
leftovers behind (a constant nobody uses after folding, the old copy of a
node after CSE). Autodiff passes a callback to learn which values survived,
so it can forget the gradients of values that no longer exist.

Before::

    %a = aten::mul(%x, %x)
    %b = aten::relu(%x)      # never used
    return (%a)

After::

    %a = aten::mul(%x, %x)
    return (%a)
"""

from __future__ import annotations

from collections.abc import Callable

from ..graph import Block, Graph
from ..node import Node, Value
from .alias_db import AliasDb, has_effects

__all__ = ["eliminate_dead_code"]

# Nodes whose blocks return one value per node output: an output nobody reads
# is dropped from the node and from every block (prim::GradOf too, so that a
# gradient nobody needs is neither computed nor captured).
_BRANCHING = frozenset({"prim::If", "prim::GradOf"})


def eliminate_dead_code(
    graph: Graph | Block,
    live_values_callback: Callable[[set[Value]], None] | None = None,
    alias_db: AliasDb | None = None,
) -> bool:
    """Remove dead nodes (and dead If/Loop outputs) from ``graph`` or one block.

    ``live_values_callback`` receives the set of values found live, before
    anything is deleted (autodiff uses it to prune its gradient map).
    Returns True if anything was removed.
    """
    block = graph.block if isinstance(graph, Graph) else graph
    db = alias_db
    live: set[Value] = set()
    live_nodes: set[Node] = set()
    _mark_block(block, db, live, live_nodes, set(range(len(block.outputs()))), block)
    if live_values_callback is not None:
        live_values_callback(live)
    return _sweep(block, live, live_nodes)


def _is_essential(node: Node, db: AliasDb | None) -> bool:
    """Must run even if unused: side effects or writes into memory."""
    if db is None:
        return has_effects(node)
    return db.has_side_effects(node) or db.is_mutating(node)


def _used_outside(value: Value, root: Block) -> bool:
    """Is ``value`` used by a node that is not inside ``root`` (e.g. autodiff's
    detached reverse block reading forward values)? Such uses keep it alive."""
    for use in value.uses:
        block: Block | None = use.user.owning_block
        while block is not None and block is not root:
            owner = block.owning_node
            block = owner.owning_block if owner is not None else None
        if block is None:
            return True
    return False


def _mark_block(
    block: Block, db: AliasDb | None, live: set[Value], live_nodes: set[Node], live_outputs: set[int], root: Block
) -> None:
    """Mark, walking backwards, every node of ``block`` the live outputs need."""
    outputs = block.outputs()
    for index in live_outputs:
        live.add(outputs[index])
    for node in block.reverse_nodes():
        if not (
            _is_essential(node, db)
            or any(v in live for v in node.outputs())
            or any(_used_outside(v, root) for v in node.outputs())
        ):
            continue
        live_nodes.add(node)
        if node.kind() == "prim::Loop":
            _mark_loop(node, db, live, live_nodes, root)
            continue
        live.update(node.inputs())
        if node.kind() in _BRANCHING:
            wanted = {i for i, v in enumerate(node.outputs()) if v in live}
            for sub in node.blocks():
                _mark_block(sub, db, live, live_nodes, wanted, root)
        else:
            for sub in node.blocks():
                _mark_block(sub, db, live, live_nodes, set(range(len(sub.outputs()))), root)


def _mark_loop(node: Node, db: AliasDb | None, live: set[Value], live_nodes: set[Node], root: Block) -> None:
    """A carried value is live if the loop's result or the body itself needs it.

    The body may need carried value k only in the next iteration, so repeat
    until no new carried value becomes live.
    """
    body = node.blocks()[0]
    carried_params = body.inputs()[1:]
    wanted = {i for i, v in enumerate(node.outputs()) if v in live}
    while True:
        _mark_block(body, db, live, live_nodes, {0} | {i + 1 for i in wanted}, root)
        more = {i for i, p in enumerate(carried_params) if p in live} - wanted
        if not more:
            break
        wanted |= more
    live.update(node.inputs()[:2])
    live.update(node.inputs()[2 + i] for i in wanted)
    live.add(body.inputs()[0])


def _sweep(block: Block, live: set[Value], live_nodes: set[Node]) -> bool:
    changed = False
    for node in list(block.reverse_nodes()):
        if node not in live_nodes:
            # Walking backwards, the users of a dead node are gone already.
            node.destroy()
            changed = True
            continue
        dead_params: list[int] = []
        if node.kind() in _BRANCHING:
            changed |= _trim_if(node, live)
        elif node.kind() == "prim::Loop":
            dead_params = _trim_loop(node, live)
            changed |= bool(dead_params)
        for sub in node.blocks():
            changed |= _sweep(sub, live, live_nodes)
        # A dead carried parameter loses its (dead) users in the sweep above.
        for index in dead_params:
            node.blocks()[0].erase_input(index)
    return changed


def _trim_if(node: Node, live: set[Value]) -> bool:
    changed = False
    for index in range(len(node.outputs()) - 1, -1, -1):
        if node.outputs()[index] not in live:
            for sub in node.blocks():
                sub.erase_output(index)
            node.erase_output(index)
            changed = True
    return changed


def _trim_loop(node: Node, live: set[Value]) -> list[int]:
    """Stop carrying dead values; returns the body parameters to erase after the body sweep."""
    body = node.blocks()[0]
    dead_params = []
    for index in range(len(node.outputs()) - 1, -1, -1):
        output, param = node.outputs()[index], body.inputs()[index + 1]
        if output in live or param in live:
            continue
        body.erase_output(index + 1)
        node.remove_input(index + 2)
        node.erase_output(index)
        dead_params.append(index + 1)
    return dead_params
