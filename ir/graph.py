"""Blocks and graphs.

A :class:`Graph` owns one top-level :class:`Block`; control-flow nodes own
nested blocks. A block starts with a param node (whose outputs are the block's
inputs) and ends with a return node (whose inputs are the block's outputs).
The return node doubles as the sentinel of the block's circular node list.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .builders import insert_call
from .constants import insert_constant
from .node import Node, Value, walk_blocks
from .types import TENSOR, Type

__all__ = ["Block", "Graph", "InsertPoint", "walk_blocks"]

# Spacing of topological positions: appends step by this much, inserts take
# the midpoint, and a block is renumbered when two neighbours run out of room.
POSITION_INTERVAL = 1 << 40


class Block:
    """A list of nodes with inputs (params) and outputs (returns)."""

    __slots__ = ("graph", "owning_node", "param_node", "return_node")

    def __init__(self, graph: Graph, owning_node: Node | None) -> None:
        self.graph = graph
        self.owning_node = owning_node
        self.param_node = Node(graph, "prim::Param")
        self.return_node = Node(graph, "prim::Return")
        ret = self.return_node
        ret.prev = ret.next = ret
        ret.owning_block = self
        self.param_node.owning_block = self
        self.param_node.topo_position = -(1 << 62)
        ret.topo_position = 1 << 62

    # -- torch._C.Block-style accessors --------------------------------------
    def inputs(self) -> list[Value]:
        return list(self.param_node._outputs)

    def outputs(self) -> list[Value]:
        return list(self.return_node._inputs)

    def nodes(self) -> Iterator[Node]:
        """The nodes of this block in order (safe to destroy the current node)."""
        ret = self.return_node
        node = ret.next
        while node is not ret:
            following = node.next  # type: ignore[union-attr]
            yield node  # type: ignore[misc]
            node = following
        return

    def reverse_nodes(self) -> Iterator[Node]:
        ret = self.return_node
        node = ret.prev
        while node is not ret:
            preceding = node.prev  # type: ignore[union-attr]
            yield node  # type: ignore[misc]
            node = preceding

    def is_empty(self) -> bool:
        return self.return_node.next is self.return_node




    # -- params and returns --------------------------------------------------
    def add_input(self, name: str | None = None, type_: Type = TENSOR) -> Value:
        value = self.param_node.add_output(type_)
        if name:
            value.set_debug_name(name)
        return value

    def insert_input(self, i: int, name: str | None = None, type_: Type = TENSOR) -> Value:
        value = self.param_node.insert_output(i, type_)
        if name:
            value.set_debug_name(name)
        return value

    def erase_input(self, i: int) -> None:
        self.param_node.erase_output(i)

    def register_output(self, value: Value) -> int:
        self.return_node.add_input(value)
        return len(self.return_node._inputs) - 1

    def insert_output(self, i: int, value: Value) -> None:
        self.return_node.insert_input(i, value)

    def erase_output(self, i: int) -> None:
        self.return_node.remove_input(i)

    def replace_output(self, i: int, value: Value) -> None:
        self.return_node.replace_input(i, value)

    # -- nodes ---------------------------------------------------------------
    def append_node(self, node: Node) -> Node:
        return node.insert_before(self.return_node)

    def prepend_node(self, node: Node) -> Node:
        return node.insert_after(self.param_node)

    def _assign_position(self, node: Node) -> None:
        prev, nxt = node.prev, node.next
        ret = self.return_node
        assert prev is not None and nxt is not None
        if prev is ret and nxt is ret:
            node.topo_position = 0
        elif prev is ret:
            node.topo_position = nxt.topo_position - POSITION_INTERVAL
            if node.topo_position <= self.param_node.topo_position:
                self._renumber()  # stay after the param node's sentinel position
        elif nxt is ret:
            node.topo_position = prev.topo_position + POSITION_INTERVAL
            if node.topo_position >= ret.topo_position:
                self._renumber()  # stay before the return node's sentinel position
        else:
            gap = nxt.topo_position - prev.topo_position
            if gap < 2:
                self._renumber()
                return
            node.topo_position = prev.topo_position + gap // 2

    def _renumber(self) -> None:
        for index, node in enumerate(self.nodes()):
            node.topo_position = index * POSITION_INTERVAL

    def clone_from(self, source: Block, value_map: Callable[[Value], Value]) -> None:
        """Append copies of ``source``'s params, nodes and outputs to this empty block.

        ``value_map`` translates values defined outside ``source``; values
        defined inside it map to their copies.
        """
        local: dict[Value, Value] = {}

        def lookup(v: Value) -> Value:
            mapped = local.get(v)
            return mapped if mapped is not None else value_map(v)

        for param in source.inputs():
            copy = self.add_input(type_=param.type())
            copy_name(param, copy)
            local[param] = copy
        for node in source.nodes():
            clone = self.graph.create_clone(node, lookup)
            self.append_node(clone)
            for old, new in zip(node._outputs, clone._outputs, strict=True):
                local[old] = new
                copy_name(old, new)
        for value in source.outputs():
            self.register_output(lookup(value))

    def clone_body_from(self, source: Block, mapping: dict[Value, Value]) -> None:
        """Copy ``source``'s nodes and outputs into this block, deep-copying subgraphs.

        ``mapping`` must already translate every value ``source`` uses from
        outside; it is filled with the copies. Uses a work list instead of
        recursion, so deeply nested blocks cannot exhaust the Python stack.
        """
        lookup = mapping.__getitem__
        filled: list[tuple[Block, Block]] = []
        work: list[tuple[Block, Block]] = [(source, self)]
        while work:
            src, dst = work.pop()
            if dst is not self:
                for param in src.inputs():
                    copy = dst.add_input(type_=param.type())
                    copy_name(param, copy)
                    mapping[param] = copy
            for node in src.nodes():
                clone = self.graph.create_clone(node, lookup, copy_blocks=False)
                clone.copy_attributes(node, deep_graphs=True)
                dst.append_node(clone)
                for old, new in zip(node._outputs, clone._outputs, strict=True):
                    mapping[old] = new
                    copy_name(old, new)
                # A nested block only sees values defined before its node,
                # which are all mapped by the time the work list reaches it.
                work.extend(reversed([(b, clone.add_block()) for b in node._blocks]))
            filled.append((src, dst))
        for src, dst in filled:
            for value in src.outputs():
                dst.register_output(mapping[value])

    def _destroy(self) -> None:
        # Users come after their definitions, so tearing down from the back
        # leaves no dangling use behind.
        self.return_node.remove_all_inputs()
        for node in list(self.reverse_nodes()):
            node.destroy()
        for value in self.param_node._outputs:
            self.graph._forget_name(value)
        self.owning_node = None


def copy_name(source: Value, target: Value) -> None:
    """Give ``target`` the debug name of ``source`` (if it has one)."""
    if source._debug_name is not None and target._debug_name is None:
        target.set_debug_name(source._debug_name)


@dataclass(frozen=True, slots=True)
class InsertPoint:
    """Where ``Graph.insert_node`` puts new nodes: right before ``before``.

    Build one with :meth:`before`, :meth:`after`, :meth:`at_start` or :meth:`at_end`.
    """

    before_node: Node

    @staticmethod
    def before(node: Node) -> InsertPoint:
        return InsertPoint(node)

    @staticmethod
    def after(node: Node) -> InsertPoint:
        block = node.owning_block
        if block is None:
            raise ValueError("node is not in a graph")
        following = block.return_node.next if node is block.param_node else node.next
        return InsertPoint(following)  # type: ignore[arg-type]

    @staticmethod
    def at_start(block: Block) -> InsertPoint:
        return InsertPoint(block.return_node.next)  # type: ignore[arg-type]

    @staticmethod
    def at_end(block: Block) -> InsertPoint:
        return InsertPoint(block.return_node)

    @property
    def block(self) -> Block:
        return self.before_node.owning_block  # type: ignore[return-value]


class _InsertPointGuard:
    """The context manager of ``Graph.insert_point`` (a class: autodiff enters
    thousands of them, and a generator-based one costs several times more)."""

    __slots__ = ("graph", "where", "saved")

    def __init__(self, graph: Graph, where: Node | Block | InsertPoint) -> None:
        self.graph = graph
        self.where = where

    def __enter__(self) -> InsertPoint:
        self.saved = self.graph._insert
        self.graph.set_insert_point(self.where)
        return self.graph._insert

    def __exit__(self, *exc: object) -> None:
        self.graph._insert = self.saved


class Graph:
    """A TorchScript graph: inputs, a top-level block of nodes, outputs.

    ``str(graph)`` prints TorchScript's textual IR; :func:`gradview.ir.parse_ir`
    reads it back.

    ``version`` counts the edits made to the graph's own blocks (nodes inserted,
    moved or destroyed; inputs, outputs, uses, kinds, types or attributes
    changed), so that what was derived from the graph can be reused while it is
    unchanged: ``derived`` is where other layers keep such things (the
    runtime's compiled functions), checked against ``version`` before reuse.
    Subgraphs held in attributes are graphs of their own, with their own version.
    """

    __slots__ = ("block", "_next_unique", "_names", "_name_suffixes", "_insert", "_version", "derived")

    def __init__(self) -> None:
        self._version = 0
        self.derived: dict[Any, Any] = {}
        self._next_unique = 0
        self._names: dict[str, Value] = {}
        self._name_suffixes: dict[str, int] = {}
        self.block = Block(self, None)
        self._insert = InsertPoint.at_end(self.block)

    # -- naming (TorchScript's uniquing rule) --------------------------------
    def _take_unique(self) -> int:
        unique = self._next_unique
        self._next_unique = unique + 1
        return unique

    def _rename(self, value: Value, name: str | None) -> None:
        if name is not None and name.isdigit():
            raise ValueError(f"debug name {name!r} is not valid: numbers are reserved for unnamed values")
        if value._debug_name is not None and self._names.get(value._debug_name) is value:
            del self._names[value._debug_name]
        value._debug_name = None
        if name is None:
            return
        owner = self._names.get(name)
        if owner is not None and owner is not value:
            base, suffix = name, 1
            head, dot, tail = name.rpartition(".")
            if dot and head and tail.isdigit():
                base, suffix = head, int(tail)
            suffix = max(suffix, self._name_suffixes.get(base, 0) + 1)
            while f"{base}.{suffix}" in self._names:
                suffix += 1
            # TorchScript stores the counter already advanced past the suffix
            # it used (x, x.1, then x.3 for the next clash on x).
            self._name_suffixes[base] = suffix + 1
            owner._debug_name = None
            del self._names[name]
            replacement = f"{base}.{suffix}"
            owner._debug_name = replacement
            self._names[replacement] = owner
        value._debug_name = name
        self._names[name] = value

    def _forget_name(self, value: Value) -> None:
        name = value._debug_name
        if name is not None and self._names.get(name) is value:
            del self._names[name]

    @property
    def version(self) -> int:
        """Bumped by every edit of this graph (O(1) per edit; see the class docstring)."""
        return self._version

    def value_by_name(self, name: str) -> Value | None:
        """The value whose debug name is ``name`` (without the ``%``), if any."""
        return self._names.get(name.lstrip("%"))

    # -- torch._C.Graph-style accessors --------------------------------------
    def inputs(self) -> list[Value]:
        return self.block.inputs()

    def outputs(self) -> list[Value]:
        return self.block.outputs()

    def nodes(self) -> Iterator[Node]:
        return self.block.nodes()

    def param_node(self) -> Node:
        return self.block.param_node

    def return_node(self) -> Node:
        return self.block.return_node

    param = param_node

    def all_nodes(self) -> Iterator[Node]:
        """Every node, nested ones included, in program order."""
        return walk_blocks([self.block])

    def num_nodes(self) -> int:
        return sum(1 for _ in self.all_nodes())

    def add_input(self, name: str | None = None, type_: Type = TENSOR) -> Value:
        return self.block.add_input(name, type_)

    def insert_input(self, i: int, name: str | None = None, type_: Type = TENSOR) -> Value:
        return self.block.insert_input(i, name, type_)

    def erase_input(self, i: int) -> None:
        self.block.erase_input(i)

    def register_output(self, value: Value) -> int:
        return self.block.register_output(value)

    def erase_output(self, i: int) -> None:
        self.block.erase_output(i)

    # -- creating and inserting nodes ----------------------------------------
    def create(self, kind: str, inputs: Sequence[Value] = (), num_outputs: int = 1) -> Node:
        """A new node that is not yet in any block (see :meth:`insert_node`)."""
        node = Node(self, kind)
        for value in inputs:
            node.add_input(value)
        for _ in range(num_outputs):
            node.add_output()
        return node

    def insert_node(self, node: Node) -> Node:
        """Insert ``node`` at the current insert point."""
        return node.insert_before(self._insert.before_node)

    def append_node(self, node: Node) -> Node:
        return self.block.append_node(node)

    def prepend_node(self, node: Node) -> Node:
        return self.block.prepend_node(node)

    def insert(
        self,
        kind: str,
        inputs: Sequence[Any],
        attributes: dict[str, Any] | None = None,
        output_types: Sequence[Type] | None = None,
    ) -> Value | tuple[Value, ...]:
        """Insert a call of ``kind`` at the insert point and return its output(s).

        Inputs may be values or Python constants (inserted as ``prim::Constant``).
        Output count and types come from the resolved schema unless given.
        """
        return insert_call(self, kind, inputs, attributes, output_types)

    def insert_constant(self, value: Any, type_: Type | None = None) -> Value:
        """Insert a ``prim::Constant`` holding ``value`` at the insert point."""
        return insert_constant(self, value, type_)

    @property
    def insert_point_node(self) -> Node:
        return self._insert.before_node

    def set_insert_point(self, where: Node | Block | InsertPoint) -> None:
        if isinstance(where, InsertPoint):
            self._insert = where
        elif isinstance(where, Block):
            self._insert = InsertPoint.at_end(where)
        else:
            self._insert = InsertPoint.before(where)

    def insert_point(self, where: Node | Block | InsertPoint) -> _InsertPointGuard:
        """``with graph.insert_point(x):`` inserts before a node, at the end of a
        block, or at an InsertPoint, and restores the previous point after."""
        return _InsertPointGuard(self, where)

    def create_clone(
        self, node: Node, value_map: Callable[[Value], Value], copy_blocks: bool = True
    ) -> Node:
        """A copy of ``node`` (from this or another graph) with inputs translated by ``value_map``.

        Attributes are shared (graph attributes too, as TorchScript does); the
        clone is not inserted anywhere. Like TorchScript's ``copyMetadata``, the
        clone's outputs take the debug names of ``node``'s outputs, so cloning
        within one graph renames the originals (``%y`` becomes ``%y.1``).
        """
        clone = Node(self, node._kind)
        clone.copy_attributes(node)
        clone.source_location = node.source_location
        clone.scope = node.scope
        for value in node._outputs:
            copy_name(value, clone.add_output(value._type))
        for value in node._inputs:
            clone.add_input(value_map(value))
        if copy_blocks:
            for block in node._blocks:
                clone.add_block().clone_from(block, value_map)
        return clone

    def copy(self, copies: dict[Any, Any] | None = None) -> Graph:
        """A deep copy; debug names, types and nested subgraphs are copied too.

        ``copies``, when given, is filled with original -> copy for every value
        and node (nested blocks included), so a caller can carry facts about the
        original over, such as the pass trace's stable ids."""
        new = Graph()
        mapping: dict[Value, Value] = {}
        for value in self.inputs():
            copy = new.add_input(type_=value.type())
            copy_name(value, copy)
            mapping[value] = copy
        new.block.clone_body_from(self.block, mapping)
        # Keep the numbers of unnamed values so the copy prints like the original.
        for old, copied in mapping.items():
            copied.unique = old.unique
        new._next_unique = self._next_unique
        if copies is not None:
            copies.update(mapping)
            copies.update(zip(self.all_nodes(), new.all_nodes(), strict=True))
        return new

    def lint(self) -> None:
        """Check the graph's invariants; raises IRVerifyError naming the broken node."""
        from .lint import lint

        lint(self)

    def __str__(self) -> str:
        from .printer import print_graph

        return print_graph(self)

    def __repr__(self) -> str:
        return f"<Graph: {len(self.inputs())} inputs, {self.num_nodes()} nodes>"

