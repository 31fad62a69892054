"""A trace as Google Model Explorer's graph JSON: ``gradview export TARGET --model-explorer FILE.json``.

Model Explorer (``pip install ai-edge-model-explorer``, then ``model-explorer
FILE.json``) lays a graph out one layer (namespace) at a time, in the
browser, so graphs of tens of thousands of nodes open in it. Its JSON loader
(``builtin_json``) reads a graph collection, as its ``graph_builder`` module
defines it::

    {"label": "mlp.ir", "graphSorting": "name_asc", "graphs": [
      {"id": "021 CreateAutodiffSubgraphs [main]",
       "nodes": [{"id": "12", "label": "aten::linear", "namespace": "encoder/layers.0/linear1",
                  "attrs": [{"key": "ir", "value": "%h : Float(8, 16) = aten::linear(%x, %w, %b)"}],
                  "incomingEdges": [{"sourceNodeId": "3", "sourceNodeOutputId": "0", "targetNodeInputId": "0"}],
                  "inputsMetadata": [...], "outputsMetadata": [{"id": "0", "attrs": [...]}]}],
       "groupNodeAttributes": {"": {"pass": ...}, "encoder/layers.0": {"module": "encoder.layers.0", ...}}}]}

What goes in (:func:`shown_graphs` chooses the graphs):

* one graph per step, the step's graph as the whole view draws it
  (:func:`gradview.viewer.views.draw_step`): DifferentiableGraph subgraphs,
  If/Loop blocks and, in the joint view, f and df as groups; a step that
  left its graph as the previous step of that graph had it is folded into
  that graph (its ``unchanged by`` attribute names the passes), unless the
  steps were asked for by pass name;
* the forward, backward and joint views of every DifferentiableGraph (of
  every compiled graph of a TORCH_TRACE log) as they stand at the last step;
* namespaces from module paths (:func:`gradview.ir.module_scope.module_path`
  of each node's scope; a parameter's input in the module owning it), one
  component per module level, ``layer1/layer1.0/conv1``. A group that is
  not a module (a DifferentiableGraph, a block, f or df) sits in the
  innermost module holding all of its nodes;
* node attributes: the op, its attributes, the module, the IR line and the
  source line; per output its name, type, shape, AutogradZero state and
  saved bytes (:mod:`gradview.viewer.model_explorer_data`).

Model Explorer reads per-node values (which it colours nodes by) from node
data files apart from the graph: :func:`write_model_explorer` writes them
beside FILE.json (``FILE-saved-bytes.json``, ``FILE-autograd-zero.json``)
where the trace has such values, and never replaces a file there that is not
gradview's own node data.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gradview.ir.module_scope import ancestors, module_path, owner_of_parameter
from gradview.runtime import (
    BlockRecord,
    GraphName,
    NodeRecord,
    Note,
    PassTrace,
    Step,
    ValueRecord,
    differentiated_graph_name,
    tensor_shape_dtype,
    walk_records,
    which_label,
)

from .model import DrawGraph, DrawNode, NodeRole, View, return_id
from .model_explorer_data import GraphExtras, node_data_files, trace_extras
from .view_registry import DEFAULT_VIEW, VIEWS, view_spec
from .view_steps import (
    differentiable_graph_count,
    gradient_notes,
    view_steps,
    view_unavailable_reason,
)
from .views import block_return_id, draw_step

__all__ = [
    "ModelExplorerError",
    "Written",
    "Shown",
    "shown_graphs",
    "graph_json",
    "collection_json",
    "module_components",
    "node_data_paths",
    "write_model_explorer",
]


class ModelExplorerError(ValueError):
    """The file cannot be written as asked; the message is one line naming the path."""


@dataclass(frozen=True)
class Written:
    """What :func:`write_model_explorer` wrote, and the data it left out (and why)."""

    graph: Path
    graphs: int  # how many graphs the collection holds
    node_data: tuple[Path, ...]
    notes: tuple[str, ...]


@dataclass
class Shown:
    """One graph of the collection: what ``view`` (of DifferentiableGraph ``dg``) draws at step ``index``."""

    id: str
    index: int
    view: View
    dg: int
    steps: tuple[Step, ...]  # the recorded steps drawn: one, or f and df for the joint view
    unchanged_by: list[str] = field(default_factory=list)  # later passes that left the graph as it is


# -- which graphs ------------------------------------------------------------------------------
def shown_graphs(trace: PassTrace, indices: Iterable[int] | None = None, keep_unchanged: bool = False) -> list[Shown]:
    """The graphs of a collection of the steps ``indices`` (default: all), in trace order.

    Each step gives its graph (the whole view), except a step whose graph is
    the one the last kept step of that graph showed (records are shared
    between steps, so ``==`` is mostly an identity test): that step is folded
    into the kept one, unless ``keep_unchanged`` (steps chosen by pass name)
    or it records AutogradZero states. Then, at the last step, the forward,
    backward and joint views of each DifferentiableGraph where a view shows
    a graph not already in the collection."""
    chosen = list(range(len(trace))) if indices is None else list(indices)
    if not chosen:
        return []
    width = max(3, len(str(len(trace) - 1)))
    shown: list[Shown] = []
    kept: dict[GraphName, Shown] = {}
    for index in chosen:
        step = trace[index]
        previous = kept.get(step.which)
        if (
            not keep_unchanged
            and previous is not None
            and Note.AUTOGRAD_ZERO not in step.annotations
            and previous.steps[0].graph == step.graph
        ):
            previous.unchanged_by.append(f"{index} {step.pass_name}")
            continue
        entry = Shown(f"{index:0{width}d} {step.pass_name} [{which_label(step.which)}]", index, DEFAULT_VIEW, 0, (step,))
        kept[step.which] = entry
        shown.append(entry)
    last = chosen[-1]
    for dg in range(differentiable_graph_count(trace)):
        name = differentiated_graph_name(gradient_notes(trace, last, dg) or {}, dg)
        for view in (spec.view for spec in VIEWS if spec.differentiated):
            if view_unavailable_reason(trace, last, view, dg) is not None:
                continue
            steps = tuple(view_steps(trace, last, view, dg))
            same = kept.get(steps[0].which)
            if not view_spec(view).joint and same is not None and same.steps[0].graph == steps[0].graph:
                continue  # already in the collection as its step's graph
            shown.append(Shown(f"{last:0{width}d} {view.value} of {name}", last, view, dg, steps))
    return shown


# -- namespaces ----------------------------------------------------------------------------------
def module_components(path: str) -> list[str]:
    """The namespace components of module ``path``, one per level, each the
    module's attribute name; an index into a container (``Sequential``,
    ``ModuleList``) keeps its container's name, since ``0`` alone says
    nothing: ``layer1.0.conv1`` -> ``["layer1", "layer1.0", "conv1"]``."""
    return [component for component, _ in _module_levels(path)]


def _module_levels(path: str) -> list[tuple[str, str]]:
    """(namespace component, module path) of each level of module ``path``."""
    levels: list[tuple[str, str]] = []
    previous = ""
    for level in ancestors(path):
        name = level.rpartition(".")[2]
        levels.append((_safe(f"{previous}.{name}" if name.isdigit() and previous else name), level))
        previous = name
    return levels


def _safe(component: str) -> str:
    """A namespace component: Model Explorer splits namespaces at ``/``."""
    return component.replace("/", "-")


def _trace_modules(trace: PassTrace, steps: Sequence[Step]) -> frozenset[str]:
    """Module paths a parameter input can belong to: the model's modules
    (``PassTrace.module_types``) and every module a node's scope names."""
    found = {path for path in trace.module_types if path}
    for step in steps:
        for node in walk_records(step.graph):
            found.update(ancestors(module_path(node.scope)))
    return frozenset(found)


