"""``lint(graph)``: check the invariants every pass must keep.

One walk over the graph, without recursion, checks that

* each node sits in the block that its links say, with increasing positions;
* every input is defined before its use, in the same block or an enclosing one
  (values do not leak out of blocks);
* use lists match the inputs exactly, in both directions;
* control-flow nodes have the blocks and arities TorchScript expects;
* debug names are unique.

Errors name the node as it prints and say what to fix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import IRVerifyError
from .node import Use
from .printer import node_summary

if TYPE_CHECKING:
    from .graph import Block, Graph
    from .node import Node, Value

__all__ = ["lint", "check_node_arity"]


def _fail(node: Node, message: str) -> IRVerifyError:
    return IRVerifyError(f"{message}: at `{node_summary(node)}`", node)


def check_node_arity(node: Node) -> str | None:
    """Block and arity rules of TorchScript's control-flow nodes; a message if broken."""
    kind = node._kind
    n_in, n_out, blocks = len(node._inputs), len(node._outputs), node._blocks
    if kind == "prim::If":
        if n_in != 1:
            return f"prim::If takes one condition input, got {n_in}"
        if len(blocks) != 2:
            return f"prim::If needs two blocks (then, else), got {len(blocks)}"
        for index, block in enumerate(blocks):
            if block.param_node._outputs:
                return f"block{index} of prim::If takes no parameters"
            if len(block.return_node._inputs) != n_out:
                return (
                    f"block{index} of prim::If returns {len(block.return_node._inputs)} values "
                    f"but the node has {n_out} outputs"
                )
    elif kind == "prim::Loop":
        if n_in < 2:
            return f"prim::Loop takes a trip count and a condition, got {n_in} inputs"
        carried = n_in - 2
        if len(blocks) != 1:
            return f"prim::Loop needs exactly one block, got {len(blocks)}"
        body = blocks[0]
        if len(body.param_node._outputs) != carried + 1:
            return (
                f"prim::Loop body takes the iteration number and {carried} carried values "
                f"({carried + 1} parameters), got {len(body.param_node._outputs)}"
            )
        if len(body.return_node._inputs) != carried + 1:
            return (
                f"prim::Loop body returns the condition and {carried} carried values "
                f"({carried + 1} results), got {len(body.return_node._inputs)}"
            )
        if n_out != carried:
            return f"prim::Loop has {carried} carried values but {n_out} outputs"
    elif kind in ("prim::GradOf", "prim::Reverse"):
        if len(blocks) != 1:
            return f"{kind} needs exactly one block, got {len(blocks)}"
        if kind == "prim::GradOf" and len(blocks[0].return_node._inputs) != n_out:
            return (
                f"the block of prim::GradOf returns {len(blocks[0].return_node._inputs)} values "
                f"but the node has {n_out} outputs"
            )
    elif kind == "prim::Constant":
        if n_in != 0 or n_out != 1:
            return f"prim::Constant takes no inputs and has one output (got {n_in} in, {n_out} out)"
        if blocks:
            return "prim::Constant has no blocks"
    elif kind in _SUBGRAPH_KINDS:
        return _check_subgraph(node)
    elif blocks and kind not in _BLOCK_KINDS:
        return f"{kind} is not a control-flow node but has {len(blocks)} blocks"
    return None


# Nodes that run their ``Subgraph`` attribute on their inputs (the runtime calls it).
_SUBGRAPH_KINDS = frozenset({"prim::DifferentiableGraph", "prim::FallbackGraph"})


def _check_subgraph(node: Node) -> str | None:
    kind = node._kind
    attribute = node._attrs.get("Subgraph")
    if attribute is None or attribute[1] is None or str(attribute[0]) != "g":
        return (
            f"{kind} needs a Subgraph (printed as {kind}_0 with a `with {kind}_0 = graph(...)` section after the graph)"
        )
    subgraph = attribute[1]
    if len(subgraph.inputs()) != len(node._inputs):
        return f"{kind}'s Subgraph takes {len(subgraph.inputs())} inputs but the node passes {len(node._inputs)}"
    if len(subgraph.outputs()) < len(node._outputs):
        return f"{kind}'s Subgraph returns {len(subgraph.outputs())} values but the node has {len(node._outputs)} outputs"
    return None


_BLOCK_KINDS = frozenset({
    "prim::If", "prim::Loop", "prim::GradOf", "prim::Reverse", "prim::Closure", "prim::With",
    "prim::Enter", "prim::FusionGroup", "prim::DifferentiableGraph", "prim::TensorExprGroup",
})


