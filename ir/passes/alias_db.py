"""AliasDb: which values may share memory, which nodes read or write it, and
which nodes can be moved without changing what the program computes.

Passes that delete, merge or reorder nodes ask it two questions:

* *Is this node free of effects?* A node with side effects (printing,
  raising, in-place writes) must stay where it is and must not be removed.
* *Can node n move next to node m?* ``move_before_topologically_valid`` moves
  n (and, if needed, the nodes that must travel with it) so that every value
  is still defined before it is used, and no read of a tensor crosses a
  write to the same memory.

The model is TorchScript's, simplified: values of mutable types (tensors,
lists, tuples and dicts of them) are grouped into alias sets. A view op's
output joins its input's set (the schema says ``Tensor(a) -> Tensor(a)``), a
container joins the sets of its elements, and an operator gradview knows
nothing about joins everything it touches to a single "wildcard" set.
"""

from __future__ import annotations

from ..constants import constant_value
from ..graph import Graph
from ..node import Node, Value
from ..operators import PRIM_OPS
from ..types import DictType, FutureType, ListType, OptionalType, TensorType, TupleType, Type

__all__ = [
    "AliasDb", "SIDE_EFFECT_KINDS", "LIST_MUTATION_KINDS", "is_mutable_type", "has_effects", "running_stats_written",
]

# Kinds whose effect is more than their outputs, as TorchScript's
# Node::hasSideEffects lists them.
SIDE_EFFECT_KINDS = frozenset({
    "prim::Print", "prim::RaiseException", "prim::SetAttr", "aten::warn", "aten::save",
    "aten::manual_seed", "prim::CallFunction", "prim::CallMethod", "prim::BailOut",
    "prim::BailoutTemplate", "prim::PythonOp", "prim::rpc_async", "prim::Enter", "prim::Exit",
    "prim::profile", "prim::profile_ivalue", "prim::AddStatValue", "prim::TimePoint",
})

# Prims that only build, take apart or pass through values.
_CONTAINER_PRIMS = frozenset({
    "prim::ListConstruct", "prim::TupleConstruct", "prim::DictConstruct", "prim::ListUnpack",
    "prim::TupleUnpack", "prim::TupleIndex", "prim::TupleSlice", "prim::unchecked_cast",
    "prim::ConstantChunk",
})

# Prims with no effect and fresh (non-aliasing) outputs.
_PURE_PRIMS = frozenset({
    "prim::Constant", "prim::AutogradZero", "prim::AutogradAdd", "prim::AutogradAnyNonZero",
    "prim::AutogradAllZero", "prim::AutogradAllNonZero", "prim::BroadcastSizes",
    "prim::ChunkSizes", "prim::device", "prim::dtype", "prim::requires_grad", "prim::shape",
    "prim::NumToTensor", "prim::Uninitialized", "prim::DifferentiableGraph",
    "prim::FallbackGraph", "prim::RequiresGradCheck", "prim::TypeCheck", "prim::If",
    "prim::Loop", "prim::GradOf", "prim::min", "prim::max", "aten::__is__", "aten::__isnot__",
    "prim::layout", "prim::is_cuda", "prim::data",
})


LIST_MUTATION_KINDS = frozenset({
    "aten::append", "aten::insert", "aten::pop", "aten::clear", "aten::extend", "aten::_set_item",
    "aten::__setitem__", "aten::remove", "aten::reverse",
})


# Normalizations that update their running statistics (inputs 3 and 4) in place
# when their training flag (input 5) is True: their schemas do not say so, and
# TorchScript's AliasDb special-cases them the same way.
_RUNNING_STATS_WRITERS = frozenset({
    "aten::batch_norm", "aten::native_batch_norm", "aten::_native_batch_norm_legit",
    "aten::instance_norm", "aten::_batch_norm_impl_index",
})


def running_stats_written(node: Node) -> list[Value]:
    """The running_mean/running_var inputs a normalization writes (unless training is
    the constant False)."""
    if node.kind() not in _RUNNING_STATS_WRITERS or len(node.inputs()) < 6:
        return []
    if constant_value(node.inputs()[5]) is False:
        return []
    return [v for v in node.inputs()[3:5] if isinstance(v.type(), TensorType | OptionalType) and constant_value(v) is not None]