class _Graph:
    """What one drawing's nodes need from the records it was drawn from."""

    def __init__(self, trace: PassTrace, shown: Shown) -> None:
        self.records: dict[int, NodeRecord] = {}
        self.params: dict[int, ValueRecord] = {}
        self.inputs_of: dict[int, tuple[int, ...]] = {}  # box id -> the values it reads, in order
        self.output_of: dict[int, str] = {}  # value id -> its output id on the box making it
        self.alias: dict[int, int] = {}  # a DifferentiableGraph's inner/outer twin of a value
        self.names: dict[int, str] = {}  # value id -> its printed name
        scopes = (0, 1) if view_spec(shown.view).joint else (0,)
        for step, scope in zip(shown.steps, scopes, strict=False):
            self._block(step.graph, return_id(scope), top=True)
        self.modules = _trace_modules(trace, shown.steps)

    def _block(self, block: BlockRecord, returns: int | None, top: bool = False) -> None:
        """Read ``block``; ``returns``: the id of its return box (None: a subgraph, not drawn)."""
        for param in block.params:
            self.names[param.id] = param.name
            if top:
                self.params[param.id] = param
                self.output_of[param.id] = "0"
        if returns is not None:
            self.inputs_of[returns] = block.returns
        for node in block.nodes:
            self.records[node.id] = node
            self.inputs_of[node.id] = node.inputs
            for position, value in enumerate(node.outputs):
                self.output_of[value.id] = str(position)
                self.names[value.id] = value.name
            for index, inner in enumerate(node.blocks):
                self._block(inner, block_return_id(node.id, index))
                for position, param in enumerate(inner.params):  # drawn coming out of the owner
                    self.output_of[param.id] = f"block{index}.param{position}"
            if node.subgraph is not None:
                sub = node.subgraph
                # The group is not a box: its inner nodes read the outer values and
                # the outer nodes read the inner results, as the drawing shows.
                self.alias.update({p.id: outer for p, outer in zip(sub.params, node.inputs, strict=False)})
                self.alias.update({out.id: inner for out, inner in zip(node.outputs, sub.returns, strict=False)})
                self._block(sub, None)

    def output_id(self, value: int) -> str:
        """The output (of the box drawn as making ``value``) that ``value`` leaves by."""
        seen = 0
        while value in self.alias and seen <= len(self.alias):
            value, seen = self.alias[value], seen + 1  # a group's output or input: the value behind it
        return self.output_of.get(value, "0")

    def module_of(self, box: DrawNode) -> str | None:
        """The module path of a box; None for a return (it belongs to its group)."""
        if box.role is NodeRole.RETURN:
            return None
        record = self.records.get(box.id)
        if record is not None:
            return module_path(record.scope)
        param = self.params.get(box.id)
        return _owner(param.name, self.modules) if param is not None else ""


