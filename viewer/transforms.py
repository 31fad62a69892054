"""What the large-graph tools do to a view: collapsed groups, focus, fan-out stubs.

Each view (one union layout: ``("whole", which)`` or ``(view name, dg)``)
keeps a :class:`ViewTransform`: the groups folded into boxes, the focus
centre and its hops, and whether values read by many nodes are drawn as
stubs. :meth:`Transforms.picture` turns a step's drawing into what the canvas
shows and names the layout that places it:

* stubs alone keep the view's union layout (only edges leave the picture,
  the readers' boxes say where the value comes from), so they cost nothing;
* collapse and focus change the boxes: their layout is the union of the
  view's drawings, each transformed the same way (so a node keeps its place
  from step to step, as in the plain view), keyed by
  :func:`transform_key` (the view's key and the transform) and computed
  once, like the plain layouts.

Nothing here imports Textual; :meth:`Transforms.layout_graph` is safe to
call from a worker thread.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .detail import Detail
from .graph_analysis import Collapsed, Stubs, collapse, fan_out_stubs, focus_graph
from .layout import union_graph
from .model import DrawGraph, DrawNode, Mark, Marks
from .module_tree import (
    child_modules,
    dissolve_spanning_groups,
    drop_unread_loose,
    frame_modules,
    in_halves,
    is_module_key,
    key_path,
    label_module_boxes,
    largest_graph,
    merge_box_edges,
    module_key,
    saved_bytes_by_node,
    top_modules,
    trace_module_types,
    trace_parameter_ids,
    trace_value_types,
)
from .plumbing import Folded, fold_plumbing
from .view_registry import DEFAULT_VIEW

__all__ = [
    "DEFAULT_HOPS",
    "MAX_HOPS",
    "ViewTransform",
    "Picture",
    "transform_key",
    "node_name",
    "stub_labels",
    "describe",
    "Transforms",
    "FOLD_ABOVE",
]

DEFAULT_HOPS = 2
MAX_HOPS = 6
_CARRIED = frozenset({Mark.LINKED, Mark.SELECTED, Mark.FAILED})  # marks a folded node hands to its box
# What a folded _grad_sum_to_size keeps (its gradient roles go to the box making the gradient).
# Nor its AutogradZero state: the box making the gradient has its own.
_NOT_CARRIED = frozenset({
    Mark.ADDED, Mark.REMOVED, Mark.INPUTS_CHANGED, Mark.SELECTED, Mark.LINKED, Mark.ZERO, Mark.NONZERO, Mark.UNKNOWN,
})
FOLD_ABOVE = 40  # nodes: a larger model's graph opens with its top-level modules folded
_BOX_BASE = -2_000_000  # collapsed-group boxes, shared by every drawing of the app
_PICTURES_KEPT = 64
_MEMBERS_KEPT = 1  # views whose drawings are kept for transformed layouts (at 5,000 ops, 12 of 60,000 boxes)


@dataclass(frozen=True)
class ViewTransform:
    """One view's transform: folded groups (cluster keys), the focus centre
    (a node id, None: no focus) with its hops, and fan-out stubs on or off."""

    collapsed: frozenset[str] = frozenset()
    focus: int | None = None
    hops: int = DEFAULT_HOPS
    stubs: bool = True
    detail: Detail = Detail.IR

    @property
    def restructures(self) -> bool:
        """True when the boxes differ from the plain view's (a layout of its own)."""
        return bool(self.collapsed) or self.focus is not None or self.detail is not Detail.IR

    def signature(self) -> tuple[Hashable, ...]:
        return (
            tuple(sorted(self.collapsed)), self.focus, self.hops if self.focus is not None else None, self.stubs,
            self.detail.value,
        )


def transform_key(base: Hashable, state: ViewTransform) -> tuple[Hashable, ...]:
    """The layout key of view ``base`` under ``state`` (the plain key when the boxes are the plain ones)."""
    return ("transform", base, state.signature())


