"""Moving nodes into and out of subgraph nodes (TorchScript's SubgraphUtils).

A *subgraph node* such as ``prim::DifferentiableGraph`` is an ordinary node
of the outer graph whose work is a whole graph, kept in its ``Subgraph``
attribute. The node's inputs feed the subgraph's inputs one to one, and the
subgraph's outputs become the node's outputs::

    %y : Tensor = prim::DifferentiableGraph_0(%x, %w)
    with prim::DifferentiableGraph_0 = graph(%x : Tensor, %w : Tensor):
      %t : Tensor = aten::mm(%x, %w)
      %y : Tensor = aten::tanh(%t)
      return (%y)

The helpers here grow and shrink such nodes one node at a time:

* :func:`create_singleton_subgraph` wraps one node in a new subgraph node;
* :func:`merge_node_into_subgraph` moves a producer into the group it
  feeds (constants it reads are copied in rather than passed as inputs);
* :func:`unmerge_subgraph` pastes the whole subgraph back in place of the
  node;
* :func:`unmerge_node`, :func:`unmerge_aliased_outputs` and
  :func:`unmerge_outputs_aliasing_inputs` push single nodes back out, which
  the autodiff slicer needs when an output of a group would share memory
  with an input or with another output.

Each helper that takes an :class:`SlicingAliasDb` keeps it up to date, so the
slicer can go on asking it which moves are safe.
"""

from __future__ import annotations

import functools

from gradview.ir import Graph, InsertPoint, Node, Value
from gradview.ir.attributes import AttributeKind
from gradview.ir.constants import NOT_CONSTANT, constant_value
from gradview.ir.graph import copy_name
from gradview.ir.passes.alias_db import SIDE_EFFECT_KINDS, AliasDb, is_mutable_type

__all__ = [
    "SUBGRAPH", "PROFILE_KINDS", "SlicingAliasDb", "has_subgraph", "get_subgraph",
    "create_singleton_subgraph", "merge_node_into_subgraph", "unmerge_subgraph",
    "unmerge_node", "unmerge_aliased_outputs", "unmerge_outputs_aliasing_inputs",
]

SUBGRAPH = "Subgraph"
PROFILE_KINDS = frozenset({"prim::profile", "prim::profile_ivalue"})
# Effects that read their inputs and write nothing.
_READ_ONLY_EFFECTS = frozenset({"prim::Print", "prim::RaiseException", "aten::warn"})


class SlicingAliasDb(AliasDb):
    """The AliasDb the slicer reorders with, following TorchScript's rules where
    gradview's general-purpose AliasDb is more cautious:

    * a node has side effects only by itself (``Node::hasSideEffects``): an
      ``if`` whose branch prints may still have pure nodes moved across it;
    * profiling nodes are not effects: they hand their input through (the
      output aliases it), so they can join a differentiable graph;
    * ``prim::Print`` and friends only read their inputs (gradview's AliasDb
      knows no schema for them and assumes they write);
    * graph inputs may alias each other, and anything gradview marks as "may
      alias anything" (TorchScript's wildcards): two tensor arguments may be
      the same tensor at run time, so an in-place write to one blocks moving
      a reader of the other across it.
    """

    def __init__(self, graph: Graph) -> None:
        super().__init__(graph)
        for value in graph.inputs():
            if is_mutable_type(value.type()):
                self._to_wildcard(value)

    def _analyze(self, node: Node) -> None:
        kind = node.kind()
        if kind not in PROFILE_KINDS and kind not in _READ_ONLY_EFFECTS:
            super()._analyze(node)
            return
        read = [v for v in node.inputs() if is_mutable_type(v.type())]
        for out in node.outputs():
            if read and is_mutable_type(out.type()):
                self._union(out, read[0])
        self._writes[node] = frozenset()
        self._reads[node] = frozenset(read)
        self._effects[node] = kind in _READ_ONLY_EFFECTS

    def has_side_effects(self, node: Node) -> bool:
        if node.kind() in PROFILE_KINDS:
            return False
        return self._effects.get(node, node.kind() in SIDE_EFFECT_KINDS)

    def copy_aliasing(self, source: Value, target: Value) -> None:
        """``target`` replaces ``source``: it shares whatever ``source`` shared."""
        if is_mutable_type(source.type()) and is_mutable_type(target.type()):
            self._union(target, source)


def has_subgraph(node: Node) -> bool:
    return node.has_attribute(SUBGRAPH) and node.attribute_kind(SUBGRAPH) is AttributeKind.g


def get_subgraph(node: Node) -> Graph:
    return node.g(SUBGRAPH)


