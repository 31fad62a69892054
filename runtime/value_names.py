"""What a value is called where users see it: one place for the CLI, the Saved tab, the inspector and exports.

A graph's own names are not always ones a user can act on. AOTAutograd calls
a model's parameters ``primals_98``; TorchScript calls an intermediate ``%100``
and a DifferentiableGraph's copy of a parameter ``%bn.weight.1``. So a value
is shown by the name the user knows, with the graph's name beside it where
they differ (so the log or the IR can still be searched for it):

* a parameter, buffer or argument of a compiled graph, and a gradient of one,
  by the name the log gives it (:mod:`gradview.loaders.compiled_names`):
  ``layer4.1.conv2.weight (primals_98)``, ``layer4.1.conv2.weight.grad (getitem_7)``;
* a DifferentiableGraph's input by the value outside that feeds it
  (``bn.weight (bn.weight.1)``);
* any other value made by an op whose node names its module (TorchScript's
  ``scope:``) by its name and that module: ``100 in layer2.1.bn1``.

A parameter or buffer input also knows the module that owns it
(:attr:`ValueName.owner`), where that is certain: from the source Dynamo read
it from (a compiled graph), or from a qualified name whose module the trace's
``module_types`` holds (a TorchScript graph from ``from_torch``).
"""

from __future__ import annotations

from dataclasses import dataclass

from gradview.ir.module_scope import module_path, owner_of_parameter

from .pass_trace import PassTrace, Step
from .trace_records import BlockRecord, NodeRecord, walk_records
from .trace_types import GraphName, Note

__all__ = ["ValueName", "NameTable", "name_table", "display_name"]

_DIFFERENTIABLE_GRAPH = "prim::DifferentiableGraph"


@dataclass(frozen=True)
class ValueName:
    """A value's names: the graph's own, and what the user knows it by."""

    graph_name: str  # as the graph prints it, without "%": "primals_98", "100"
    user_name: str | None = None  # a parameter, buffer, argument or gradient: "layer4.1.conv2.weight"
    module: str | None = None  # the module of the op that made it: "layer2.1.bn1" (None: not known)
    # For a parameter or buffer whose owner the source says (a compiled graph's): the module
    # holding it, as ``named_modules()`` writes it ("" for the model's own).
    owner: str | None = None

    def text(self) -> str:
        """``layer4.1.conv2.weight (primals_98)``, ``100 in layer2.1.bn1``, or the graph's name alone."""
        if self.user_name and self.user_name != self.graph_name:
            return f"{self.user_name} ({self.graph_name})"
        if self.user_name:
            return self.user_name
        if self.module:
            return f"{self.graph_name} in {self.module}"
        return self.graph_name


class NameTable:
    """The names of every value of one step's graph (subgraphs included), built in one walk."""

    def __init__(self, names: dict[int, ValueName]) -> None:
        self._names = names

    def of(self, value_id: int, fallback: str = "?") -> ValueName:
        """The names of value ``value_id`` (its graph name alone, ``fallback``, when unknown)."""
        return self._names.get(value_id) or ValueName(fallback)


_CACHE: dict[int, tuple[Step, NameTable]] = {}
_CACHE_SIZE = 16


def name_table(trace: PassTrace, index: int) -> NameTable:
    """The names of the values of step ``index`` (cached: the viewer asks per selection)."""
    step = trace[index]
    cached = _CACHE.get(id(step))
    if cached is not None and cached[0] is step:
        return cached[1]
    table = NameTable(_build(trace, step))
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[id(step)] = (step, table)
    return table


def display_name(trace: PassTrace, index: int, value_id: int) -> str:
    """The text to show for value ``value_id`` of step ``index`` (see the module's docstring)."""
    return name_table(trace, index).of(value_id).text()


def _build(trace: PassTrace, step: Step) -> dict[int, ValueName]:
    logged = step.annotations.get(Note.VALUE_NAMES) or {}
    owners = step.annotations.get(Note.PARAMETER_OWNERS) or {}
    modules = frozenset(trace.module_types)
    names: dict[int, ValueName] = {}
    outer = _outer_names(trace, step)
    for position, param in enumerate(step.graph.params):
        from_outside = outer[position] if outer is not None else None
        owner = owners.get(param.name, _traced_owner(param.name, modules) if outer is None else None)
        names[param.id] = _renamed(param.name, logged.get(param.name), from_outside, owner)
    for node in walk_records(step.graph):
        module = module_path(node.scope) or None
        for output in node.outputs:
            names[output.id] = ValueName(output.name, logged.get(output.name), module)
        if node.kind == _DIFFERENTIABLE_GRAPH and node.subgraph is not None:
            _name_subgraph_inputs(node, names)
    return names


def _traced_owner(name: str, modules: frozenset[str]) -> str | None:
    """A TorchScript graph input named after a parameter of a known module (``from_torch``
    names them ``%layer1.0.conv1.weight``): that module. An undotted name could be the
    model's own parameter or an argument, so it is left unowned."""
    return owner_of_parameter(name, modules) if "." in name and modules else None


def _renamed(graph_name: str, logged: str | None, outside: ValueName | None, owner: str | None = None) -> ValueName:
    if logged is not None:
        return ValueName(graph_name, logged, owner=owner)
    if outside is not None:
        return ValueName(graph_name, outside.user_name or _plain(outside), outside.module, outside.owner)
    return ValueName(graph_name, owner=owner)


def _plain(outside: ValueName) -> str | None:
    """An outside graph input's own name is the user's (TorchScript names parameter
    inputs after them); an op's result is named by its module instead."""
    return outside.graph_name if outside.module is None else None


def _name_subgraph_inputs(node: NodeRecord, names: dict[int, ValueName]) -> None:
    """A DifferentiableGraph's inputs are the values outside that feed it."""
    assert node.subgraph is not None
    if len(node.subgraph.params) != len(node.inputs):
        return
    for param, fed_by in zip(node.subgraph.params, node.inputs, strict=True):
        outside = names.get(fed_by)
        names[param.id] = _renamed(param.name, None, outside)


def _outer_names(trace: PassTrace, step: Step) -> list[ValueName | None] | None:
    """For TorchScript's forward k (DifferentiableGraph k's f): the names of the values
    that feed the DifferentiableGraph node, in the order of f's inputs."""
    which = step.which
    if not which.is_forward or which.compilation is not None or which.index is None:
        return None
    if Note.COMPILE_ID in step.annotations:
        return None
    found = _differentiable_graph_node(trace, step.index, which.index)
    if found is None:
        return None
    main_index, node = found
    if len(node.inputs) != len(step.graph.params):
        return None
    table = name_table(trace, main_index)
    return [table.of(value) for value in node.inputs]


def _differentiable_graph_node(trace: PassTrace, before: int, k: int) -> tuple[int, NodeRecord] | None:
    """The latest main-graph snapshot at or before step ``before`` that holds DifferentiableGraph
    ``k``'s node (as CreateAutodiffSubgraphs numbered them), and that node."""
    ids = {
        int(node_id)
        for step in trace
        for node_id, number in dict(step.annotations.get(Note.DIFFERENTIABLE_GRAPHS) or {}).items()
        if step.which == GraphName.main() and int(number) == k
    }
    if not ids:
        return None
    for index in range(min(before, len(trace) - 1), -1, -1):
        step = trace[index]
        if step.which != GraphName.main():
            continue
        node = _find_node(step.graph, ids)
        if node is not None:
            return index, node
    return None


def _find_node(block: BlockRecord, ids: set[int]) -> NodeRecord | None:
    return next((node for node in walk_records(block, subgraphs=False) if node.id in ids), None)
