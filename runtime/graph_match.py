"""Match two versions of a graph structurally, so a trace can show them as the same nodes.

A JIT log dumps the graph as text after each pass; each dump parses to new
objects. :func:`match_graphs` pairs the nodes and values of a dump with those
of the previous dump of the same graph: graph inputs by position, then each
node, in program order, with an unmatched earlier node of the same kind,
attributes and (already matched) inputs; failing that, with one of the same
kind whose first output has the same name. An unchanged dump is matched
completely, so it reads as ``+0 -0``. Linear in the size of the graphs.
"""

from __future__ import annotations

from collections import defaultdict, deque
from typing import Any

from gradview.ir import Block, Graph, Node, Value
from gradview.ir.attributes import AttributeKind, format_attribute

__all__ = ["match_graphs"]


def match_graphs(old: Graph, new: Graph) -> dict[Any, Any]:
    """``{old node or value: its counterpart in new}`` for every pair matched."""
    pairs: dict[Any, Any] = {}
    _match_block(old.block, new.block, {}, pairs)
    return pairs


def _attr_key(node: Node) -> tuple[Any, ...]:
    return tuple(
        (name, "<graph>" if kind is AttributeKind.g else format_attribute(kind, value))
        for name, (kind, value) in sorted(node._attrs.items())
    )


def _match_block(old: Block, new: Block, values: dict[Value, Value], pairs: dict[Any, Any]) -> None:
    """``values`` maps new values to old; ``pairs`` collects old -> new."""
    old_params, new_params = old.param_node._outputs, new.param_node._outputs
    if len(old_params) == len(new_params):
        for before, after in zip(old_params, new_params, strict=True):
            values[after] = before
            pairs[before] = after
    else:  # inputs were added or removed: match what keeps its name
        by_name = {v.debug_name(): v for v in old_params}
        for after in new_params:
            before = by_name.pop(after.debug_name(), None)
            if before is not None:
                values[after] = before
                pairs[before] = after

    exact: dict[tuple[Any, ...], deque[Node]] = defaultdict(deque)
    named: dict[tuple[str, str], deque[Node]] = defaultdict(deque)
    for node in old.nodes():
        exact[(node._kind, tuple(node._inputs), _attr_key(node), len(node._outputs))].append(node)
        if node._outputs:
            named[(node._kind, node._outputs[0].debug_name())].append(node)
    used: set[Node] = set()

    def take(queue: deque[Node] | None) -> Node | None:
        while queue:
            candidate = queue.popleft()
            if candidate not in used:
                return candidate
        return None

    for node in new.nodes():
        inputs = tuple(values.get(v, v) for v in node._inputs)  # an unmatched input matches nothing
        found = take(exact.get((node._kind, inputs, _attr_key(node), len(node._outputs))))
        if found is None and node._outputs:
            found = take(named.get((node._kind, node._outputs[0].debug_name())))
        if found is None:
            continue
        used.add(found)
        pairs[found] = node
        for before, after in zip(found._outputs, node._outputs, strict=False):
            values[after] = before
            pairs[before] = after
        if len(found._blocks) == len(node._blocks):
            for before_block, after_block in zip(found._blocks, node._blocks, strict=True):
                _match_block(before_block, after_block, values, pairs)
        before_g, after_g = found._attrs.get("Subgraph"), node._attrs.get("Subgraph")
        if before_g is not None and after_g is not None and before_g[0] is after_g[0] is AttributeKind.g:
            _match_block(before_g[1].block, after_g[1].block, values, pairs)
