"""What the viewer draws: a graph of boxes and arrows, independent of how it is drawn.

Every part of the viewer speaks these types. ``views.py`` turns a trace step
into a :class:`DrawGraph` for one view (the whole graph, the forward ``f``,
the backward ``df``, or the joint view of both with captured values as
edges); ``marks.py`` says how each node and edge is highlighted;
``layout.py`` places the nodes of all the steps of one view at once, so a
node keeps its place from step to step; the terminal canvas and the SVG
export draw the result.

Ids: a node is keyed by its stable trace id (the same number in every step
that shows it). Graph inputs are drawn as nodes keyed by their value's id
(trace ids of nodes and values come from one counter, so they never clash);
a graph's return is a node keyed by ``return_id(scope)``, a negative number.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

__all__ = [
    "View",
    "NodeRole",
    "DrawNode",
    "DrawEdge",
    "Cluster",
    "DrawGraph",
    "Mark",
    "Marks",
    "return_id",
]


class View(enum.Enum):
    """Which picture of a step to draw."""

    WHOLE = "whole"  # the step's graph; DifferentiableGraph subgraphs as framed clusters
    FORWARD = "forward"  # f of the selected DifferentiableGraph
    BACKWARD = "backward"  # df of the selected DifferentiableGraph
    JOINT = "joint"  # f and df side by side, each captured value an edge from f into df


class NodeRole(enum.Enum):
    OP = "op"
    CONSTANT = "constant"
    INPUT = "input"  # a graph (or subgraph) input
    RETURN = "return"  # a graph's outputs


@dataclass(frozen=True)
class DrawNode:
    id: int
    label: str  # first line: the op (``aten::matmul``); more lines: output names and types
    role: NodeRole = NodeRole.OP
    cluster: str | None = None  # key into DrawGraph.clusters, None for top level
    tooltip: str = ""  # the node's printed IR line
    # The nn.Module the node comes from, as named_modules() spells it ("layer1.0.conv1";
    # "" for none or the model itself): a parameter's input box names its owner.
    module: str = ""


@dataclass(frozen=True)
class DrawEdge:
    source: int  # DrawNode ids
    target: int
    value_id: int  # the trace id of the value flowing along the edge
    label: str = ""  # the value's name, ``%x``
    capture: bool = False  # in the joint view: a value f hands to df


@dataclass(frozen=True)
class Cluster:
    key: str
    title: str  # ``DifferentiableGraph_0``, ``f``, ``df``, ``prim::If block0``
    parent: str | None = None


@dataclass
class DrawGraph:
    """Nodes in program order, edges, and the frames around groups of nodes."""

    nodes: dict[int, DrawNode] = field(default_factory=dict)
    edges: list[DrawEdge] = field(default_factory=list)
    clusters: dict[str, Cluster] = field(default_factory=dict)
    # Nodes of the previous step that this step removed, drawn back (faded) so
    # the eye sees what went; ``nodes`` holds them too.
    ghosts: set[int] = field(default_factory=set)
    # Lay out with tight gaps between ranks (the model level's module boxes).
    compact_ranks: bool = False
    # The trace's graph records this drawing was drawn from (the step's graphs,
    # then those its ghosts come from), for what reads the IR behind the boxes
    # (the plumbing folded at the ops level); empty for drawings made otherwise.
    sources: tuple[object, ...] = field(default=(), repr=False, compare=False)
    # After ``r``: value id -> its run value in short form, drawn on the edges
    # that carry it (viewer/edge_values.py); not part of the layout.
    edge_values: dict[int, str] = field(default_factory=dict, repr=False, compare=False)
    # df's incoming gradients drawn: input box id -> the name a lecture gives it
    # (``grad``, ``grad_sin_x``: viewer/chain_rule.py), shown at the ops level.
    gradient_names: dict[int, str] = field(default_factory=dict, repr=False, compare=False)
    # The drawing this one is an untouched copy of (same nodes, edges, frames,
    # ghosts), so what is derived from it (a picture with stubs) is made once;
    # adding a node or an edge forgets it.
    same_as: DrawGraph | None = field(default=None, init=False, repr=False, compare=False)
    # edge_keys()'s answer with the list and length it was computed for.
    _edge_key_cache: tuple[list[DrawEdge], int, frozenset[tuple[int, int, int]]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def edge_keys(self) -> frozenset[tuple[int, int, int]]:
        """(source, target, value id) of every edge, computed once while the
        edge list stays as it is (the canvas asks on every step shown)."""
        cached = self._edge_key_cache
        if cached is not None and cached[0] is self.edges and cached[1] == len(self.edges):
            return cached[2]
        keys = frozenset((edge.source, edge.target, edge.value_id) for edge in self.edges)
        self._edge_key_cache = (self.edges, len(self.edges), keys)
        return keys

    def __getstate__(self) -> dict[str, object]:
        # Sent to layout workers: caches and records stay here.
        return {**self.__dict__, "_edge_key_cache": None, "same_as": None, "sources": ()}

    def add_node(self, node: DrawNode) -> None:
        self.nodes[node.id] = node
        self.same_as = None

    def add_edge(self, edge: DrawEdge) -> None:
        self.edges.append(edge)
        self.same_as = None

    def copy(self) -> DrawGraph:
        """A copy whose containers can change without touching this one (``same_as`` this)."""
        out = DrawGraph(dict(self.nodes), list(self.edges), dict(self.clusters), set(self.ghosts), self.compact_ranks)
        out.sources = self.sources
        out.edge_values = self.edge_values
        out.gradient_names = self.gradient_names
        out.same_as = self.same_as if self.same_as is not None else self
        return out


class Mark(enum.Enum):
    """A highlight on a node or an edge; the palette gives each its colour."""

    ADDED = "added"  # the node is new in this step
    REMOVED = "removed"  # the node was in the previous step of this view and is gone (drawn faded)
    INPUTS_CHANGED = "inputs_changed"  # same node, different inputs
    CAPTURED_INPUT = "captured_input"  # a DifferentiableGraph input that df reads (df_input_captured_inputs)
    CAPTURED_OUTPUT = "captured_output"  # a value of f that df reads (df_input_captured_outputs)
    TEMPORARY = "temporary"  # a captured output that is not a real output of f (a new temporary)
    VJP_INPUT = "vjp_input"  # an incoming gradient of df (df_input_vjps)
    VJP_OUTPUT = "vjp_output"  # a gradient df produces (df_output_vjps)
    ZERO = "zero"  # AutogradZero state of a value: known zero
    NONZERO = "nonzero"
    UNKNOWN = "unknown"
    GRAD_OF = "grad_of"  # a GradOf block, linked to the primal node it differentiates
    SELECTED = "selected"
    LINKED = "linked"  # lit up because of the selection (the GradOf partner, say)
    FAILED = "failed"  # a node named by a failing lint or run


@dataclass
class Marks:
    """Highlights for one step and view: node id or value id -> marks, with an
    optional index shown beside a mark (the position in a Gradient list)."""

    nodes: dict[int, set[Mark]] = field(default_factory=dict)
    values: dict[int, set[Mark]] = field(default_factory=dict)
    indices: dict[tuple[int, Mark], int] = field(default_factory=dict)

    # Marking never changes a set in place (a new set replaces it), so a
    # copy() shares the sets and marking the copy leaves the original as it is.
    def mark_node(self, node_id: int, mark: Mark, index: int | None = None) -> None:
        marks = self.nodes.get(node_id)
        if marks is None:
            self.nodes[node_id] = {mark}
        elif mark not in marks:
            self.nodes[node_id] = marks | {mark}
        if index is not None:
            self.indices[(node_id, mark)] = index

    def mark_value(self, value_id: int, mark: Mark, index: int | None = None) -> None:
        marks = self.values.get(value_id)
        if marks is None:
            self.values[value_id] = {mark}
        elif mark not in marks:
            self.values[value_id] = marks | {mark}
        if index is not None:
            self.indices[(value_id, mark)] = index

    def copy(self) -> Marks:
        """A copy to mark further (the selection on a step's cached marks), in
        time linear in the marked ids, the sets shared."""
        return Marks(dict(self.nodes), dict(self.values), dict(self.indices))


def return_id(scope: int = 0) -> int:
    """The id of the return node of graph number ``scope`` in a drawing (negative: no trace id)."""
    return -1 - scope