def _own_effects(node: Node) -> bool:
    """Side effects or writes of this node alone, judged from its kind and schema."""
    kind = node.kind()
    if kind in SIDE_EFFECT_KINDS or kind in LIST_MUTATION_KINDS:
        return True
    if kind in _CONTAINER_PRIMS or kind in _PURE_PRIMS:
        return False
    schema = node.maybe_schema()
    if schema is None:
        # Unknown operators may write what they touch (and unknown prims may do anything).
        return any(is_mutable_type(v.type()) for v in node.inputs()) or not kind.startswith("aten::")
    return schema.is_mutable or bool(running_stats_written(node))


def has_effects(node: Node) -> bool:
    """Does ``node`` (or a node nested in it) do more than compute its outputs?

    The cheap question dead code elimination asks; it needs no alias sets.
    """
    if _own_effects(node):
        return True
    return bool(node._blocks) and any(_own_effects(inner) for inner in node.walk())


def is_mutable_type(type_: Type) -> bool:
    """Values of these types can share memory with others (tensors and containers)."""
    if isinstance(type_, TensorType):
        return True
    if isinstance(type_, ListType | DictType):
        return True
    if isinstance(type_, TupleType):
        return any(is_mutable_type(e) for e in type_.elems)
    if isinstance(type_, OptionalType):
        return is_mutable_type(type_.elem)
    if isinstance(type_, FutureType):
        return True
    return str(type_) in ("Any", "t", "t1", "t2")