def _owner(name: str, modules: frozenset[str]) -> str:
    """The module owning the parameter an input is named after ("" for none). A graph
    copied by differentiate names its inputs again: ``%head.weight.1`` is ``head.weight``."""
    owner = owner_of_parameter(name, modules)
    if owner is None:
        base, dot, suffix = name.rpartition(".")
        if dot and suffix.isdigit():
            owner = owner_of_parameter(base, modules)
    return owner or ""


def _cluster_chain(drawing: DrawGraph, key: str | None) -> list[str]:
    chain: list[str] = []
    while key is not None and key in drawing.clusters and key not in chain:
        chain.append(key)
        key = drawing.clusters[key].parent
    return chain[::-1]


def _cluster_component(drawing: DrawGraph, key: str, graph: _Graph) -> str:
    """A group's name: its frame title, a block's with its owner's output so two Ifs stay apart."""
    if key in ("f", "df"):
        return {"f": "f (forward)", "df": "df (backward)"}[key]
    title = drawing.clusters[key].title
    if key.startswith("n") and ".block" in key:
        owner = graph.records.get(int(key[1:].partition(".")[0]))
        if owner is not None and owner.outputs:
            kind, _, block = title.rpartition(" ")
            title = f"{kind} %{owner.outputs[0].name} {block}"
    return _safe(title)


def _namespaces(drawing: DrawGraph, graph: _Graph) -> tuple[dict[int, str], dict[str, str]]:
    """Box id -> its namespace, and each group's namespace -> the module path it
    stands for ("" for a group that is no module). Module levels nest as the
    modules do; each other group (DifferentiableGraph, block, f, df) sits in the
    innermost module holding all of its boxes."""
    paths = {node_id: graph.module_of(box) for node_id, box in drawing.nodes.items()}
    levels = {node_id: None if path is None else _module_levels(path) for node_id, path in paths.items()}
    chains = {node_id: _cluster_chain(drawing, box.cluster) for node_id, box in drawing.nodes.items()}
    anchor: dict[str, list[tuple[str, str]]] = {}  # cluster -> the module levels all its boxes share
    for node_id, own in levels.items():
        if own is None:
            continue  # a return box belongs to its group wherever that is
        for key in chains[node_id]:
            known = anchor.get(key)
            if known is None:
                anchor[key] = own
                continue
            same = 0
            while same < min(len(known), len(own)) and known[same] == own[same]:
                same += 1
            anchor[key] = known[:same]
    names = {key: _cluster_component(drawing, key, graph) for chain in chains.values() for key in chain}
    groups: dict[str, str] = {}
    out = {node_id: _namespace(own, chains[node_id], anchor, names, groups) for node_id, own in levels.items()}
    return out, groups


