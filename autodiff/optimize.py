"""Optimize: tidy the forward graph and the reverse block before splitting them.

Five steps, each its own function so the trace can show it:

* ``lift_constants``: constants the reverse block reads from the forward
  graph are copied into the reverse block, so they are not captured.
* ``fold_size_if_not_equal``: when both shapes are known at compile time,
  ``_size_if_not_equal(size(a), size(b))`` is replaced by its value (a
  constant size, or None when no broadcasting happened), so the size is
  neither computed in the forward pass nor captured.
* ``eliminate_common_subexpression`` on the forward graph.
* ``deduplicate_size_captures``: when the backward captures both a tensor
  and that tensor's size, it recomputes the size from the tensor instead of
  capturing it twice.
* ``eliminate_dead_code_in_reverse``: drop unused gradient computations and
  forget their entries in ``grad_map``.
"""

from __future__ import annotations

from gradview.ir import Block, Graph, Node, TensorType, Value
from gradview.ir.passes import eliminate_common_subexpression, eliminate_dead_code
from gradview.ir.passes.registry import (
    ELIMINATE_COMMON_SUBEXPRESSION,
    ELIMINATE_DEAD_CODE,
    PassInfo,
    Phase,
)

from .gradient import Gradient
from .reverse import ReverseDetails

__all__ = [
    "lift_constants",
    "fold_size_if_not_equal",
    "deduplicate_size_captures",
    "eliminate_dead_code_in_reverse",
    "reverse_captures",
    "OPTIMIZE_STEPS",
]


def _inside(node: Node, container: Block) -> bool:
    block: Block | None = node.owning_block
    while block is not None:
        if block is container:
            return True
        owner = block.owning_node
        block = owner.owning_block if owner is not None else None
    return False


def _all_nodes(block: Block) -> list[Node]:
    found: list[Node] = []
    work = [block]
    while work:
        current = work.pop()
        for node in current.nodes():
            found.append(node)
            work.extend(node.blocks())
        found.append(current.return_node)
    return found


def lift_constants(grad: Gradient, rev: ReverseDetails) -> bool:
    """Copy forward-graph constants used in the reverse block to its start."""
    graph = grad.f
    block = rev.reverse_block
    changed = False
    copies: dict[Value, Value] = {}
    for node in _all_nodes(block):
        for index, value in enumerate(node.inputs()):
            producer = value.node
            if producer.kind() != "prim::Constant" or _inside(producer, block):
                continue
            copy = copies.get(value)
            if copy is None:
                clone = graph.create_clone(producer, lambda v: v)
                block.prepend_node(clone)
                copy = copies[value] = clone.output()
            node.replace_input(index, copy)
            changed = True
    return changed


def fold_size_if_not_equal(grad: Gradient, rev: ReverseDetails) -> bool:
    """Replace ``_size_if_not_equal`` results the shapes already decide by constants."""
    graph = grad.f
    changed = False
    for node in _all_nodes(rev.reverse_block):
        for index, value in enumerate(node.inputs()):
            producer = value.node
            if producer.kind() != "aten::_size_if_not_equal":
                continue
            sizes = [_concrete_size_of(v) for v in producer.inputs()]
            if sizes[0] is None or sizes[1] is None:
                continue
            with graph.insert_point(node):
                constant = graph.insert_constant(list(sizes[0]) if sizes[0] != sizes[1] else None)
            node.replace_input(index, constant)
            changed = True
    return changed


def _concrete_size_of(size_value: Value) -> tuple[int, ...] | None:
    """The known sizes of ``t`` where ``size_value`` is ``aten::size(t)``."""
    node = size_value.node
    if node.kind() != "aten::size" or len(node.inputs()) != 1:
        return None
    type_ = node.input().type()
    if not isinstance(type_, TensorType) or type_.sizes is None or None in type_.sizes:
        return None
    return tuple(type_.sizes)  # type: ignore[arg-type]


def eliminate_common_subexpression_in_forward(grad: Gradient, rev: ReverseDetails) -> bool:
    """CSE on the forward graph: the formulas' forward halves often compute the
    same thing twice (``size(%y)`` for two uses of ``%y``); merging them means
    fewer nodes and fewer values for the backward pass to capture."""
    return eliminate_common_subexpression(grad.f)


def reverse_captures(graph: Graph) -> list[Value]:
    """Forward values the reverse block uses, in topological order (inputs first)."""
    captured: list[Value] = []
    seen: set[Value] = set()
    primal = graph.block

    def check(value: Value) -> None:
        if value in seen:
            return
        if any(user.owning_block is not primal for user, _ in value._uses):
            seen.add(value)
            captured.append(value)

    for value in graph.inputs():
        check(value)
    for node in graph.nodes():
        for value in node.outputs():
            check(value)
    return captured


def deduplicate_size_captures(grad: Gradient, rev: ReverseDetails) -> bool:
    """Recompute ``size(x)`` in the backward when ``x`` is captured anyway."""
    graph = grad.f
    primal = graph.block
    captures = reverse_captures(graph)
    captured = set(captures)
    changed = False
    for value in captures:
        node = value.node
        if node.kind() != "aten::size" or len(node.inputs()) != 1 or node.owning_block is not primal:
            continue
        if any(user.owning_block is primal for user, _ in value._uses):
            continue
        if node.input() not in captured:
            continue
        first = next(rev.reverse_block.nodes(), None)
        with graph.insert_point(first if first is not None else rev.reverse_block):
            size = graph.insert("aten::size", [node.input()])
        value.replace_all_uses_with(size)  # type: ignore[arg-type]
        node.destroy()
        changed = True
    return changed


def eliminate_dead_code_in_reverse(grad: Gradient, rev: ReverseDetails) -> bool:
    """DCE on the reverse block; gradients that died are dropped from ``grad_map``."""

    def forget(live: set[Value]) -> None:
        for value in [v for v, g in rev.grad_map.items() if g not in live]:
            del rev.grad_map[value]

    return eliminate_dead_code(rev.reverse_block, live_values_callback=forget)


# Differentiate's Optimize steps, in order. CSE and DCE keep the generic
# passes' names (what TorchScript's trace shows), as steps of their own.
OPTIMIZE_STEPS: tuple[PassInfo, ...] = (
    PassInfo("liftConstants", lift_constants, Phase.DIFFERENTIATE),
    PassInfo("foldSizeIfNotEqual", fold_size_if_not_equal, Phase.DIFFERENTIATE),
    PassInfo(ELIMINATE_COMMON_SUBEXPRESSION.name, eliminate_common_subexpression_in_forward, Phase.DIFFERENTIATE),
    PassInfo("deduplicateSizeCaptures", deduplicate_size_captures, Phase.DIFFERENTIATE),
    PassInfo(ELIMINATE_DEAD_CODE.name, eliminate_dead_code_in_reverse, Phase.DIFFERENTIATE),
)