@dataclass
class Picture:
    """What the canvas draws for one step: ``graph`` placed by layout ``key``."""

    graph: DrawGraph
    key: Hashable
    collapsed: Collapsed | None = None
    stubs: Stubs | None = None
    stub_labels: dict[int, str] = field(default_factory=dict)  # node id -> text on its box's bottom border
    focus_missing: bool = False  # the focus centre is not in this step
    plumbing: Folded | None = None  # the plumbing folded into its readers (ops and model levels)
    # DifferentiableGraphs across modules, not framed at the model level (their titles)
    dissolved: list[str] = field(default_factory=list)

    def carry_marks(self, marks: Marks) -> Marks:
        """``marks`` with the lighting of nodes this picture folds away (the
        selection's links, the Saved tab's producer and readers, a failure) also
        on the box that shows them; changes (added, removed) stay on their nodes."""
        if self.plumbing is None and self.collapsed is None:
            return marks
        carried = None
        if self.plumbing is not None and self.plumbing.same_value:  # a folded _grad_sum_to_size's roles
            for gone, shown in self.plumbing.same_value.items():
                for mark in marks.values.get(gone, set()) - _NOT_CARRIED:
                    carried = carried if carried is not None else marks.copy()
                    carried.mark_value(shown, mark, marks.indices.get((gone, mark)))
            for gone, shown in self.plumbing.same_box.items():
                for mark in marks.nodes.get(gone, set()) - _NOT_CARRIED:
                    carried = carried if carried is not None else marks.copy()
                    carried.mark_node(shown, mark, marks.indices.get((gone, mark)))
        for node_id, found in marks.nodes.items():
            if node_id in self.graph.nodes:
                continue
            lit = found & _CARRIED
            box = self.shown_as(node_id)
            if lit and box != node_id and box in self.graph.nodes:
                carried = carried if carried is not None else marks.copy()
                for mark in lit:
                    carried.mark_node(box, mark)
        return carried if carried is not None else marks

    def shown_as(self, node_id: int) -> int:
        """The box that shows node ``node_id`` in this picture: itself, the reader
        its plumbing folded into, or the group box it is folded in."""
        if self.plumbing is not None:
            node_id = self.plumbing.box_of.get(node_id, node_id)
        if self.collapsed is not None:
            node_id = self.collapsed.box_of.get(node_id, node_id)
        return node_id


def node_name(node: DrawNode) -> str:
    """A short name for ``node``: its first value name (``%x``), else its first label line."""
    lines = [line for line in node.label.splitlines() if line]
    for line in lines:
        if line.startswith("%"):
            return line.split(" ", 1)[0]
    return lines[0] if lines else str(node.id)


def stub_labels(stubs: Stubs) -> dict[int, str]:
    """Node id -> its stub text: ``◂%w`` at each reader, ``%w▸150`` at the value's source."""
    labels: dict[int, list[str]] = {}
    counts: dict[int, int] = {}
    for reader, values in stubs.readers.items():
        for value in values:
            labels.setdefault(reader, []).append(f"◂{stubs.labels[value]}")
            counts[value] = counts.get(value, 0) + 1
    for value, source in stubs.sources.items():
        labels.setdefault(source, []).insert(0, f"{stubs.labels[value]}▸{counts.get(value, 0)}")
    return {node_id: " ".join(parts) for node_id, parts in labels.items()}