def _check_uses(node: Node) -> None:
    for offset, value in enumerate(node._inputs):
        if Use(node, offset) not in value._uses:
            raise _fail(node, f"input {offset} (%{value.debug_name()}) does not list this node among its uses")
    for offset, value in enumerate(node._outputs):
        if value.node is not node or value.offset != offset:
            raise _fail(node, f"output {offset} (%{value.debug_name()}) points at the wrong node or offset")
        for use in value.uses:
            user = use.user
            if use.offset >= len(user._inputs) or user._inputs[use.offset] is not value:
                raise _fail(node, f"%{value.debug_name()} lists a stale use by {user._kind}")
            if user.owning_block is None:
                raise _fail(node, f"%{value.debug_name()} is used by {user._kind}, which was removed from the graph")


class _BlockFrame:
    """Walk state of one open block: its node iterator and what it defined."""

    __slots__ = ("block", "nodes", "scope", "last_position")

    def __init__(self, block: Block) -> None:
        self.block = block
        self.nodes = block.nodes()
        self.scope: list[Value] = []
        self.last_position: int | None = None


def _where_defined(value: Value, user: Node) -> str:
    """Why ``value`` is not visible at ``user``, for lint's message."""
    block = value.node.owning_block
    if block is None:
        return "was removed"
    scope: Block | None = user.owning_block
    while scope is not None:
        if scope is block:
            return "is defined later"
        scope = scope.owning_node.owning_block if scope.owning_node is not None else None
    return "is defined inside a block that does not enclose this use"


def lint(graph: Graph) -> None:
    """Raise IRVerifyError if ``graph`` breaks an IR invariant."""
    names: dict[str, Value] = {}
    defined: set[Value] = set()

    def define(node: Node, scope: list[Value]) -> None:
        for value in node._outputs:
            defined.add(value)
            scope.append(value)
            if value._debug_name is not None:
                other = names.get(value._debug_name)
                if other is not None and other is not value:
                    raise _fail(node, f"debug name %{value._debug_name} is used by two values")
                names[value._debug_name] = value

    def check_inputs(node: Node) -> None:
        for value in node._inputs:
            if value not in defined:
                raise _fail(
                    node,
                    f"%{value.debug_name()} is used before it is defined or outside its block "
                    f"(it {_where_defined(value, node)}); move its definition earlier or pass it "
                    "through the block outputs",
                )

    def open_block(block: Block) -> _BlockFrame:
        if block.param_node.owning_block is not block or block.return_node.owning_block is not block:
            raise IRVerifyError("a block's param or return node belongs to another block")
        frame = _BlockFrame(block)
        _check_uses(block.param_node)
        define(block.param_node, frame.scope)
        return frame

    # The stack holds open blocks and, below the blocks of a control-flow
    # node, that node itself: its outputs are defined once its blocks close.
    stack: list[_BlockFrame | Node] = [open_block(graph.block)]
    while stack:
        top = stack[-1]
        if not isinstance(top, _BlockFrame):
            stack.pop()
            parent = stack[-1]
            assert isinstance(parent, _BlockFrame)
            define(top, parent.scope)
            continue
        node = next(top.nodes, None)
        if node is None:
            ret = top.block.return_node
            _check_uses(ret)
            check_inputs(ret)
            defined.difference_update(top.scope)
            stack.pop()
            continue
        if node.graph is not graph:
            raise _fail(node, "node belongs to another graph")
        if node.owning_block is not top.block:
            raise _fail(node, "node's owning block is not the block that lists it")
        if node.next is None or node.next.prev is not node:
            raise _fail(node, "broken node list links")
        if top.last_position is not None and node.topo_position <= top.last_position:
            raise _fail(node, "topological positions are not increasing")
        top.last_position = node.topo_position
        problem = check_node_arity(node)
        if problem:
            raise _fail(node, problem)
        _check_uses(node)
        check_inputs(node)
        if not node._blocks:
            define(node, top.scope)
            continue
        stack.append(node)
        for sub in reversed(node._blocks):
            if sub.owning_node is not node:
                raise _fail(node, "a block's owning node is wrong")
            stack.append(open_block(sub))
    for name, value in graph._names.items():
        if value._debug_name != name:
            raise IRVerifyError(f"name table entry %{name} points at a value now called %{value.debug_name()}")
