"""Per-node values of a Model Explorer export: saved bytes and AutogradZero states.

Both come from the recorded trace, through the functions the rest of gradview
uses: :func:`gradview.runtime.saved_values.saved_values` (what each
differentiated graph keeps for backward, biggest first) and
:func:`gradview.viewer.marks.zero_states` (the states specializeAutogradZero
recorded, which hold for later steps of a backward graph too).

Each goes two ways into the export:

* as attributes, shown in Model Explorer's side panel: on the output that
  holds the value (``saved for backward``, ``AutogradZero``) and on the box;
* as *node data*, the per-node values Model Explorer colours nodes by, read
  from files apart from the graph (its ``ModelNodeData`` JSON: graph id ->
  ``{"name", "results": {node id: {"value"}}, ...}``); a node's value is the
  bytes its outputs hold for backward (in the joint view on f's side only, so
  a graph's values add up to what is saved), or its outputs' states.

Saved bytes are put only on graphs that are the exact forward and backward
graphs the saved list was read from (the last of each), since an earlier
version of a graph may keep other values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gradview.runtime import (
    INPUT,
    GraphSaved,
    PassTrace,
    SavedValuesError,
    Step,
    saved_values,
    walk_records,
)

from .marks import zero_states

if TYPE_CHECKING:
    from .export_model_explorer import Shown

__all__ = ["GraphExtras", "SAVED_BYTES", "AUTOGRAD_ZERO", "trace_extras", "node_data_files"]

SAVED_BYTES = "saved bytes"
AUTOGRAD_ZERO = "AutogradZero"
# Node colours: saved bytes from white (least) to orange (most); the states as the viewer's palette reads them.
_SAVED_GRADIENT = [{"stop": 0, "bgColor": "#fff5eb"}, {"stop": 1, "bgColor": "#fd8d3c"}]
_STATE_COLOURS = {"Zero": "#9ecae1", "Nonzero": "#a1d99b", "Unknown": "#d9d9d9"}

Pairs = list[tuple[str, str]]


@dataclass
class GraphExtras:
    """Attributes one graph's boxes (by box id) and outputs (by value id) get beyond the IR."""

    node_attrs: dict[int, Pairs] = field(default_factory=dict)
    value_attrs: dict[int, Pairs] = field(default_factory=dict)


# graph id -> node id -> the node's value; one such table per kind of data
NodeValues = dict[str, dict[str, Any]]


def _boxes(step: Step) -> dict[int, int]:
    """Value id -> the id of the box it comes out of, in ``step``'s drawing (inputs are their own box)."""
    found = {param.id: param.id for param in step.graph.params}
    for node in walk_records(step.graph):
        for value in node.outputs:
            found[value.id] = node.id
    return found


def trace_extras(trace: PassTrace, shown: Sequence[Shown]) -> tuple[dict[str, GraphExtras], dict[str, NodeValues], list[str]]:
    """For each graph of ``shown``: its extra attributes; the node data by kind
    (``saved bytes``, ``AutogradZero``); and notes on data left out, and why."""
    extras = {entry.id: GraphExtras() for entry in shown}
    data: dict[str, NodeValues] = {SAVED_BYTES: {}, AUTOGRAD_ZERO: {}}
    notes: list[str] = []
    try:
        saved = saved_values(trace)
    except SavedValuesError as exc:
        saved = []
        notes.append(f"saved bytes left out: {exc}")
    for entry in shown:
        counted: set[int] = set()  # saved lists counted in this graph: the joint view counts each once
        for step in entry.steps:
            boxes = _boxes(step)
            for number, graph_saved in enumerate(saved):
                values = data[SAVED_BYTES].setdefault(entry.id, {})
                if _add_saved(trace, graph_saved, step, boxes, extras[entry.id], values, number not in counted):
                    counted.add(number)
            _add_states(trace, step, boxes, extras[entry.id], data[AUTOGRAD_ZERO].setdefault(entry.id, {}))
    for kind in data:
        data[kind] = {graph: values for graph, values in data[kind].items() if values}
    return extras, data, notes


def _add_saved(trace: PassTrace, graph_saved: GraphSaved, step: Step, boxes: dict[int, int],
               extras: GraphExtras, values: dict[str, Any], count: bool) -> bool:
    """Annotate ``step`` when it is the forward or backward graph of ``graph_saved``;
    ``count``: also give the bytes as node data (once per graph shown). Did it annotate?"""
    forward, backward = trace[graph_saved.forward_step], trace[graph_saved.backward_step]
    on_forward = step.which == forward.which and step.graph == forward.graph
    on_backward = step.which == backward.which and step.graph == backward.graph
    if not (on_forward or on_backward):
        return False
    touched: set[str] = set()
    for value in graph_saved.saved:
        where = f"{value.dtype}[{', '.join(map(str, value.shape))}]"
        if on_forward:
            readers = ", ".join(value.consumers) or "no op"
            _note(extras.value_attrs, value.forward_value, "saved for backward",
                  f"{value.bytes:,} B ({where}) by {graph_saved.name}; read by {readers}")
            box = boxes.get(value.forward_value)
        else:
            made = "an input of the forward" if value.producer == INPUT else value.producer
            if value.backward_value is None:
                continue
            _note(extras.value_attrs, value.backward_value, "saved by forward",
                  f"{value.bytes:,} B ({where}), made by {made}")
            box = boxes.get(value.backward_value)
        if box is not None and count:
            values[str(box)] = {"value": values.get(str(box), {"value": 0})["value"] + value.bytes}
            touched.add(str(box))
    total = f"{graph_saved.total_bytes:,} B in {len(graph_saved.saved)} tensors"
    for box in touched:
        _note(extras.node_attrs, int(box), SAVED_BYTES, f"{values[box]['value']:,} B of {graph_saved.name}'s {total}")
    return True


def _add_states(trace: PassTrace, step: Step, boxes: dict[int, int], extras: GraphExtras, values: dict[str, Any]) -> None:
    states = zero_states(trace, step)
    if not states:
        return
    per_box: dict[int, list[str]] = {}
    for value, box in boxes.items():
        state = states.get(value)
        if state is not None:
            _note(extras.value_attrs, value, AUTOGRAD_ZERO, str(state))
            per_box.setdefault(box, []).append(str(state))
    for box, found in per_box.items():
        text = found[0] if len(set(found)) == 1 else ", ".join(found)
        _note(extras.node_attrs, box, AUTOGRAD_ZERO, text)
        values[str(box)] = {"value": text, "bgColor": _STATE_COLOURS.get(text, _STATE_COLOURS["Unknown"])}


def _note(table: dict[int, Pairs], key: int, name: str, text: str) -> None:
    pairs = table.setdefault(key, [])
    if (name, text) not in pairs:
        pairs.append((name, text))


def node_data_files(data: dict[str, NodeValues], prefix: str) -> dict[str, dict[str, Any]]:
    """Model Explorer's node data (``ModelNodeData``: graph id -> that graph's data)
    for each kind with values, named ``prefix + kind``."""
    files: dict[str, dict[str, Any]] = {}
    for kind, graphs in data.items():
        if not graphs:
            continue
        style = {"gradient": _SAVED_GRADIENT} if kind == SAVED_BYTES else {}
        files[kind] = {graph: {"name": prefix + kind, "results": results, **style} for graph, results in graphs.items()}
    return files