class AliasDb:
    """Alias sets, reads, writes and side effects of every node of a graph."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self._parent: dict[Value, Value] = {}
        self._wildcard: Value | None = None
        self._writes: dict[Node, frozenset[Value]] = {}
        self._reads: dict[Node, frozenset[Value]] = {}
        self._effects: dict[Node, bool] = {}
        self._written: set[Value] | None = None
        for node in graph.all_nodes():
            self._analyze(node)

    # -- alias sets (union-find on values) ----------------------------------------
    def _find(self, value: Value) -> Value:
        parent = self._parent.get(value)
        if parent is None:
            return value
        root = value
        while parent is not None:
            root = parent
            parent = self._parent.get(root)
        # Path compression keeps later lookups O(1) amortized.
        while value is not root:
            following = self._parent[value]
            self._parent[value] = root
            value = following
        return root

    def _union(self, a: Value, b: Value) -> None:
        ra, rb = self._find(a), self._find(b)
        if ra is not rb:
            self._parent[ra] = rb

    def _to_wildcard(self, value: Value) -> None:
        if self._wildcard is None:
            self._wildcard = value
        else:
            self._union(value, self._wildcard)

    def alias_set(self, value: Value) -> Value:
        """A representative of the values ``value`` may share memory with."""
        return self._find(value)

    def may_alias(self, a: Value, b: Value) -> bool:
        if not (is_mutable_type(a.type()) and is_mutable_type(b.type())):
            return False
        return self._find(a) is self._find(b)

    # -- per-node facts --------------------------------------------------------------
    def _analyze(self, node: Node) -> None:
        kind = node.kind()
        mutable_inputs = [v for v in node.inputs() if is_mutable_type(v.type())]
        mutable_outputs = [v for v in node.outputs() if is_mutable_type(v.type())]
        writes: list[Value] = []
        effects = kind in SIDE_EFFECT_KINDS
        if kind in _CONTAINER_PRIMS:
            for value in mutable_outputs:
                for other in mutable_inputs:
                    self._union(value, other)
        elif kind in ("prim::If", "prim::Loop", "prim::GradOf"):
            for block in node.blocks():
                for out, inner in zip(node.outputs(), _carried_results(node, block), strict=False):
                    if is_mutable_type(out.type()) and is_mutable_type(inner.type()):
                        self._union(out, inner)
            if kind == "prim::Loop":
                body = node.blocks()[0]
                for initial, param in zip(node.inputs()[2:], body.inputs()[1:], strict=False):
                    if is_mutable_type(param.type()):
                        self._union(param, initial)
        elif kind in _PURE_PRIMS:
            pass
        else:
            schema = node.maybe_schema()
            if schema is None:
                # Unknown operator: it may alias or write anything it touches.
                for value in mutable_inputs + mutable_outputs:
                    self._to_wildcard(value)
                writes.extend(mutable_inputs)
                effects = effects or kind not in PRIM_OPS and not kind.startswith("aten::")
            else:
                sets: dict[str, Value] = {}
                for arg, value in zip(schema.arguments, node.inputs(), strict=False):
                    if arg.alias and is_mutable_type(value.type()):
                        name = arg.alias.split("->")[0].strip().rstrip("!")
                        sets[name] = value
                        if arg.is_write:
                            writes.append(value)
                for ret, value in zip(schema.returns, node.outputs(), strict=False):
                    if ret.alias and is_mutable_type(value.type()):
                        name = ret.alias.rstrip("!")
                        source = sets.get(name)
                        if source is not None:
                            self._union(value, source)
                        elif name == "*":
                            self._to_wildcard(value)
                if kind in LIST_MUTATION_KINDS:
                    writes.extend(v for v in node.inputs()[:1] if is_mutable_type(v.type()))
                writes.extend(running_stats_written(node))
        self._writes[node] = frozenset(writes)
        self._reads[node] = frozenset(mutable_inputs)
        self._effects[node] = effects

    def writes(self, node: Node) -> set[Value]:
        """Alias-set representatives this node (or any node inside it) writes to."""
        result = {self._find(v) for v in self._writes.get(node, ())}
        if not node._blocks:
            return result
        for inner in node.walk():
            result.update(self._find(v) for v in self._writes.get(inner, ()))
        return result

    def reads(self, node: Node) -> set[Value]:
        result = {self._find(v) for v in self._reads.get(node, ())}
        if not node._blocks:
            return result
        for inner in node.walk():
            result.update(self._find(v) for v in self._reads.get(inner, ()))
        return result

    def has_side_effects(self, node: Node) -> bool:
        """True for prints, raises, attribute writes and unknown ops, nested ones included."""
        if self._effects.get(node, node.kind() in SIDE_EFFECT_KINDS):
            return True
        if not node._blocks:
            return False
        return any(self._effects.get(inner, inner.kind() in SIDE_EFFECT_KINDS) for inner in node.walk())

    def has_writers(self, value: Value) -> bool:
        """Does any node write to memory ``value`` may share?"""
        if not is_mutable_type(value.type()):
            return False
        if self._written is None:
            self._written = {self._find(v) for written in self._writes.values() for v in written}
        return self._find(value) in self._written

    def is_mutating(self, node: Node) -> bool:
        if not node._blocks:
            return bool(self._writes.get(node))
        return bool(self.writes(node))

    def refresh(self, node: Node) -> None:
        """Re-analyze a node created or changed after construction (e.g. a new subgraph node)."""
        for inner in [node, *node.walk()]:
            self._analyze(inner)
        self._written = None

    # -- moving nodes ------------------------------------------------------------------
    def move_before_topologically_valid(self, node: Node, target: Node) -> bool:
        """Move ``node`` to just before ``target`` if that keeps the program's meaning.

        Nodes between them that must keep their order relative to ``node`` move
        along (to ``target``'s other side when ``node`` moves down). Returns
        False, changing nothing, when the move is impossible.
        """
        return self._try_move(node, target, before=True)

    def move_after_topologically_valid(self, node: Node, target: Node) -> bool:
        """Move ``node`` to just after ``target`` if valid (see move_before_topologically_valid)."""
        return self._try_move(node, target, before=False)

    def could_move_before_topologically(self, node: Node, target: Node) -> bool:
        return self._plan_move(node, target, before=True) is not None

    def _try_move(self, node: Node, target: Node, before: bool) -> bool:
        plan = self._plan_move(node, target, before)
        if plan is None:
            return False
        ahead, behind = plan
        # ``ahead`` lands just before target and ``behind`` just after it, each in order.
        for moving in ahead:
            moving.move_before(target)
        anchor = target
        for moving in behind:
            moving.move_after(anchor)
            anchor = moving
        return True

    def _plan_move(self, node: Node, target: Node, before: bool) -> tuple[list[Node], list[Node]] | None:
        """Which nodes go just before and just after ``target``; None if impossible."""
        if node.owning_block is not target.owning_block or node.owning_block is None:
            return None
        if node is target or (before and node.next is target) or (not before and node.prev is target):
            return [], []
        if self.has_side_effects(node):
            return None
        down = node.is_before(target)
        group = _Group(self, node)
        current = node.next if down else node.prev
        while current is not target:
            if self.has_side_effects(current):
                return None
            # Going down, the nodes that need the group come along; going up,
            # the nodes the group needs do.
            needs = group.is_used_by(current) if down else group.uses(current)
            if needs or group.conflicts(current):
                group.add(current)
            current = current.next if down else current.prev  # type: ignore[assignment]
        members = group.nodes_in_order()
        others = [n for n in members if n is not node]
        rest = _Group.of(self, others)
        if down and before:
            # node stops just before target; what depends on node goes after target.
            if rest is not None and (rest.is_used_by(target) or rest.conflicts(target)):
                return None
            return [node], others
        if down:
            # Everything moves past target, which must not need any of it.
            if group.is_used_by(target) or group.conflicts(target):
                return None
            return [], members
        if before:
            # node and what it needs move above target, which they must not need.
            if group.uses(target) or group.conflicts(target):
                return None
            return members, []
        # node stops just after target; what it needs goes above target.
        if rest is not None and (rest.uses(target) or rest.conflicts(target)):
            return None
        return others, [node]


def _carried_results(node: Node, block: object) -> list[Value]:
    outputs = block.outputs()  # type: ignore[attr-defined]
    return outputs[1:] if node.kind() == "prim::Loop" else outputs


class _Group:
    """Nodes that must move together: their inputs, outputs, reads and writes."""

    def __init__(self, db: AliasDb, first: Node) -> None:
        self.db = db
        self.members: list[Node] = []
        self.inputs: set[Value] = set()
        self.outputs: set[Value] = set()
        self.reads: set[Value] = set()
        self.writes: set[Value] = set()
        self.add(first)

    @staticmethod
    def of(db: AliasDb, nodes: list[Node]) -> _Group | None:
        if not nodes:
            return None
        group = _Group(db, nodes[0])
        for node in nodes[1:]:
            group.add(node)
        return group

    def add(self, node: Node) -> None:
        self.members.append(node)
        self.inputs.update(_consumed(node))
        for inner in [node, *node.walk()]:
            self.outputs.update(inner.outputs())
        self.reads |= self.db.reads(node)
        self.writes |= self.db.writes(node)

    def uses(self, other: Node) -> bool:
        """Does the group consume a value ``other`` defines?"""
        return any(v in self.inputs for v in other.outputs())

    def is_used_by(self, other: Node) -> bool:
        """Does ``other`` (or a node inside it) consume a value the group defines?"""
        return any(v in self.outputs for v in _consumed(other))

    def conflicts(self, other: Node) -> bool:
        writes = self.db.writes(other)
        if not writes and not self.writes:
            return False
        return bool(writes & (self.reads | self.writes) or self.writes & self.db.reads(other))

    def nodes_in_order(self) -> list[Node]:
        return sorted(self.members, key=lambda n: n.topo_position)


def _consumed(node: Node) -> list[Value]:
    """Values ``node`` reads: its inputs and, inside its blocks, the inputs of
    nested nodes and the values the blocks return (an ``if`` returning ``%v``
    from a branch uses ``%v`` as surely as a node taking it as input)."""
    if not node._blocks:
        return node._inputs
    consumed = list(node._inputs)
    for inner in node.walk():
        consumed.extend(inner._inputs)
    stack = list(node._blocks)
    while stack:
        block = stack.pop()
        consumed.extend(block.return_node._inputs)
        stack.extend(b for inner in block.nodes() for b in inner._blocks)
    return consumed