def _external_values(node: Node) -> list[Value]:
    """What ``node`` reads from outside itself, in order: its inputs, then the
    values its nested blocks use or return that are defined outside it."""
    blocks = list(node.blocks()) + [b for nested in node.walk() for b in nested.blocks()]
    inner: set[Value] = {v for nested in node.walk() for v in nested.outputs()}
    inner.update(v for block in blocks for v in block.inputs())
    seen: dict[Value, None] = dict.fromkeys(node.inputs())
    for nested in node.walk():
        seen.update((v, None) for v in nested.inputs() if v not in inner)
    for block in blocks:
        seen.update((v, None) for v in block.outputs() if v not in inner)
    return list(seen)


def _is_constant(value: Value) -> bool:
    return constant_value(value) is not NOT_CONSTANT


def _clone_constant(value: Value, graph: Graph) -> Value:
    """Insert a copy of ``value``'s constant node at ``graph``'s insert point."""
    clone = graph.create_clone(value.node, lambda v: v)
    graph.insert_node(clone)
    return clone.output()


def create_singleton_subgraph(node: Node, kind: str, db: SlicingAliasDb | None = None) -> Node:
    """Wrap ``node`` in a new ``kind`` node of its own; returns the new node."""
    group = node.graph.create(kind, (), 0)
    group.g_(SUBGRAPH, Graph())
    group.insert_before(node)
    merge_node_into_subgraph(node, group, db)
    return group


def merge_node_into_subgraph(node: Node, group: Node, db: SlicingAliasDb | None = None) -> None:
    """Move ``node`` into ``group``'s subgraph and destroy it.

    ``node`` sits before or after ``group`` in the same block. Its inputs
    become group inputs unless the group already has them, or computes them,
    or they are constants (copied in). Its outputs that are still used after
    the group become group outputs. A producer merged into its consumer::

        %t = aten::mm(%x, %w)                      %y = DifferentiableGraph(%x, %w)
        %y = DifferentiableGraph(%t)       ==>       graph(%x, %w): %t = mm(%x, %w)
          graph(%t): %y = tanh(%t)                                  %y = tanh(%t)
    """
    if has_subgraph(node):
        _merge_subgraph(group, node, db)
        return
    sub = get_subgraph(group)
    external: dict[Value, Value] = dict(zip(group.inputs(), sub.inputs(), strict=True))
    external.update(zip(group.outputs(), sub.outputs(), strict=True))
    after = node.is_after(group)
    where = InsertPoint.at_end(sub.block) if after else InsertPoint.at_start(sub.block)
    with sub.insert_point(where):
        for value in _external_values(node):
            if value in external:
                continue
            if _is_constant(value):
                external[value] = _clone_constant(value, sub)
            else:
                group.add_input(value)
                param = sub.add_input(type_=value.type())
                copy_name(value, param)
                external[value] = param
        merged = sub.insert_node(sub.create_clone(node, external.__getitem__))
    if not after:
        # The group read these values; now it computes them itself.
        for old, new in zip(node.outputs(), merged.outputs(), strict=True):
            inputs = group.inputs()
            if old in inputs:
                index = inputs.index(old)
                group.remove_input(index)
                sub.inputs()[index].replace_all_uses_with(new)
                sub.erase_input(index)
    for old, new in zip(node.outputs(), merged.outputs(), strict=True):
        sub.register_output(new)
        out = group.add_output(old.type())
        copy_name(old, out)
        old.replace_all_uses_with(out)
        if db is not None:
            db.copy_aliasing(old, out)
    node.destroy()
    # Keep only the outputs something after the group still reads.
    for index in range(len(group.outputs()) - 1, -1, -1):
        out = group.outputs()[index]
        if not any(use.user.is_after(group) for use in out.uses):
            group.erase_output(index)
            sub.erase_output(index)
    if db is not None:
        db.refresh(group)


def _merge_subgraph(merge_to: Node, merge_from: Node, db: SlicingAliasDb | None) -> None:
    """Merge one subgraph node into another: paste ``merge_from`` back into
    the block, then merge the pasted nodes one by one, nearest first."""
    after = merge_from.is_after(merge_to)
    before_node, after_node = merge_from.prev, merge_from.next
    unmerge_subgraph(merge_from, db)
    assert before_node is not None and after_node is not None
    current = before_node.next if after else after_node.prev
    stop = after_node if after else before_node
    while current is not stop:
        assert current is not None
        following = current.next if after else current.prev
        merge_node_into_subgraph(current, merge_to, db)
        current = following


