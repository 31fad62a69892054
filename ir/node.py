"""Values, uses and nodes: the cells of a graph.

Every edit of a node's inputs goes through :meth:`Node._set_input` so that the
use lists of the values on both sides stay exact (FX and xDSL keep the same
rule). A value's uses live in an insertion-ordered dict keyed by ``Use``, so
adding or removing one use is O(1) even for a constant used 10,000 times.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from .attributes import AttributeKind, copy_attribute_value
from .operators import node_matches, resolve_schema
from .types import (
    TENSOR,
    DictType,
    FutureType,
    ListType,
    OptionalType,
    TensorType,
    TupleType,
    Type,
)

if TYPE_CHECKING:
    from .graph import Block, Graph
    from .schema import FunctionSchema

__all__ = ["Use", "Value", "Node"]


class Use(NamedTuple):
    """``user.inputs()[offset]`` is the value that has this use."""

    user: Node
    offset: int


class Value:
    """An SSA value: one output of a node (a block's inputs are outputs of its param node)."""

    __slots__ = ("node", "offset", "_type", "_uses", "unique", "_debug_name")

    def __init__(self, node: Node, offset: int, type_: Type = TENSOR) -> None:
        self.node = node
        self.offset = offset
        self._type = type_
        # Keys are plain ``(user, offset)`` tuples (cheap to build; equal to Use).
        self._uses: dict[tuple[Node, int], None] = {}
        self.unique = node.graph._take_unique()
        self._debug_name: str | None = None

    # -- identity and naming -------------------------------------------------
    @property
    def graph(self) -> Graph:
        return self.node.graph

    def debug_name(self) -> str:
        return self._debug_name if self._debug_name is not None else str(self.unique)


    def has_debug_name(self) -> bool:
        return self._debug_name is not None

    def set_debug_name(self, name: str | None) -> Value:
        """Name this value; like TorchScript, a clash renames the old owner to ``name.N``."""
        self.graph._rename(self, name or None)
        return self

    def __repr__(self) -> str:
        return f"%{self.debug_name()}"

    # -- type ----------------------------------------------------------------
    def type(self) -> Type:
        return self._type

    def set_type(self, type_: Type) -> Value:
        if type_ is not self._type and type_ != self._type:
            self.node.graph._version += 1  # see Graph.version
        self._type = type_
        return self

    def requires_grad(self) -> bool:
        """TorchScript's rule: a tensor whose requires_grad is unknown may require grad,
        and a container (``Tensor[]``, ``Tensor?``, tuples...) does if any element type does."""
        return _may_require_grad(self._type)

    # -- uses ----------------------------------------------------------------
    @property
    def uses(self) -> list[Use]:
        return [Use(user, offset) for user, offset in self._uses]

    def has_uses(self) -> bool:
        return bool(self._uses)

    def replace_all_uses_with(self, new_value: Value) -> None:
        """Point every user of this value at ``new_value`` instead."""
        if new_value is self:
            return
        for user, offset in list(self._uses):
            user._set_input(offset, new_value)
        assert not self._uses, "replace_all_uses_with left uses behind"

    def replace_all_uses_after_node_with(self, node: Node, new_value: Value) -> None:
        """Replace only the uses that come topologically after ``node``."""
        for user, offset in list(self._uses):
            if user.is_after(node):
                user._set_input(offset, new_value)

    def replace_all_uses_dominated_by_node_with(self, node: Node, new_value: Value) -> None:
        """Replace uses that ``node`` dominates (after it, in its block or blocks nested there)."""
        for user, offset in list(self._uses):
            if user.is_dominated_by(node):
                user._set_input(offset, new_value)


def _may_require_grad(type_: Type) -> bool:
    """``c10::Type::requires_grad``: unknown counts as true; containers ask their elements."""
    if isinstance(type_, TensorType):
        return type_.requires_grad is not False
    if isinstance(type_, (ListType, OptionalType)):
        return _may_require_grad(type_.elem)
    if isinstance(type_, TupleType):
        return any(_may_require_grad(t) for t in type_.elems)
    if isinstance(type_, DictType):
        return _may_require_grad(type_.key) or _may_require_grad(type_.value)
    if isinstance(type_, FutureType):
        return any(_may_require_grad(t) for t in type_.args)
    return False


class Node:
    """An operation: a kind such as ``aten::mul``, input values, output values,
    attributes and, for control flow, nested blocks.

    Nodes of one block form a doubly linked list whose sentinel is the block's
    return node. ``topo_position`` grows along the list so that ``is_before``
    is one comparison for nodes of the same block.
    """

    __slots__ = (
        "_kind", "graph", "owning_block", "_inputs", "_outputs", "_blocks",
        "_attrs", "prev", "next", "topo_position", "source_location", "_schema", "scope",
    )

    def __init__(self, graph: Graph, kind: str) -> None:
        self._kind = kind
        self.graph = graph
        self.owning_block: Block | None = None
        self._inputs: list[Value] = []
        self._outputs: list[Value] = []
        self._blocks: list[Block] = []
        self._attrs: dict[str, tuple[AttributeKind, Any]] = {}
        self.prev: Node | None = None
        self.next: Node | None = None
        self.topo_position = 0
        self.source_location: str | None = None
        self.scope: str | None = None  # a traced module's scope, "__module.layer1/__module.layer1.conv"
        self._schema: FunctionSchema | None | bool = False  # False: not looked up yet

    # -- torch._C.Node-style accessors ---------------------------------------
    def kind(self) -> str:
        return self._kind

    def set_kind(self, kind: str) -> None:
        self._kind = kind
        self._schema = False
        self.graph._version += 1  # see Graph.version

    def inputs(self) -> list[Value]:
        return list(self._inputs)

    def outputs(self) -> list[Value]:
        return list(self._outputs)

    def blocks(self) -> list[Block]:
        return list(self._blocks)

    def input(self, i: int | None = None) -> Value:
        """``input()``: the only input (raises unless there is exactly one); ``input(i)``: input ``i``."""
        if i is None:
            if len(self._inputs) != 1:
                raise ValueError(f"{self._kind} has {len(self._inputs)} inputs, not one")
            i = 0
        return self._inputs[i]

    def output(self, i: int | None = None) -> Value:
        """``output()``: the only output (raises unless there is exactly one); ``output(i)``: output ``i``."""
        if i is None:
            if len(self._outputs) != 1:
                raise ValueError(f"{self._kind} has {len(self._outputs)} outputs, not one")
            i = 0
        return self._outputs[i]





    @property
    def is_alive(self) -> bool:
        return self.owning_block is not None

    def __repr__(self) -> str:
        from .printer import node_summary

        return node_summary(self)

    # -- inputs --------------------------------------------------------------
    def _set_input(self, i: int, value: Value) -> Value:
        """The one place that changes an input; keeps both use lists exact."""
        old = self._inputs[i]
        del old._uses[(self, i)]
        self._inputs[i] = value
        value._uses[(self, i)] = None
        self.graph._version += 1  # see Graph.version
        return old

    def add_input(self, value: Value) -> Value:
        self._inputs.append(value)
        value._uses[(self, len(self._inputs) - 1)] = None
        self.graph._version += 1  # see Graph.version
        return value

    def insert_input(self, i: int, value: Value) -> Value:
        """Insert ``value`` at position ``i``, shifting the later inputs' uses."""
        for j in range(len(self._inputs) - 1, i - 1, -1):
            later = self._inputs[j]
            del later._uses[(self, j)]
            later._uses[(self, j + 1)] = None
        self._inputs.insert(i, value)
        value._uses[(self, i)] = None
        self.graph._version += 1  # see Graph.version
        return value

    def replace_input(self, i: int, value: Value) -> Value:
        """Make input ``i`` be ``value``; returns the value it replaced."""
        return self._set_input(i, value)

    def replace_input_with(self, old: Value, new: Value) -> None:
        for i, v in enumerate(self._inputs):
            if v is old:
                self._set_input(i, new)

    def remove_input(self, i: int) -> None:
        value = self._inputs[i]
        del value._uses[(self, i)]
        for j in range(i + 1, len(self._inputs)):
            later = self._inputs[j]
            del later._uses[(self, j)]
            later._uses[(self, j - 1)] = None
        del self._inputs[i]
        self.graph._version += 1  # see Graph.version

    def remove_all_inputs(self) -> None:
        for i, value in enumerate(self._inputs):
            del value._uses[(self, i)]
        self._inputs.clear()
        self.graph._version += 1  # see Graph.version

    # -- outputs -------------------------------------------------------------
    def add_output(self, type_: Type = TENSOR) -> Value:
        value = Value(self, len(self._outputs), type_)
        self._outputs.append(value)
        self.graph._version += 1  # see Graph.version
        return value

    def insert_output(self, i: int, type_: Type = TENSOR) -> Value:
        value = Value(self, i, type_)
        self._outputs.insert(i, value)
        for j in range(i + 1, len(self._outputs)):
            self._outputs[j].offset = j
        self.graph._version += 1  # see Graph.version
        return value

    def erase_output(self, i: int) -> None:
        value = self._outputs[i]
        if value._uses:
            raise ValueError(
                f"cannot erase output {i} (%{value.debug_name()}) of {self._kind}: it still has uses"
            )
        self.graph._forget_name(value)
        del self._outputs[i]
        for j in range(i, len(self._outputs)):
            self._outputs[j].offset = j
        self.graph._version += 1  # see Graph.version

    def has_uses(self) -> bool:
        return any(o._uses for o in self._outputs)

    # -- blocks --------------------------------------------------------------
    def add_block(self) -> Block:
        from .graph import Block

        block = Block(self.graph, self)
        self._blocks.append(block)
        self.graph._version += 1  # see Graph.version
        return block

    def erase_block(self, i: int) -> None:
        block = self._blocks.pop(i)
        block._destroy()
        self.graph._version += 1  # see Graph.version

    # -- position in the block -----------------------------------------------
    def _link_between(self, prev: Node, next_: Node, block: Block) -> None:
        if self.owning_block is not None:
            raise ValueError(f"{self._kind} is already in a block; use move_before/move_after")
        if self.graph is not block.graph:
            raise ValueError(f"{self._kind} belongs to another graph")
        self.prev, self.next = prev, next_
        prev.next = self
        next_.prev = self
        self.owning_block = block
        block._assign_position(self)
        self.graph._version += 1  # see Graph.version

    def insert_before(self, other: Node) -> Node:
        """Put this (unlinked) node right before ``other``: ``a other`` becomes ``a self other``."""
        block = other.owning_block
        if block is None:
            raise ValueError("cannot insert before a node that is not in a graph")
        if other is block.param_node:
            raise ValueError("cannot insert before a block's param node")
        self._link_between(other.prev, other, block)  # type: ignore[arg-type]
        return self

    def insert_after(self, other: Node) -> Node:
        """Put this (unlinked) node right after ``other`` (after a param node: at the front)."""
        block = other.owning_block
        if block is None:
            raise ValueError("cannot insert after a node that is not in a graph")
        if other is block.return_node:
            raise ValueError("cannot insert after a block's return node")
        if other is block.param_node:
            self._link_between(block.return_node, block.return_node.next, block)  # type: ignore[arg-type]
        else:
            self._link_between(other, other.next, block)  # type: ignore[arg-type]
        return self

    def _unlink(self) -> None:
        assert self.prev is not None and self.next is not None
        self.prev.next = self.next
        self.next.prev = self.prev
        self.prev = self.next = None
        self.owning_block = None
        self.graph._version += 1  # see Graph.version

    def _check_move(self, other: Node, sentinel: str) -> None:
        """Refuse a move before unlinking, so a bad move leaves the graph as it was."""
        block = other.owning_block
        if self.owning_block is None or self.prev is None:
            raise ValueError(f"{self._kind} is not in a block; use insert_before/insert_after")
        if other is self:
            raise ValueError(f"cannot move {self._kind} relative to itself")
        if block is None or other.graph is not self.graph:
            raise ValueError("cannot move a node next to a node that is not in its graph")
        if other is getattr(block, sentinel):
            where = "before a block's param node" if sentinel == "param_node" else "after a block's return node"
            raise ValueError(f"cannot move {self._kind} {where}")
        if self._encloses(other):
            raise ValueError(f"cannot move {self._kind} into one of its own blocks")

    def move_before(self, other: Node) -> None:
        """Move this node right before ``other``, possibly into another block."""
        self._check_move(other, "param_node")
        self._unlink()
        self.insert_before(other)

    def move_after(self, other: Node) -> None:
        """Move this node right after ``other`` (after a param node: to the block's front)."""
        self._check_move(other, "return_node")
        self._unlink()
        self.insert_after(other)

    def destroy(self) -> None:
        """Remove this node from its graph. Its outputs must have no uses left."""
        for value in self._outputs:
            if value._uses:
                users = ", ".join(sorted({user._kind for user, _ in value._uses}))
                raise ValueError(
                    f"cannot destroy {self._kind}: output %{value.debug_name()} is still used by {users}"
                )
        self.remove_all_inputs()
        for block in self._blocks:
            block._destroy()
        self._blocks.clear()
        for value in self._outputs:
            self.graph._forget_name(value)
        if self.owning_block is not None and self.prev is not None:
            self._unlink()
        self.owning_block = None

    # -- ordering ------------------------------------------------------------
    def _same_block_ancestors(self, other: Node) -> tuple[Node, Node] | None:
        """Walk both nodes up to ancestors that share a block."""
        a, b = self, other
        depth_a, depth_b = a._depth(), b._depth()
        while depth_a > depth_b:
            a = a.owning_block.owning_node  # type: ignore[union-attr,assignment]
            depth_a -= 1
        while depth_b > depth_a:
            b = b.owning_block.owning_node  # type: ignore[union-attr,assignment]
            depth_b -= 1
        while a.owning_block is not b.owning_block:
            a = a.owning_block.owning_node  # type: ignore[union-attr,assignment]
            b = b.owning_block.owning_node  # type: ignore[union-attr,assignment]
            if a is None or b is None:
                return None
        return a, b

    def _depth(self) -> int:
        depth, node = 0, self
        while node.owning_block is not None and node.owning_block.owning_node is not None:
            node = node.owning_block.owning_node
            depth += 1
        return depth

    def _compare_positions(self, other: Node) -> tuple[int, int]:
        """Positions of the ancestors of both nodes that share a block (TorchScript's rule:
        a control-flow node and a node nested inside it compare equal)."""
        if self.owning_block is other.owning_block:
            return self.topo_position, other.topo_position
        pair = self._same_block_ancestors(other)
        if pair is None:
            raise ValueError("nodes are in different graphs")
        a, b = pair
        return a.topo_position, b.topo_position

    def is_before(self, other: Node) -> bool:
        """True if this node runs before ``other``. Nodes in different blocks compare
        through their ancestors that share a block; like TorchScript, a node is neither
        before nor after the nodes nested inside it."""
        mine, theirs = self._compare_positions(other)
        return mine < theirs

    def is_after(self, other: Node) -> bool:
        mine, theirs = self._compare_positions(other)
        return mine > theirs

    def _encloses(self, other: Node) -> bool:
        node: Node | None = other
        while node is not None and node.owning_block is not None:
            node = node.owning_block.owning_node
            if node is self:
                return True
        return False

    def is_dominated_by(self, dominator: Node) -> bool:
        """True if ``dominator`` runs before this node on every path to it."""
        node: Node | None = self
        while node is not None:
            if node.owning_block is dominator.owning_block:
                return node is dominator or dominator.topo_position < node.topo_position
            node = node.owning_block.owning_node if node.owning_block else None
        return False

    # -- attributes ----------------------------------------------------------
    def _set_attr(self, name: str, kind: AttributeKind, value: Any) -> Node:
        self._attrs[name] = (kind, value)
        self.graph._version += 1  # see Graph.version
        return self

    def _get_attr(self, name: str, kind: AttributeKind) -> Any:
        try:
            actual, value = self._attrs[name]
        except KeyError:
            raise KeyError(f"{self._kind} has no attribute {name!r}") from None
        if actual is not kind:
            raise TypeError(f"attribute {name!r} of {self._kind} is of kind {actual}, not {kind}")
        return value

    def attribute_names(self) -> list[str]:
        # ("^name"/"^scalars": a Python op's call, kept with the attributes: see ir/python_op.py)
        return [name for name in self._attrs if name[0] != "^"]


    def has_attribute(self, name: str) -> bool:
        return name in self._attrs


    def has_attributes(self) -> bool:
        return bool(self._attrs)


    def attribute_kind(self, name: str) -> AttributeKind:
        return self._attrs[name][0]

    def attribute(self, name: str) -> Any:
        """The value of an attribute of any kind."""
        return self._attrs[name][1]

    def remove_attribute(self, name: str) -> None:
        del self._attrs[name]
        self.graph._version += 1  # see Graph.version

    def copy_attributes(self, other: Node, deep_graphs: bool = False) -> Node:
        self._attrs = {
            name: (kind, copy_attribute_value(kind, value, deep_graphs))
            for name, (kind, value) in other._attrs.items()
        }
        self.graph._version += 1  # see Graph.version
        return self

    def i(self, name: str) -> int:
        return self._get_attr(name, AttributeKind.i)

    def f(self, name: str) -> float:
        return self._get_attr(name, AttributeKind.f)

    def s(self, name: str) -> str:
        return self._get_attr(name, AttributeKind.s)

    def is_(self, name: str, value: Sequence[int] | None = None) -> Any:
        """Read an int-list attribute; with a value, set it as torch._C's ``Node.is_`` does."""
        if value is not None:
            return self.is__(name, value)
        return list(self._get_attr(name, AttributeKind.is_))

    def fs(self, name: str) -> list[float]:
        return list(self._get_attr(name, AttributeKind.fs))

    def ss(self, name: str) -> list[str]:
        return list(self._get_attr(name, AttributeKind.ss))

    def t(self, name: str) -> Any:
        return self._get_attr(name, AttributeKind.t)

    def g(self, name: str) -> Graph:
        return self._get_attr(name, AttributeKind.g)

    def gs(self, name: str) -> list[Graph]:
        return list(self._get_attr(name, AttributeKind.gs))

    def ty(self, name: str) -> Type:
        return self._get_attr(name, AttributeKind.ty)

    def tys(self, name: str) -> list[Type]:
        return list(self._get_attr(name, AttributeKind.tys))

    def ival(self, name: str) -> Any:
        return self._get_attr(name, AttributeKind.ival)

    def i_(self, name: str, value: int) -> Node:
        return self._set_attr(name, AttributeKind.i, int(value))

    def f_(self, name: str, value: float) -> Node:
        return self._set_attr(name, AttributeKind.f, float(value))

    def s_(self, name: str, value: str) -> Node:
        return self._set_attr(name, AttributeKind.s, str(value))

    def is__(self, name: str, value: Sequence[int]) -> Node:
        return self._set_attr(name, AttributeKind.is_, tuple(int(v) for v in value))

    def fs_(self, name: str, value: Sequence[float]) -> Node:
        return self._set_attr(name, AttributeKind.fs, tuple(float(v) for v in value))

    def ss_(self, name: str, value: Sequence[str]) -> Node:
        return self._set_attr(name, AttributeKind.ss, tuple(value))

    def t_(self, name: str, value: Any) -> Node:
        return self._set_attr(name, AttributeKind.t, value)

    def g_(self, name: str, value: Graph) -> Node:
        return self._set_attr(name, AttributeKind.g, value)

    def gs_(self, name: str, value: Sequence[Graph]) -> Node:
        return self._set_attr(name, AttributeKind.gs, list(value))

    def ty_(self, name: str, value: Type) -> Node:
        return self._set_attr(name, AttributeKind.ty, value)

    def tys_(self, name: str, value: Sequence[Type]) -> Node:
        return self._set_attr(name, AttributeKind.tys, list(value))

    def ival_(self, name: str, value: Any) -> Node:
        return self._set_attr(name, AttributeKind.ival, value)

    # -- schemas -------------------------------------------------------------
    def maybe_schema(self) -> FunctionSchema | None:
        """The registered schema this node's kind and input types resolve to, if any."""
        if self._schema is False:
            self._schema = resolve_schema(self)
        return self._schema  # type: ignore[return-value]

    def schema(self) -> FunctionSchema:
        schema = self.maybe_schema()
        if schema is None:
            from .printer import node_summary

            raise LookupError(f"no registered schema matches {node_summary(self)}")
        return schema

    def matches(self, schema: str | FunctionSchema) -> bool:
        """True if this node is a call of ``schema`` (kind, input count and input types)."""
        return node_matches(self, schema)

    def named_input(self, name: str) -> Value:
        """The input bound to the schema argument called ``name``."""
        schema = self.schema()
        index = schema.argument_index(name)
        if index is None:
            raise KeyError(f"{schema.qualified_name} has no argument {name!r}")
        return self._inputs[index]

    def walk(self) -> Iterator[Node]:
        """This node's nested nodes, in order, without recursion."""
        return walk_blocks(self._blocks)


def walk_blocks(blocks: Iterable[Block]) -> Iterator[Node]:
    """Every node inside ``blocks``, nested ones included, in program order, without recursion."""
    stack: list[Iterator[Node]] = [_chain_nodes(blocks)]
    while stack:
        node = next(stack[-1], None)
        if node is None:
            stack.pop()
            continue
        yield node
        if node._blocks:
            stack.append(_chain_nodes(node._blocks))


def _chain_nodes(blocks: Iterable[Block]) -> Iterator[Node]:
    for block in blocks:
        yield from block.nodes()