def _namespace(own: list[tuple[str, str]] | None, chain: list[str], anchor: dict[str, list[tuple[str, str]]],
               names: dict[str, str], groups: dict[str, str]) -> str:
    """One box's namespace: before each group of ``chain`` (outermost first) the module
    levels it sits in, then the box's own remaining levels; every group met is
    entered in ``groups`` (namespace -> module path, "" for a group that is no module)."""
    components: list[str] = []
    done = 0  # module levels placed so far
    for key in [*chain, None]:
        levels = (anchor.get(key, []) if key is not None else own) or []
        for component, level in levels[done:]:
            components.append(component)
            groups.setdefault("/".join(components), level)
        done = max(done, len(levels))
        if key is not None:
            components.append(names[key])
            groups.setdefault("/".join(components), "")
    return "/".join(components)


# -- one graph -----------------------------------------------------------------------------------
def _kv(key: str, value: object) -> dict[str, str]:
    return {"key": key, "value": str(value)}


def _value_attrs(value: ValueRecord, extras: GraphExtras) -> list[dict[str, str]]:
    attrs = [_kv("tensor_name", f"%{value.name}"), _kv("type", value.type)]
    shape = tensor_shape_dtype(value.type)
    if shape is not None:
        attrs.append(_kv("tensor_shape", f"{shape[1]}[{', '.join(map(str, shape[0]))}]"))
    attrs.extend(_kv(key, text) for key, text in extras.value_attrs.get(value.id, ()))
    return attrs


def _node_json(box: DrawNode, graph: _Graph, namespace: str, edges: list[dict[str, str]],
               extras: GraphExtras, module_types: dict[str, str]) -> dict[str, Any]:
    record = graph.records.get(box.id)
    param = graph.params.get(box.id)
    attrs: list[dict[str, str]] = []
    outputs: list[dict[str, Any]] = []
    inputs: list[dict[str, Any]] = []
    if record is not None:
        label = record.kind
        attrs.append(_kv("op", record.kind))
        attrs.extend(_kv(name, text) for name, text in record.attrs if name != "Subgraph")
        outputs = [{"id": str(i), "attrs": _value_attrs(v, extras)} for i, v in enumerate(record.outputs)]
    elif param is not None:
        label = f"%{param.name}"
        attrs.append(_kv("input", f"%{param.name} : {param.type}"))
        outputs = [{"id": "0", "attrs": _value_attrs(param, extras)}]
    else:
        label = box.label.splitlines()[0]
    reads = graph.inputs_of.get(box.id, ())
    if reads:  # the side panel names each input by its tag
        inputs = [{"id": str(i), "attrs": [_kv("__tensor_tag", "%" + graph.names.get(v, "?"))]} for i, v in enumerate(reads)]
    module = graph.module_of(box)
    if module:
        kind = module_types.get(module)
        attrs.append(_kv("module", f"{module} ({kind})" if kind else module))
    if box.tooltip:
        attrs.append(_kv("ir", box.tooltip))
    if record is not None and record.source:
        attrs.append(_kv("source", record.source))
    attrs.extend(_kv(key, text) for key, text in extras.node_attrs.get(box.id, ()))
    node: dict[str, Any] = {"id": str(box.id), "label": label, "namespace": namespace, "attrs": attrs}
    if edges:
        node["incomingEdges"] = edges
    if inputs:
        node["inputsMetadata"] = inputs
    if outputs:
        node["outputsMetadata"] = outputs
    return node


def _incoming(drawing: DrawGraph, graph: _Graph) -> dict[int, list[dict[str, str]]]:
    """Box id -> its incoming edges, each at the input position of the value it carries
    (the k-th arrow of a value into a box is its k-th use there)."""
    out: dict[int, list[dict[str, str]]] = {}
    used: dict[tuple[int, int], int] = {}
    places: dict[int, dict[int, list[int]]] = {}  # box id -> value id -> where the box reads it
    for edge in drawing.edges:
        if edge.target not in places:
            places[edge.target] = {}
            for i, value in enumerate(graph.inputs_of.get(edge.target, ())):
                places[edge.target].setdefault(value, []).append(i)
        positions = places[edge.target].get(edge.value_id, [])
        nth = used.get((edge.target, edge.value_id), 0)
        used[(edge.target, edge.value_id)] = nth + 1
        # A capture arrow of the joint view ends at df's input box, which reads nothing.
        position = positions[min(nth, len(positions) - 1)] if positions else 0
        out.setdefault(edge.target, []).append({
            "sourceNodeId": str(edge.source),
            "sourceNodeOutputId": graph.output_id(edge.value_id),
            "targetNodeInputId": str(position),
        })
    return out


