"""What the inspector panel says about the selected node or value: labelled lines.

For a node: its printed IR line, its outputs' types (shapes when every size
is known, requires_grad), where it sits (which graph, which block), who uses
its outputs, whether it is in a DifferentiableGraph and, if not, why, its
role in the Gradient (captured, temporary, vjp, with the list index), its
AutogradZero state, its GradOf partner and what this step did to it.

Every fact comes from the recorded trace: the reasons a node stays out of a
DifferentiableGraph are the ``excluded`` and ``inlined`` annotations that
CreateAutodiffSubgraphs and InlineAutodiffSubgraphs steps carry, written by
the passes themselves. :func:`pass_doc` gives the explanation of a step.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gradview.ir import IRParseError, TensorType, parse_type
from gradview.runtime import (
    CREATE_AUTODIFF_SUBGRAPHS,
    BlockRecord,
    NodeRecord,
    Note,
    PassTrace,
    Step,
    ValueRecord,
    name_table,
    no_differentiable_graph_reason,
    value_names,
)

from .chain_rule import chain_rule_lines
from .marks import grad_of_links, step_marks, zero_states
from .model import Mark, View
from .pass_docs import pass_doc
from .view_steps import (
    backward_step,
    changed_here,
    differentiable_graph_count,
    differentiable_graph_numbers,
    forward_step,
    latest_step,
    node_records,
    previous_graph,
    view_steps,
)
from .views import node_text, short_type

__all__ = ["inspect_node", "inspect_value", "pass_doc"]

Lines = list[tuple[str, str]]

_ROLES = {
    Mark.CAPTURED_INPUT: "captured input {i}: an input of f that df reads (df_input_captured_inputs[{i}])",
    Mark.CAPTURED_OUTPUT: "captured output {i}: a value of f handed to df (df_input_captured_outputs[{i}])",
    Mark.TEMPORARY: "a temporary: f returns it only because df needs it (captured output {i})",
    Mark.VJP_INPUT: "vjp input {i}: the incoming gradient of an output of f, an input of df (df_input_vjps[{i}])",
    Mark.VJP_OUTPUT: "vjp output {i}: the gradient df returns for an input of f (df_output_vjps[{i}])",
}
_STATE_TEXT = {"Zero": "Zero (known undefined)", "Nonzero": "Nonzero (known defined)", "Unknown": "Unknown"}


@dataclass
class _Table:
    """Where everything of one graph is: built once per inspection, linear in its size."""

    nodes: dict[int, NodeRecord] = field(default_factory=dict)
    parent: dict[int, tuple[NodeRecord, str]] = field(default_factory=dict)  # node -> (owner, "block0"/"subgraph")
    values: dict[int, ValueRecord] = field(default_factory=dict)
    producer: dict[int, NodeRecord] = field(default_factory=dict)
    param_of: dict[int, tuple[NodeRecord | None, str, int]] = field(default_factory=dict)
    uses: dict[int, list[str]] = field(default_factory=dict)


def _table(graph: BlockRecord) -> _Table:
    table = _Table()
    pending: list[tuple[BlockRecord, NodeRecord | None, str]] = [(graph, None, "graph")]
    while pending:
        block, owner, where = pending.pop()
        for position, param in enumerate(block.params):
            table.values[param.id] = param
            table.param_of[param.id] = (owner, where, position)
        for node in block.nodes:
            table.nodes[node.id] = node
            if owner is not None:
                table.parent[node.id] = (owner, where)
            for value in node.outputs:
                table.values[value.id] = value
                table.producer[value.id] = node
            user = f"{node.kind} -> " + (", ".join("%" + v.name for v in node.outputs) or "(no outputs)")
            for value in node.inputs:
                table.uses.setdefault(value, []).append(user)
            for index, inner in enumerate(node.blocks):
                pending.append((inner, node, f"block{index}"))
            if node.subgraph is not None:
                pending.append((node.subgraph, node, "subgraph"))
        label = "return" if owner is None else f"{where} return of {owner.kind}"
        for value in block.returns:
            table.uses.setdefault(value, []).append(label)
    return table


def _find(trace: PassTrace, index: int, view: View, dg: int, wanted: int, of_value: bool) -> tuple[Step, _Table] | None:
    """The step holding ``wanted``: those ``view`` shows at ``index`` first, then
    the step itself, then f and df of every DifferentiableGraph as of ``index``."""
    if not 0 <= index < len(trace):
        return None
    candidates = [*view_steps(trace, index, view, dg), trace[index]]
    for k in range(differentiable_graph_count(trace)):
        candidates += [forward_step(trace, index, k), backward_step(trace, index, k)]
    seen: set[int] = set()
    for step in candidates:
        if step is None or step.index in seen:
            continue
        seen.add(step.index)
        table = _table(step.graph)
        if wanted in (table.values if of_value else table.nodes):
            return step, table
    return None


# -- facts ----------------------------------------------------------------------------------
def _type_lines(value: ValueRecord) -> Lines:
    name = "%" + value.name
    lines = [(f"type {name}", short_type(value.type))]
    try:
        parsed = parse_type(value.type)
    except IRParseError:
        return lines
    if not isinstance(parsed, TensorType):
        return lines
    sizes = parsed.sizes
    if sizes is not None and all(s is not None for s in sizes):
        lines.append((f"shape {name}", " x ".join(str(s) for s in sizes) if sizes else "a 0-d tensor (a scalar)"))
    known = {True: "yes", False: "no", None: "not known (may require grad)"}
    lines.append((f"requires_grad {name}", known[parsed.requires_grad]))
    if parsed.undefined:
        lines.append((f"defined {name}", "no: an undefined tensor (AutogradZero)"))
    return lines


def _graph_label(step: Step) -> str:
    which = step.which
    compile_id = step.annotations.get(Note.COMPILE_ID)
    if compile_id is not None:  # torch.compile's graphs: the joint, the forward or the backward
        part = "joint graph" if which.is_main else "forward graph" if which.is_forward else "backward graph"
        return f"the {part} of compiled graph {compile_id}"
    if which.is_backward_executor:
        return f"df of DifferentiableGraph {which.index}, as its own executor compiles it"
    if not which.is_main:
        return f"{'f' if which.is_forward else 'df'} of DifferentiableGraph {which.index}"
    return f"the {which} graph"


def _place(step: Step, table: _Table, node_id: int) -> str:
    chain = []
    current = node_id
    while current in table.parent:
        owner, where = table.parent[current]
        chain.append(f"{where} of {owner.kind} ({owner.id})")
        current = owner.id
    return " > ".join([_graph_label(step), *reversed(chain)])


def _graph_group(step: Step) -> int | None:
    """The k of the DifferentiableGraph whose f or df ``step`` shows, if it shows one."""
    return step.which.index


def _group_of(trace: PassTrace, step: Step, table: _Table, node_id: int) -> int | None:
    """The k of the DifferentiableGraph the node is in, if it is in one."""
    if _graph_group(step) is not None:
        return _graph_group(step)
    current = node_id
    while current in table.parent:
        owner, where = table.parent[current]
        if where == "subgraph" and owner.kind == "prim::DifferentiableGraph":
            return differentiable_graph_numbers(trace, step).get(owner.id)
        current = owner.id
    return None


def _why_outside(trace: PassTrace, step: Step, node_id: int) -> str:
    """Why a node of ``step`` is in no DifferentiableGraph, as the passes recorded it."""
    created = latest_step(trace, step.which, step.index, Note.DIFFERENTIABLE_GRAPHS)
    if created is None:
        later = [s.index for s in trace.select(CREATE_AUTODIFF_SUBGRAPHS.name, step.which) if s.index > step.index]
        if later:
            return f"not yet: CreateAutodiffSubgraphs runs at step {later[0]}"
        if step.which.is_main:
            return no_differentiable_graph_reason(trace)
        if step.which.is_backward_executor:  # a backward graph's inputs require grad only under create_graph
            return (
                "df's executor forms no DifferentiableGraph: no input of df requires grad "
                "(backward ran without create_graph), so it never runs CreateAutodiffSubgraphs"
            )
        return "this graph gets no DifferentiableGraphs: nothing in it needs gradients here (or it is a backward graph)"
    inlined = latest_step(trace, step.which, step.index, Note.INLINED)
    if inlined is not None and inlined.index > created.index and node_id in inlined.annotations[Note.INLINED]:
        return inlined.annotations[Note.INLINED][node_id] + f" (InlineAutodiffSubgraphs, step {inlined.index})"
    excluded = created.annotations.get(Note.EXCLUDED, {})
    if node_id in excluded:
        return excluded[node_id] + f" (CreateAutodiffSubgraphs, step {created.index})"
    return f"no reason recorded: the node was made after CreateAutodiffSubgraphs ran (step {created.index})"


def _membership(trace: PassTrace, step: Step, table: _Table, node_id: int) -> Lines:
    k = _group_of(trace, step, table, node_id)
    if k is None:
        return [("DifferentiableGraph", "not in one: " + _why_outside(trace, step, node_id))]
    which = step.which
    if which.is_main:
        where = "its subgraph, which differentiate turns into the forward graph f"
    else:
        where = "the forward graph f" if which.is_forward else "the backward graph df"
    return [("DifferentiableGraph", f"in DifferentiableGraph {k}: {where}")]


def _value_marks(trace: PassTrace, index: int, step: Step, k: int | None, values: list[ValueRecord]) -> Lines:
    """Gradient roles (as the joint view of the value's group marks them) and AutogradZero states."""
    lines: Lines = []
    if k is not None:
        roles = step_marks(trace, index, View.JOINT, k)
        for value in values:
            for mark, text in _ROLES.items():
                if mark in roles.values.get(value.id, set()):
                    lines.append((f"gradient role %{value.name}", text.format(i=roles.indices.get((value.id, mark), "?"))))
            position = roles.indices.get((value.id, Mark.VJP_OUTPUT))
            if Mark.VJP_OUTPUT in roles.values.get(value.id, set()) and isinstance(position, int):
                rules = chain_rule_lines(trace, k)
                if position < len(rules):
                    lines.append(("formula", rules[position]))  # the chain rule as df computes it
    states = zero_states(trace, step)
    for value in values:
        state = states.get(value.id)
        if state is not None:
            lines.append((f"AutogradZero %{value.name}", _STATE_TEXT.get(state, state)))
    return lines


def _change_lines(trace: PassTrace, index: int, step: Step, node: NodeRecord) -> Lines:
    """What the step at ``index`` did to the node, if it recorded the node's graph."""
    if not changed_here(trace, index, step):
        return []
    previous = previous_graph(trace, step)
    if previous is None:
        return []
    before = node_records(previous).get(node.id)
    if before is None:
        return [("this step", f"{step.pass_name} added it")]
    if before.inputs != node.inputs:
        return [("this step", f"{step.pass_name} changed its inputs")]
    return []


def _grad_of_lines(trace: PassTrace, index: int, node_id: int) -> Lines:
    links = grad_of_links(trace, index)
    if node_id in links:
        primal = links[node_id]
        return [("differentiates", _describe_node(trace, index, primal))]
    grad_ofs = [g for g, p in links.items() if p == node_id]
    return [("gradient in", "prim::GradOf " + ", ".join(str(g) for g in grad_ofs))] if grad_ofs else []


def _describe_node(trace: PassTrace, index: int, node_id: int) -> str:
    for k in range(differentiable_graph_count(trace)):
        step = forward_step(trace, index, k)
        if step is None:
            continue
        node = _table(step.graph).nodes.get(node_id)
        if node is not None:
            return f"{node.kind} ({node_id}) in f of DifferentiableGraph {k}: " + node_text(node, value_names(step.graph))
    return f"node {node_id} (no longer in the forward graph)"


# -- the API -------------------------------------------------------------------------------
def inspect_node(trace: PassTrace, index: int, node_id: int, view: View = View.WHOLE, dg: int = 0) -> Lines:
    """Labelled lines about node ``node_id`` as step ``index`` shows it (in
    ``view``, else in any graph as of that step); [] when there is no such node."""
    found = _find(trace, index, view, dg, node_id, of_value=False)
    if found is None:
        return []
    step, table = found
    node = table.nodes[node_id]
    lines: Lines = [("IR", node_text(node, value_names(step.graph))), ("op", node.kind), ("where", _place(step, table, node_id))]
    for value in node.outputs:
        lines.extend(_type_lines(value))
        lines.append((f"uses of %{value.name}", "; ".join(table.uses.get(value.id, [])) or "none"))
    lines.extend(_membership(trace, step, table, node_id))
    k = _group_of(trace, step, table, node_id)
    lines.extend(_value_marks(trace, index, step, k, list(node.outputs)))
    lines.extend(_grad_of_lines(trace, index, node_id))
    lines.extend(_change_lines(trace, index, step, node))
    return _formula_early(lines, 2)


def inspect_value(trace: PassTrace, index: int, value_id: int, view: View = View.WHOLE, dg: int = 0) -> Lines:
    """Labelled lines about value ``value_id`` as step ``index`` shows it (in
    ``view``, else in any graph as of that step); [] when there is no such value."""
    found = _find(trace, index, view, dg, value_id, of_value=True)
    if found is None:
        return []
    step, table = found
    value = table.values[value_id]
    lines: Lines = [("value", f"%{value.name} : {value.type}")]
    known = name_table(trace, step.index).of(value_id, value.name)
    if known.text() != value.name:  # a parameter's, argument's or gradient's name, or its module
        lines.append(("name", known.text()))
    lines.extend(_type_lines(value))
    producer = table.producer.get(value_id)
    if producer is not None:
        lines.append(("made by", node_text(producer, value_names(step.graph))))
        k = _group_of(trace, step, table, producer.id)
        lines.extend(_membership(trace, step, table, producer.id))
    else:
        owner, where, position = table.param_of[value_id]
        if owner is None:
            lines.append(("made by", f"input {position} of {_graph_label(step)}"))
            k = _graph_group(step)
        else:
            lines.append(("made by", f"parameter {position} of {where} of {owner.kind} ({owner.id})"))
            k = _group_of(trace, step, table, owner.id)
            if where == "subgraph" and owner.kind == "prim::DifferentiableGraph":
                k = differentiable_graph_numbers(trace, step).get(owner.id)
    lines.append(("uses", "; ".join(table.uses.get(value_id, [])) or "none"))
    lines.extend(_value_marks(trace, index, step, k, [value]))
    return _formula_early(lines, 2 if len(lines) > 1 and lines[1][0] == "name" else 1)


def _formula_early(lines: Lines, after: int) -> Lines:
    """``lines`` with the chain-rule rows moved up to just after the first
    ``after`` (what the node or value is): the line a lecture points at reads
    on a 120x40 screen without scrolling past types and uses."""
    formulas = [line for line in lines if line[0] == "formula"]
    rest = [line for line in lines if line[0] != "formula"]
    return rest[:after] + formulas + rest[after:]