class Transforms:
    """Every view's transform, and the pictures they give (cached per drawing)."""

    def __init__(self) -> None:
        self._states: dict[Hashable, ViewTransform] = {}
        self.stubs = True  # o: for every view
        self.detail = Detail.IR  # the detail key: for every view
        self.modules: dict[str, str] = {}  # the model's modules (path -> class name), for the model level
        self.default_collapsed: frozenset[str] = frozenset()  # a view's folded modules until the user changes them
        self.value_types: dict[int, str] = {}  # value id -> short type, for module boxes (the model level)
        self._module_shapes: dict[str, tuple[list[str], list[str]]] = {}  # module -> its shapes in and out
        self.module_boxes: dict[str, DrawNode] = {}  # module -> its folded box at the first step (the summary)
        self.saved_bytes: dict[int, int] = {}  # node or input id -> bytes of its values the backward keeps
        self.parameters: frozenset[int] = frozenset()  # input ids that are parameters or buffers
        self._box_ids: dict[str, int] = {}
        self._lock = threading.Lock()  # the members and picture caches and box ids are used from worker threads
        self._members: OrderedDict[Hashable, list[DrawGraph]] = OrderedDict()
        self._pictures: OrderedDict[tuple[int, Hashable, ViewTransform], tuple[DrawGraph, Picture]] = OrderedDict()

    @classmethod
    def for_trace(cls, trace: Any, detail: Detail | None = None) -> Transforms:
        """The transforms a trace opens with, on screen and in exports alike: at
        ``detail`` (None: the model level when the trace has a model's modules,
        else the IR level), a graph of more than FOLD_ABOVE nodes with each
        top-level module folded into one box."""
        transforms = cls()
        modules = trace_module_types(trace)
        transforms.modules = modules
        if modules:
            transforms.value_types = trace_value_types(trace)
            transforms.saved_bytes = saved_bytes_by_node(trace)
            transforms.parameters = frozenset(trace_parameter_ids(trace))
        transforms.detail = detail if detail is not None else (Detail.MODEL if modules else Detail.IR)
        if modules and largest_graph(trace) > FOLD_ABOVE:
            level = top_modules(modules)
            while len(level) == 1 and child_modules(modules, level[0]):
                level = child_modules(modules, level[0])  # one box says nothing: a TransformerEncoder's `layers`
            transforms.set_defaults(frozenset(module_key(path) for path in level))
        if modules and len(trace):
            transforms.learn_module_shapes(trace)
        return transforms

    def learn_module_shapes(self, trace: Any) -> None:
        """Read every module's shapes in and out from the trace's first step (its
        types are complete; later steps erase sizes), one fold per depth of the tree."""
        from .views import draw_step  # the drawing code imports the viewer's modules

        drawing = draw_step(trace, 0, DEFAULT_VIEW, ghosts=False)
        if drawing.sources:
            drawing = fold_plumbing(drawing, drawing.sources).graph  # type: ignore[arg-type]
        framed = frame_modules(drawing, self.modules)
        depth = 0
        self.module_boxes = {}
        while True:
            level = [path for path in self.modules if path.count(".") == depth]
            if not level:
                break
            folded = collapse(framed, [module_key(path) for path in level])
            label_module_boxes(
                folded, framed, self.modules, self.value_types, self._module_shapes, self.saved_bytes, self.parameters
            )
            for box, key in folded.groups.items():
                self.module_boxes[key_path(key)] = folded.graph.nodes[box]
            depth += 1

    # -- state ------------------------------------------------------------------------------
    def set_defaults(self, collapsed: frozenset[str]) -> None:
        """The groups every view opens with folded (the model level's top-level modules)."""
        self._name_boxes(collapsed)
        self.default_collapsed = collapsed

    def _name_boxes(self, keys: frozenset[str]) -> None:
        """Give each group's box an id every drawing agrees on (a module's in each joint half too)."""
        with self._lock:
            for key in sorted(in_halves(keys)):
                self._box_ids.setdefault(key, _BOX_BASE - len(self._box_ids))

    def state(self, base: Hashable) -> ViewTransform:
        """View ``base``'s transform at the detail level and stubs setting on now
        (module groups count at the model level only)."""
        state = self._states.get(base)
        if state is None:
            state = ViewTransform(collapsed=self.default_collapsed)
        if state.stubs != self.stubs or state.detail is not self.detail:
            state = replace(state, stubs=self.stubs, detail=self.detail)
        if self.detail is not Detail.MODEL and any(is_module_key(key) for key in state.collapsed):
            state = replace(state, collapsed=frozenset(k for k in state.collapsed if not is_module_key(k)))
        return state

    def stored_collapsed(self, base: Hashable) -> frozenset[str]:
        """The groups view ``base`` keeps folded, modules included whatever the level."""
        state = self._states.get(base)
        return state.collapsed if state is not None else self.default_collapsed

    def set_state(self, base: Hashable, state: ViewTransform) -> None:
        self._name_boxes(state.collapsed)
        self._states[base] = state

    def box_id(self, group: str) -> int | None:
        """The id of the box ``group`` is drawn as when collapsed (None: never collapsed)."""
        with self._lock:
            return self._box_ids.get(group)

    # -- pictures ------------------------------------------------------------------------------
    def picture(self, drawing: DrawGraph, base: Hashable, state: ViewTransform | None = None) -> Picture:
        """What to draw for ``drawing`` (a step of view ``base``) under the view's transform."""
        state = state if state is not None else self.state(base)
        # An untouched copy of a drawing (a step that changed nothing) has its picture.
        original = drawing.same_as if drawing.same_as is not None else drawing
        cache_key = (id(original), base, state)
        with self._lock:
            cached = self._pictures.get(cache_key)
        if cached is not None and cached[0] is original:
            return cached[1]
        picture = self.apply(drawing, state, differentiated_view(base))
        picture.key = transform_key(base, state) if state.restructures else base
        with self._lock:
            self._pictures[cache_key] = (original, picture)
            while len(self._pictures) > _PICTURES_KEPT:
                self._pictures.popitem(last=False)
        return picture

    def make_ahead(self, drawing: DrawGraph, base: Hashable) -> None:
        """On a background thread: the picture a step will ask for when shown
        (stubs found, the edge set the canvas filters by), made before its key is pressed."""
        self.picture(drawing, base).graph.edge_keys()

    def apply(self, drawing: DrawGraph, state: ViewTransform, differentiated: bool = False) -> Picture:
        """Collapse, then focus (around the box that hides the centre, if one
        does), then stubs; the picture's key is left to the caller.
        ``differentiated``: the drawing shows f or df, whose autodiff plumbing
        folds too at the ops level (:mod:`.plumbing`)."""
        graph, folded, missing = drawing, None, False
        plumbing = None
        if state.detail is not Detail.IR and drawing.sources:
            plumbing = fold_plumbing(graph, drawing.sources, autodiff=differentiated)  # type: ignore[arg-type]
            graph = plumbing.graph
        dissolved: list[str] = []
        if state.detail is Detail.MODEL and self.modules:
            graph, dissolved = dissolve_spanning_groups(graph)
            graph = drop_unread_loose(frame_modules(graph, self.modules))
        if state.collapsed:
            groups = state.collapsed
            if state.detail is Detail.MODEL:
                groups = frozenset(in_halves(groups))  # their boxes named when the state was set
            with self._lock:
                ids = {key: self._box_ids[key] for key in groups if key in self._box_ids}
            framed = graph
            folded = collapse(graph, groups, ids)
            if state.detail is Detail.MODEL:
                label_module_boxes(
                    folded, framed, self.modules, self.value_types, self._module_shapes, self.saved_bytes,
                    self.parameters,
                )
                merge_box_edges(folded.graph, {box for box, key in folded.groups.items() if is_module_key(key)})
            graph = folded.graph
        if state.focus is not None:
            centre = folded.box_of.get(state.focus, state.focus) if folded is not None else state.focus
            missing = centre not in graph.nodes
            graph = focus_graph(graph, centre, state.hops)
        stubs = None
        if state.stubs:
            found = fan_out_stubs(graph)
            if found.labels:
                stubs, graph = found, found.graph
        labels = stub_labels(stubs) if stubs is not None else {}
        return Picture(graph, None, folded, stubs, labels, missing, plumbing, dissolved)

    # -- layouts ---------------------------------------------------------------------------------
    def layout_graph(
        self, base: Hashable, state: ViewTransform, members: Callable[[], Sequence[DrawGraph]]
    ) -> DrawGraph:
        """What the transformed layout of view ``base`` places: the union of
        the view's drawings (``members``, drawn once per view and kept), each
        transformed by ``state``. Runs in a worker thread."""
        with self._lock:
            drawings = self._members.get(base)
        if drawings is None:
            drawings = list(members())
            with self._lock:
                self._members[base] = drawings
                while len(self._members) > _MEMBERS_KEPT:
                    self._members.popitem(last=False)
        union = union_graph([self.apply(drawing, state, differentiated_view(base)).graph for drawing in drawings])
        if state.detail is Detail.MODEL:
            with self._lock:
                boxes = {box for key, box in self._box_ids.items() if is_module_key(key)}
            merge_box_edges(union, boxes)
            union.compact_ranks = any(node_id in boxes for node_id in union.nodes)
        return union