def unmerge_subgraph(group: Node, db: SlicingAliasDb | None = None) -> list[Node]:
    """Paste ``group``'s subgraph in place of ``group``; returns the pasted nodes.

    The subgraph may have more outputs than the node (a differentiated
    forward graph also returns what the backward pass captures); only the
    node's outputs are rewired.
    """
    graph = group.graph
    sub = get_subgraph(group)
    mapping: dict[Value, Value] = dict(zip(sub.inputs(), group.inputs(), strict=True))
    pasted: list[Node] = []
    for inner in sub.nodes():
        clone = graph.create_clone(inner, mapping.__getitem__)
        clone.insert_before(group)
        mapping.update(zip(inner.outputs(), clone.outputs(), strict=True))
        pasted.append(clone)
    for old, result in zip(group.outputs(), sub.outputs(), strict=False):
        new = mapping[result]
        old.replace_all_uses_with(new)
        if db is not None:
            db.copy_aliasing(old, new)
    group.destroy()
    return pasted


def unmerge_node(node: Node, group: Node) -> None:
    """Move ``node`` (inside ``group``'s subgraph) out, to just after ``group``.

    Every user of ``node`` inside the subgraph must have been moved out
    already. Constants ``node`` reads are copied out; any other value it reads
    becomes a group output, even a subgraph input, which then just passes
    through the group. That last case looks odd (the group's own input would
    do) but it is what TorchScript does, and it keeps the printed graphs equal.
    """
    sub = get_subgraph(group)
    outer = group.graph
    sub_outputs = sub.outputs()
    leaving = [i for i, value in enumerate(sub_outputs) if value.node is node]
    local: dict[Value, Value] = {}
    for index, value in enumerate(sub_outputs):
        if value not in local:
            local[value] = group.outputs()[index]
    with outer.insert_point(InsertPoint.after(group)):
        for value in _external_values(node):
            if value in local:
                continue
            if _is_constant(value):
                local[value] = _clone_constant(value, outer)
            else:
                sub.register_output(value)
                local[value] = group.add_output(value.type())
        clone = outer.insert_node(outer.create_clone(node, local.__getitem__))
    for index in reversed(leaving):
        out = group.outputs()[index]
        out.replace_all_uses_with(clone.outputs()[sub_outputs[index].offset])
        group.erase_output(index)
        sub.erase_output(index)
    node.destroy()


def _nodes_to_unfuse(starts: list[Node]) -> list[Node]:
    """``starts`` and every node that (transitively) uses them, in program order."""
    found: dict[Node, None] = {}
    stack = [n for n in starts if n.kind() not in ("prim::Param", "prim::Return")]
    while stack:
        node = stack.pop()
        if node in found:
            continue
        found[node] = None
        for out in node.outputs():
            for use in out.uses:
                if use.user.kind() != "prim::Return" and use.user not in found:
                    stack.append(use.user)
    return sorted(found, key=functools.cmp_to_key(_program_order))


def _program_order(a: Node, b: Node) -> int:
    return -1 if a.is_before(b) else (1 if b.is_before(a) else 0)


def _value_order(value: Value) -> tuple[int, int]:
    return value.node.topo_position, value.unique


def _unmerge_all(nodes: list[Node], group: Node) -> bool:
    # Users first, so each node leaves after everything that reads it.
    for node in reversed(nodes):
        unmerge_node(node, group)
    return bool(nodes)


def unmerge_aliased_outputs(group: Node) -> bool:
    """Push out the nodes behind group outputs that may alias an earlier output.

    Outputs are grouped by may-alias; in each group the earliest-defined
    output stays, the others' nodes and their users leave. True if any left.
    """
    if len(group.outputs()) < 2:
        return False
    sub = get_subgraph(group)
    aliases = SlicingAliasDb(sub)
    sets: list[list[Value]] = []
    for out in sub.outputs():
        grouped = False
        for members in sets:
            if aliases.may_alias(members[0], out):
                if out not in members:
                    members.append(out)
                    members.sort(key=_value_order)
                grouped = True
        if not grouped:
            sets.append([out])
    starts = [value.node for members in sets for value in members[1:]]
    return _unmerge_all(_nodes_to_unfuse(starts), group)


def unmerge_outputs_aliasing_inputs(group: Node) -> bool:
    """Push out the nodes behind group outputs that may alias a group input."""
    sub = get_subgraph(group)
    aliases = SlicingAliasDb(sub)
    starts = [
        out.node for out in sub.outputs()
        if any(aliases.may_alias(out, param) for param in sub.inputs())
    ]
    return _unmerge_all(_nodes_to_unfuse(starts), group)

