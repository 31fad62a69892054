"""Trace a gradient back: which backward ops compute it, and which forward ops they differentiate.

A DifferentiableGraph's backward graph ``df`` returns one gradient per input
of ``f`` that needs one (a *vjp output*). Reading ``df`` to see how one of
them is made is slow work: the gradient of ``w1`` in ``relu(x @ w1 + b1) @ w2``
flows back through the GradOf blocks of the second matmul, the add, the relu
and the first matmul, and each GradOf block differentiates one forward op.

``gradient_path`` answers it from the recorded trace: starting at a gradient
df returns (or at any node of df), it walks back through the nodes that
produce it, down to df's inputs (the incoming gradients and the values
captured from ``f``), and maps every ``prim::GradOf`` on the way to the
forward node it differentiates. The viewer lights the result in the
backward, forward and joint views.
"""

from __future__ import annotations

from dataclasses import dataclass

from gradview.runtime.gradient_wiring import gradient_wiring
from gradview.runtime.pass_trace import PassTrace
from gradview.runtime.trace_records import BlockRecord, NodeRecord, walk_records

from .trace_steps import backward_step, forward_step, grad_of_links, gradient_notes

__all__ = ["GradientPath", "gradient_path"]


@dataclass(frozen=True)
class GradientPath:
    """One gradient of df traced back.

    ``gradient``: df's value for it (one of its vjp outputs, or the output of
    the node the walk started from); ``df_nodes``: the df nodes it is
    computed through; ``df_inputs``: df's inputs it reads; ``f_nodes``: the
    forward nodes whose GradOf blocks are on the way; ``f_input``: the input
    of f it is the gradient of (None when the walk did not start at a vjp
    output).
    """

    gradient: int
    df_nodes: frozenset[int]
    df_inputs: frozenset[int]
    f_nodes: frozenset[int]
    f_input: int | None


def gradient_path(trace: PassTrace, index: int, dg: int, start: int) -> GradientPath | None:
    """Trace back, at step ``index``, the gradient ``start`` of DifferentiableGraph ``dg``.

    ``start`` is a df value id (a vjp output, say) or a df node id (the walk
    starts at its outputs). None when df does not exist yet at ``index`` or
    ``start`` is not in it.
    """
    step = backward_step(trace, index, dg)
    if step is None:
        return None
    df = step.graph
    producers = _producers(df)
    nodes = {node.id: node for node in walk_records(df, subgraphs=False)}
    params = {param.id for param in df.params}
    if start in nodes:
        roots = [value.id for value in nodes[start].outputs]
        gradient = roots[0] if roots else start
    elif start in producers or start in params:
        roots = [start]
        gradient = start
    else:
        return None
    found_nodes: set[int] = set()
    found_inputs: set[int] = set()
    stack = list(roots)
    seen: set[int] = set()
    while stack:
        value = stack.pop()
        if value in seen:
            continue
        seen.add(value)
        if value in params:
            found_inputs.add(value)
            continue
        node = producers.get(value)
        if node is None or node.id in found_nodes:
            continue
        for member in _with_blocks(node):
            found_nodes.add(member.id)
            stack.extend(member.inputs)
            for block in member.blocks:
                stack.extend(block.returns)
    links = grad_of_links(trace, index)
    f_nodes = {links[n] for n in found_nodes if n in links}
    return GradientPath(
        gradient=gradient,
        df_nodes=frozenset(found_nodes),
        df_inputs=frozenset(found_inputs),
        f_nodes=frozenset(f_nodes),
        f_input=_f_input(trace, index, dg, df, gradient),
    )


def _producers(graph: BlockRecord) -> dict[int, NodeRecord]:
    """Value id -> the node (at any depth) that outputs it."""
    found: dict[int, NodeRecord] = {}
    for node in walk_records(graph, subgraphs=False):
        for value in node.outputs:
            found[value.id] = node
    return found


def _with_blocks(node: NodeRecord) -> list[NodeRecord]:
    """``node`` and every node of its blocks: a GradOf block is one op's whole gradient."""
    members = [node]
    for block in node.blocks:
        members.extend(walk_records(block, subgraphs=False))
    return members


def _f_input(trace: PassTrace, index: int, dg: int, df: BlockRecord, gradient: int) -> int | None:
    notes = gradient_notes(trace, index, dg)
    if notes is None:
        return None
    forward = forward_step(trace, index, dg)
    wiring = gradient_wiring(forward.graph if forward is not None else None, df, notes)
    for position, value in enumerate(wiring.vjp_outputs_df):
        if value == gradient and position < len(wiring.vjp_outputs_f):
            return wiring.vjp_outputs_f[position]
    return None