def differentiated_view(base: Hashable) -> bool:
    """Whether the view ``base`` (a layout key) shows a DifferentiableGraph's f or
    df: the forward, backward and joint views, and the whole view of f, df or
    df's executor (``("whole", GraphName)`` of a graph that is not the main one)."""
    if not isinstance(base, tuple) or not base:
        return False
    return base[0] != "whole" or not getattr(base[1] if len(base) > 1 else None, "is_main", True)


def describe(picture: Picture, state: ViewTransform, drawing: DrawGraph) -> str:
    """The view bar's words for what the transform changed: ``focus: 2 hops
    around %x``, ``3 groups collapsed``, ``stubs: 2 values``; "" for none."""
    parts = []
    if state.focus is not None:
        centre = drawing.nodes.get(state.focus) or picture.graph.nodes.get(state.focus)
        name = node_name(centre) if centre is not None else f"node {state.focus}"
        where = " (not in this step)" if picture.focus_missing else ""
        parts.append(f"focus: {state.hops} hop{'s' if state.hops != 1 else ''} around {name}{where} (f)")
    if picture.collapsed is not None and picture.collapsed.groups:
        modules = sum(1 for key in picture.collapsed.groups.values() if is_module_key(key))
        others = len(picture.collapsed.groups) - modules
        if modules:
            parts.append(f"{modules} module{'s' if modules != 1 else ''} folded (enter/x expands)")
        if others:
            parts.append(f"{others} group{'s' if others != 1 else ''} collapsed (x X)")
    if picture.dissolved:
        count = len(picture.dissolved)
        parts.append(f"{count} DifferentiableGraph{'s' if count != 1 else ''} across modules framed at the ops level")
    if picture.stubs is not None:
        count = len(picture.stubs.labels)
        parts.append(f"stubs: {count} value{'s' if count != 1 else ''} (o)")
    return ", ".join(parts)