def graph_json(trace: PassTrace, shown: Shown, extras: GraphExtras | None = None) -> dict[str, Any]:
    """One graph of the collection: ``shown`` drawn as the viewer draws it (no ghosts)."""
    extras = extras if extras is not None else GraphExtras()
    drawing = draw_step(trace, shown.index, shown.view, shown.dg, ghosts=False)
    graph = _Graph(trace, shown)
    namespaces, groups = _namespaces(drawing, graph)
    incoming = _incoming(drawing, graph)
    nodes = [
        _node_json(box, graph, namespaces[node_id], incoming.get(node_id, []), extras, trace.module_types)
        for node_id, box in drawing.nodes.items()
    ]
    return {"id": shown.id, "nodes": nodes, "groupNodeAttributes": _group_attributes(trace, shown, groups)}


def _group_attributes(trace: PassTrace, shown: Shown, groups: dict[str, str]) -> dict[str, dict[str, str]]:
    """What the side panel shows for the graph (key "") and for each module group."""
    about = {
        "step": str(shown.index),
        "pass": trace[shown.index].pass_name,
        "view": shown.view.value,
        "graph": " and ".join(which_label(step.which) for step in shown.steps),
    }
    if shown.unchanged_by:
        about["unchanged by"] = ", ".join(shown.unchanged_by)
    if trace.module_types.get(""):
        about["model"] = trace.module_types[""]
    out = {"": about}
    for namespace, path in groups.items():
        if path:
            kind = trace.module_types.get(path, "")
            out[namespace] = {"module": path, **({"type": kind} if kind else {})}
    return out


def collection_json(trace: PassTrace, shown: Sequence[Shown], label: str,
                    extras: dict[str, GraphExtras] | None = None) -> dict[str, Any]:
    """The graph collection Model Explorer's JSON loader reads, graphs in trace order."""
    extras = extras or {}
    return {
        "label": label,
        "graphSorting": "name_asc",  # the ids start with the step number: the stepper's order
        "graphs": [graph_json(trace, entry, extras.get(entry.id)) for entry in shown],
    }


# -- files ---------------------------------------------------------------------------------------
NODE_DATA_SUFFIXES = {"saved bytes": "-saved-bytes.json", "AutogradZero": "-autograd-zero.json"}
GRADVIEW_NODE_DATA = "gradview: "  # how gradview's node data files name their data


def node_data_paths(path: str | Path) -> dict[str, Path]:
    """Where the node data files of graph file ``path`` go, by the data they hold."""
    target = Path(path)
    stem = target.name[: -len(target.suffix)] if target.suffix else target.name
    return {name: target.with_name(stem + suffix) for name, suffix in NODE_DATA_SUFFIXES.items()}


def _is_ours(path: Path) -> bool:
    """Is the file at ``path`` node data gradview wrote (so it may be replaced)?"""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and bool(data) and all(
        isinstance(entry, dict) and str(entry.get("name", "")).startswith(GRADVIEW_NODE_DATA) for entry in data.values()
    )


def write_model_explorer(
    trace: PassTrace, path: str | Path, indices: Iterable[int] | None = None, label: str = "gradview",
    keep_unchanged: bool = False,
) -> Written:
    """Write the graph collection of the steps ``indices`` (default: all; see
    :func:`shown_graphs`) to ``path``, a ``.json`` file (its folder is made if
    needed), and its node data files beside it (:func:`node_data_paths`).
    Raises :class:`ModelExplorerError` before writing anything when ``path``
    cannot be one, or when a node data file there is not gradview's own."""
    target = Path(path)
    if target.suffix.lower() != ".json":
        raise ModelExplorerError(f"{path}: Model Explorer reads graph JSON from a file named *.json")
    if target.is_dir():
        raise ModelExplorerError(f"{path}: is a folder; give the graph file's name (FILE.json)")
    shown = shown_graphs(trace, indices, keep_unchanged)
    extras, data, notes = trace_extras(trace, shown)
    files = node_data_files(data, GRADVIEW_NODE_DATA)
    places = node_data_paths(target)
    for name in files:
        if places[name].exists() and not _is_ours(places[name]):
            raise ModelExplorerError(
                f"{places[name]}: exists and is not gradview's node data; move it or give another FILE.json"
            )
    collection = collection_json(trace, shown, label, extras)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(collection, separators=(",", ":")), encoding="utf-8")
    for name, content in files.items():
        places[name].write_text(json.dumps(content, separators=(",", ":")), encoding="utf-8")
    return Written(target, len(shown), tuple(places[name] for name in files), tuple(notes))
