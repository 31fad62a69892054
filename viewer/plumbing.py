"""The ``ops`` level of detail: plumbing folded into the op that reads it.

TorchScript spells every argument of an op as a node: a convolution reads
seven ``prim::Constant`` s and four ``prim::ListConstruct`` s, and a view
reads ``aten::size`` s packed into a list. :func:`fold_plumbing` takes one
step's drawing (:func:`gradview.viewer.views.draw_step`) and the graphs it
was drawn from, and returns a drawing where those nodes are gone and each
reader's label says, in the op's own argument names, what they held::

    %33 = prim::ListConstruct(%30, %30)    # %30 = 2
    %34 = prim::ListConstruct(%29, %29)    # %29 = 3
    %y = aten::_convolution(%x, %w, %none, %33, %34, ...)
        ->  conv2d stride=2 pad=3

What folds (a *plumbing* box):

* constants, ``prim::ListConstruct``, ``TupleConstruct``, ``TupleUnpack``,
  ``ListUnpack``, ``prim::GetAttr``, and the shape queries ``aten::size``,
  ``sym_size``, ``numel``, ``dim`` and ``_size_if_not_equal``;
* any other node whose results are all ``int[]`` or ``int[]?``, and a graph
  input of that type (the sizes a backward graph is handed);
* size arithmetic: ``prim::NumToTensor``, ``aten::Int``, ``mul``, ``div``...
  when every input is folded plumbing and every result is a number, a list of
  ints or a tensor with no dimensions (``x.size(0) * 4`` as the tracer records
  it, a constant made a tensor). An ``aten::Int`` of a tensor computed from
  data stays: it is a real dependency (and a sync point).

What stays although it is plumbing: a box read by a return (a graph's, a
block's: the value leaves the picture there), a box whose value f hands to
df (a capture arrow), and a box nobody reads (dead code, which
EliminateDeadCode's step should show). So a block never loses the node that
makes its result.

In a picture of f or df (``autodiff=True``: the forward, backward and joint
views) autodiff's own plumbing folds too, so they read as a lecture draws them:
sizes a graph returns or f hands to df (``_size_if_not_equal``, the ``int[]?``
captures), the tuple a graph returns, and ``_grad_sum_to_size`` (which undoes
broadcasting: its reader shows its gradient). Sizes folded this way draw no
arrow (``x``'s size is not ``x``: ``%x -> size -> return`` is not an arrow
from ``x``).

Arrows: every edge between real boxes through folded plumbing becomes one
edge (``%x -> aten::size -> ListConstruct -> view`` is ``%x -> view``), a
capture if any edge on the way was one. Ids, frames (those left with a box),
ghosts, tooltips (the full IR line the inspector shows) and output lines stay;
:class:`Folded` maps each folded id to the box that shows it, for the
selection and the marks. The labels are :mod:`gradview.viewer.plumbing_text`'s
(``conv2d stride=2 pad=1``, ``view size=[%q.size(0), -1]``).

Linear in the drawing: dict lookups in program order; each folded box's
incoming arrows and text are built once and reused by every reader (texts are
capped at 120 characters).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from gradview.ir.types import SCALAR_TYPE_NAMES
from gradview.runtime import BlockRecord, NodeRecord, PassTrace, ValueRecord, walk_records

from .model import Cluster, DrawEdge, DrawGraph, DrawNode, NodeRole, View
from .plumbing_text import LIST_TYPES, Expr, folded_expr, op_lines
from .view_registry import view_spec
from .views import DIFFERENTIABLE_GRAPH, draw_step

__all__ = ["Folded", "fold_plumbing", "fold_step"]

# Always plumbing: packing, unpacking, constants, attribute reads, shape queries.
_ALWAYS = frozenset({
    "prim::Constant", "prim::ListConstruct", "prim::TupleConstruct", "prim::TupleUnpack",
    "prim::ListUnpack", "prim::GetAttr", "aten::size", "aten::sym_size", "aten::numel",
    "aten::sym_numel", "aten::dim", "aten::_size_if_not_equal",
})
# Plumbing when all their inputs are: conversions and the arithmetic the tracer records on sizes.
_SIZE_ARITHMETIC = frozenset({
    "prim::NumToTensor", "aten::Int", "aten::Float", "aten::Bool", "aten::ScalarImplicit",
    "aten::mul", "aten::div", "aten::floordiv", "aten::floor_divide", "aten::add", "aten::sub",
    "aten::remainder", "aten::neg", "prim::min", "prim::max", "aten::__getitem__", "prim::TupleIndex",
    "aten::len", "gradview::reduced_numel",
})
_PACKERS = ("prim::ListConstruct", "prim::TupleConstruct")
# Folded into their reader, which reads the first input through them (a gradient
# summed back to its input's size is, for the picture, that gradient).
_PASS_THROUGH = frozenset({"aten::_grad_sum_to_size"})
# Top-level frames of the joint view: a return in one is a graph's, not a block's.
_GRAPH_FRAMES = frozenset({None, "f", "df"})
# What size arithmetic makes (besides tensors with no dimensions).
_SIZE_TYPES = frozenset({"int", "float", "bool", "int[]", "int[]?", "NoneType", "Scalar", "number"})


@dataclass
class Folded:
    """A drawing with its plumbing folded: ``graph`` to lay out and draw,
    ``box_of`` each folded box's reader (the box that shows it: selecting a
    folded node selects that one), ``members`` each reader's folded boxes in
    program order."""

    graph: DrawGraph
    box_of: dict[int, int] = field(default_factory=dict)
    members: dict[int, list[int]] = field(default_factory=dict)
    # A folded pass-through's result -> the value it passes on (``_grad_sum_to_size``'s
    # gradient): marks on the first (a vjp output) belong on the second.
    same_value: dict[int, int] = field(default_factory=dict)
    same_box: dict[int, int] = field(default_factory=dict)  # the folded pass-through -> the box making its value


# -- the API -----------------------------------------------------------------------------------
def fold_step(trace: PassTrace, index: int, view: View, dg: int = 0, ghosts: bool = True) -> Folded:
    """Step ``index`` in ``view`` (of DifferentiableGraph ``dg``) drawn at the
    ``ops`` level: :func:`draw_step`'s drawing, folded (autodiff's plumbing too
    outside the whole view of the main graph)."""
    differentiated = view_spec(view).differentiated or not trace[index].which.is_main
    return fold_plumbing(draw_step(trace, index, view, dg, ghosts), autodiff=differentiated)


def fold_plumbing(drawing: DrawGraph, graphs: Iterable[BlockRecord] | None = None, autodiff: bool = False) -> Folded:
    """``drawing`` with its plumbing folded into the boxes that read it.

    ``graphs`` are the records it was drawn from, by default its ``sources``
    (:func:`draw_step`'s: the step's graphs first, then the previous ones for
    the ghosts; a node id in several keeps its first record). Boxes without a
    record are kept as drawn. ``autodiff``: the drawing shows f or df, so
    autodiff's plumbing folds too (sizes and tuples a graph returns or f hands
    to df, ``_grad_sum_to_size``)."""
    sources = drawing.sources if graphs is None else graphs
    records = _Records(source for source in sources if isinstance(source, BlockRecord))
    return _Folding(drawing, records, autodiff).result()


# -- the records ---------------------------------------------------------------------------------
class _Records:
    """Node records by id, each value's producer, type and name, and the aliases a
    DifferentiableGraph adds (its subgraph's inputs are the node's inputs, its
    outputs the subgraph's results), as the drawing follows them."""

    def __init__(self, graphs: Iterable[BlockRecord]) -> None:
        self.nodes: dict[int, NodeRecord] = {}
        self.producer: dict[int, tuple[NodeRecord, int]] = {}
        self.values: dict[int, ValueRecord] = {}
        self.alias: dict[int, int] = {}
        for graph in graphs:
            self._add(graph)

    def _add(self, graph: BlockRecord) -> None:
        pending = [graph]
        for node in walk_records(graph):
            self.nodes.setdefault(node.id, node)
            for position, value in enumerate(node.outputs):
                self.producer.setdefault(value.id, (node, position))
                self.values.setdefault(value.id, value)
            pending.extend(node.blocks)
            if node.kind == DIFFERENTIABLE_GRAPH and node.subgraph is not None:
                sub = node.subgraph
                pending.append(sub)
                for param, outer in zip(sub.params, node.inputs, strict=False):
                    self.alias.setdefault(param.id, outer)
                for output, inner in zip(node.outputs, sub.returns, strict=False):
                    self.alias.setdefault(output.id, inner)
        for block in pending:
            for param in block.params:
                self.values.setdefault(param.id, param)

    def resolve(self, value: int) -> int:
        """The value ``value`` stands for across DifferentiableGraph boundaries."""
        for _ in range(64):  # DifferentiableGraphs nest a few deep; aliases never form a cycle
            if value not in self.alias:
                break
            value = self.alias[value]
        return value

    def type_of(self, value: int) -> str:
        found = self.values.get(value)
        return found.type if found is not None else ""

    def name_of(self, value: int) -> str:
        found = self.values.get(value)
        return "%" + (found.name if found is not None else "?")


# -- folding ------------------------------------------------------------------------------------
class _Folding:
    def __init__(self, drawing: DrawGraph, records: _Records, autodiff: bool = False) -> None:
        self.drawing = drawing
        self.records = records
        self.autodiff = autodiff
        self.outgoing: dict[int, list[DrawEdge]] = {}
        self.incoming: dict[int, list[DrawEdge]] = {}
        for edge in drawing.edges:
            self.outgoing.setdefault(edge.source, []).append(edge)
            self.incoming.setdefault(edge.target, []).append(edge)
        self.folded: set[int] = set()
        self.unlinked: set[int] = set()  # sizes leaving a graph: folded with no arrow rerouted
        for box_id, box in drawing.nodes.items():
            if self._plumbing(box_id, box) and not self._must_stay(box_id):
                self.folded.add(box_id)
                if autodiff and self._leaves_the_graph(box_id) and self._sizes_only(box_id):
                    self.unlinked.add(box_id)
        self.exprs: dict[int, Expr] = {}  # resolved value id -> what it shows as

    # which boxes fold
    def _plumbing(self, box_id: int, box: DrawNode) -> bool:
        if box.role is NodeRole.RETURN:
            return False
        if box.role is NodeRole.INPUT:
            return self.records.type_of(box_id) in LIST_TYPES  # an input box's id is its value's
        node = self.records.nodes.get(box_id)
        if node is None:
            return box.role is NodeRole.CONSTANT
        if node.blocks or node.subgraph is not None:
            return False
        types = [value.type for value in node.outputs]
        if node.kind in _ALWAYS or (types and all(t in LIST_TYPES for t in types)):
            return True
        if node.kind in _PASS_THROUGH:
            return self.autodiff
        return (
            node.kind in _SIZE_ARITHMETIC
            and bool(node.inputs)
            and all(self._folded_value(value) for value in node.inputs)
            and all(t in _SIZE_TYPES or _scalar_tensor(t) for t in types)
        )

    def _must_stay(self, box_id: int) -> bool:
        """Read by a block's return, a tensor handed from f to df, or read by nobody."""
        edges = self.outgoing.get(box_id)
        if not edges:
            return True
        nodes = self.drawing.nodes
        if not self.autodiff:
            return any(edge.capture or nodes[edge.target].role is NodeRole.RETURN for edge in edges)
        sizes = self._sizes_only(box_id)
        if self._passes_through_in_its_block(box_id):
            return False
        return any(
            (edge.capture and not sizes)
            or (nodes[edge.target].role is NodeRole.RETURN and nodes[edge.target].cluster not in _GRAPH_FRAMES)
            for edge in edges
        )

    def _passes_through_in_its_block(self, box_id: int) -> bool:
        """A ``_grad_sum_to_size`` whose gradient is made in its own block: folded even
        when the block returns it, since the block keeps the box that makes it."""
        node = self.records.nodes.get(box_id)
        if node is None or node.kind not in _PASS_THROUGH or not node.inputs:
            return False
        source = self._box_of_value(node.inputs[0])
        nodes = self.drawing.nodes
        return source in nodes and source != box_id and nodes[source].cluster == nodes[box_id].cluster

    def _leaves_the_graph(self, box_id: int) -> bool:
        nodes = self.drawing.nodes
        return any(e.capture or nodes[e.target].role is NodeRole.RETURN for e in self.outgoing.get(box_id, ()))

    def _sizes_only(self, box_id: int) -> bool:
        """Its results are sizes (``int[]``, ``int[]?``): shape plumbing, not data."""
        node = self.records.nodes.get(box_id)
        types = [value.type for value in node.outputs] if node is not None else [self.records.type_of(box_id)]
        return bool(types) and all(t in LIST_TYPES for t in types)

    def _box_of_value(self, value: int) -> int | None:
        resolved = self.records.resolve(value)
        found = self.records.producer.get(resolved)
        if found is not None:
            return found[0].id
        return resolved if resolved in self.drawing.nodes else None

    def _folded_value(self, value: int) -> bool:
        return self._box_of_value(value) in self.folded

    # where folded boxes go
    def _targets(self) -> dict[int, int]:
        """Each folded box's reader: the real box its first reader leads to
        (a reader in this step before a ghost, a removed one)."""
        target: dict[int, int] = {}
        for start in self.folded:
            path, box = [], start
            while box in self.folded and box not in target and box not in path:
                path.append(box)
                box = self._first_reader(box)
            end = target.get(box, box)
            if end in self.folded:  # a cycle (only ghosts of a reordered graph could make one)
                end = next((e.target for b in path for e in self.outgoing[b] if e.target not in self.folded), start)
            for box in path:
                target[box] = end
        return target

    def _first_reader(self, box: int) -> int:
        edges = self.outgoing[box]
        ghosts = self.drawing.ghosts
        return next((e.target for e in edges if e.target not in ghosts), edges[0].target)

    def _upstream(self) -> dict[int, list[DrawEdge]]:
        """Each folded box's incoming edges from real boxes, through folded ones."""
        found: dict[int, list[DrawEdge]] = {}
        for start in self.folded:
            if start in found:
                continue
            stack, open_ = [start], {start}
            while stack:
                box = stack[-1]
                pending = [e.source for e in self.incoming.get(box, ()) if e.source in self.folded
                           and e.source not in found and e.source not in open_]
                if pending:
                    stack.extend(pending)
                    open_.update(pending)
                    continue
                stack.pop()
                edges: dict[tuple[int, int], DrawEdge] = {}
                for edge in () if box in self.unlinked else self.incoming.get(box, ()):
                    if edge.source not in self.folded:
                        edges.setdefault((edge.source, edge.value_id), edge)
                    for inner in found.get(edge.source, ()):
                        key = (inner.source, inner.value_id)
                        capture = inner.capture or edge.capture
                        if key not in edges or capture and not edges[key].capture:
                            edges[key] = dataclasses.replace(inner, capture=capture)
                found[box] = list(edges.values())
        return found

    # the result
    def result(self) -> Folded:
        drawing = self.drawing
        targets = self._targets()
        upstream = self._upstream()
        for box_id in drawing.nodes:  # texts in program order: an input's is made before its reader's
            node = self.records.nodes.get(box_id)
            if box_id in self.folded and node is not None:
                for value in node.outputs:
                    self._expr(value.id)
        # A new drawing with the same settings and sources (what else DrawGraph holds).
        out = dataclasses.replace(drawing, nodes={}, edges=[], clusters={}, ghosts=drawing.ghosts - self.folded)
        for box_id, box in drawing.nodes.items():
            if box_id not in self.folded:
                out.nodes[box_id] = self._relabelled(box_id, box)
        kept = [e for e in drawing.edges if e.source not in self.folded and e.target not in self.folded]
        seen = {(e.source, e.target, e.value_id) for e in kept}
        for edge in drawing.edges:
            if edge.target in self.folded:
                continue
            if edge.source not in self.folded:
                out.edges.append(edge)
                continue
            for inner in upstream[edge.source]:
                key = (inner.source, edge.target, inner.value_id)
                if key not in seen and inner.source != edge.target:
                    seen.add(key)
                    out.edges.append(DrawEdge(inner.source, edge.target, inner.value_id, inner.label,
                                              inner.capture or edge.capture))
        used: set[str] = set()
        for node in out.nodes.values():
            key = node.cluster
            while key is not None and key not in used and key in drawing.clusters:
                used.add(key)
                key = drawing.clusters[key].parent
        out.clusters = {key: cluster for key, cluster in drawing.clusters.items() if key in used}
        members: dict[int, list[int]] = {}
        for box_id in drawing.nodes:
            if box_id in self.folded:
                members.setdefault(targets[box_id], []).append(box_id)
        same_value: dict[int, int] = {}
        if self.autodiff:
            out.gradient_names = self.drawing.gradient_names
            _lecture_names(out)
            out.clusters = {key: self._grad_of_title(cluster) for key, cluster in out.clusters.items()}
            same_value = self._passed_on()
        same_box = {}
        for gone, shown in same_value.items():
            producer, source = self.records.producer.get(gone), self._box_of_value(shown)
            if producer is not None and source is not None and source in out.nodes:
                same_box[producer[0].id] = source
        box_of = {box: targets[box] for box in drawing.nodes if box in self.folded}
        return Folded(out, box_of, members, same_value, same_box)

    def _passed_on(self) -> dict[int, int]:
        """Each folded pass-through's result -> the drawn value it passes on."""
        found: dict[int, int] = {}
        for box_id in self.folded:
            node = self.records.nodes.get(box_id)
            if node is None or node.kind not in _PASS_THROUGH or not node.inputs or not node.outputs:
                continue
            value = node.inputs[0]
            for _ in range(16):  # through a chain of them (_grad_sum_to_size of _grad_sum_to_size)
                producer = self.records.producer.get(self.records.resolve(value))
                if producer is None or producer[0].id not in self.folded or producer[0].kind not in _PASS_THROUGH:
                    break
                value = producer[0].inputs[0]
            found[node.outputs[0].id] = value
        return found

    def _grad_of_title(self, cluster: Cluster) -> Cluster:
        """A GradOf block's frame says which op it differentiates: ``gradient of sin``."""
        owner, _, block = cluster.key.partition(".")
        node = self.records.nodes.get(int(owner[1:])) if owner[1:].isdigit() and block else None
        if node is None or node.kind != "prim::GradOf":
            return cluster
        primal = dict(node.attrs).get("name", "").strip('"')
        return dataclasses.replace(cluster, title=f"gradient of {primal.split('::')[-1] or '?'}")

    # labels
    def _relabelled(self, box_id: int, box: DrawNode) -> DrawNode:
        node = self.records.nodes.get(box_id)
        if node is None or box.role is not NodeRole.OP:
            return box
        args = [self._expr(value) for value in node.inputs]
        head = op_lines(node, args, [self.records.type_of(value) for value in node.inputs])
        return dataclasses.replace(box, label="\n".join(head + box.label.splitlines()[1:]))

    def _expr(self, value: int) -> Expr:
        resolved = self.records.resolve(value)
        found = self.exprs.get(resolved)
        if found is None:
            found = self.exprs[resolved] = self._make_expr(resolved)
        return found

    def _make_expr(self, value: int) -> Expr:
        producer = self.records.producer.get(value)
        if producer is None or producer[0].id not in self.folded:
            # A drawn box's value (an arrow), or an int[] input that folds but holds no constant.
            return Expr(self.records.name_of(value), bare=value not in self.folded)
        node, position = producer
        if self.autodiff and node.kind in _PASS_THROUGH and node.inputs:
            return self._expr(node.inputs[0])
        if node.kind in ("prim::TupleUnpack", "prim::ListUnpack") and node.inputs:
            packer = self.records.producer.get(self.records.resolve(node.inputs[0]))
            packed = packer[0] if packer is not None and packer[0].id in self.folded else None
            if packed is not None and packed.kind in _PACKERS and position < len(packed.inputs):
                return self._expr(packed.inputs[position])  # the packed value itself
        return folded_expr(node, position, [self._expr(v) for v in node.inputs])


_NUMBERED = re.compile(r"%([A-Za-z_]\w*)\.(\d+)\b")


def _lecture_names(graph: DrawGraph) -> None:
    """Values named as the source names them, in the labels of boxes and arrows.

    A value df captures reads in df as in f (df's ``%h.1``, the capture of f's
    ``%h.2``, reads ``%h.2``); then ``%x.1`` and ``%sin_x.3`` read ``%x`` and
    ``%sin_x`` wherever that stays unambiguous: the name is the only numbered
    one of its stem in the picture (a loop's ``%h.2`` and ``%h.4`` keep their
    numbers) and the stem alone names no other value."""
    _same_names_for_captures(graph)
    _gradient_names(graph)
    texts = [node.label for node in graph.nodes.values()] + [edge.label for edge in graph.edges]
    full: dict[str, set[str]] = {}
    bare: set[str] = set()
    for text in texts:
        for match in _NUMBERED.finditer(text):
            full.setdefault(match.group(1), set()).add(match.group(0))
        bare.update(re.findall(r"%([A-Za-z_]\w*)\b(?!\.\d)", text))
    renamed = {
        name: "%" + base for base, names in full.items() if len(names) == 1 and base not in bare for name in names
    }
    if renamed:
        _rename(graph, renamed, None)


def _gradient_names(graph: DrawGraph) -> None:
    """df's incoming gradients named as the chain-rule line names them (``%0`` reads ``%grad``)."""
    by_frame: dict[str | None, dict[str, str]] = {}
    for box_id, name in graph.gradient_names.items():
        box = graph.nodes.get(box_id)
        if box is not None and box.role is NodeRole.INPUT and box.label.startswith("%"):
            by_frame.setdefault(_top_frame(graph, box.cluster), {})[box.label.split(" ")[0]] = "%" + name
    _rename_in_frames(graph, by_frame)


def _same_names_for_captures(graph: DrawGraph) -> None:
    """df's input boxes named as the f values they capture (same source variable only)."""
    by_frame: dict[str | None, dict[str, str]] = {}
    for edge in graph.edges:
        target = graph.nodes.get(edge.target)
        if not edge.capture or target is None or target.role is not NodeRole.INPUT:
            continue
        ours, theirs = target.label.split(" ")[0], edge.label
        stem = _NUMBERED.sub(r"%\1", ours)
        if ours != theirs and ours.startswith("%") and not ours[1:].isdigit() and stem == _NUMBERED.sub(r"%\1", theirs):
            by_frame.setdefault(_top_frame(graph, target.cluster), {})[ours] = theirs
    _rename_in_frames(graph, by_frame)


def _rename_in_frames(graph: DrawGraph, by_frame: dict[str | None, dict[str, str]]) -> None:
    """Every frame's renames in one pass over the picture (one pass per rename was
    quadratic: a 1,000-op df has thousands of incoming gradients)."""
    if not by_frame:
        return
    frames = {box_id: _top_frame(graph, node.cluster) for box_id, node in graph.nodes.items()}
    patterns = {frame: _rename_pattern(renamed) for frame, renamed in by_frame.items()}

    def rename(box: int, text: str) -> str:
        # A box outside every frame (key None) renames everywhere, as a frame of its own would not.
        for frame in (frames.get(box), None) if frames.get(box) is not None else (None,):
            if frame in by_frame:
                renamed = by_frame[frame]
                text = patterns[frame].sub(lambda m, renamed=renamed: renamed[m.group(0)], text)
        return text

    graph.nodes = {i: _relabelled(n, rename(i, n.label)) for i, n in graph.nodes.items()}
    graph.edges = [_relabelled(e, rename(e.source, e.label)) for e in graph.edges]


def _relabelled(item: Any, label: str) -> Any:
    return item if label == item.label else dataclasses.replace(item, label=label)


def _rename_pattern(renamed: dict[str, str]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(name) for name in sorted(renamed, key=len, reverse=True)) + r"(?![\w.])")


def _top_frame(graph: DrawGraph, key: str | None) -> str | None:
    while key is not None and key in graph.clusters and graph.clusters[key].parent is not None:
        key = graph.clusters[key].parent
    return key


def _rename(graph: DrawGraph, renamed: dict[str, str], frame: str | None) -> None:
    """Rename whole value names in labels (in the boxes and arrows of ``frame``, or everywhere)."""
    pattern = _rename_pattern(renamed)

    def rename(text: str) -> str:
        return pattern.sub(lambda m: renamed[m.group(0)], text)

    def inside(box: int) -> bool:
        node = graph.nodes.get(box)
        return frame is None or (node is not None and _top_frame(graph, node.cluster) == frame)

    graph.nodes = {i: _relabelled(n, rename(n.label)) if inside(i) else n for i, n in graph.nodes.items()}
    graph.edges = [_relabelled(e, rename(e.label)) if inside(e.source) else e for e in graph.edges]


def _scalar_tensor(type_text: str) -> bool:
    """``Long(requires_grad=0, device=cpu)``, ``Double()``: a tensor with no
    dimensions (NumToTensor's result, the tracer's sizes as tensors)."""
    head, paren, rest = type_text.partition("(")
    return bool(paren) and head in SCALAR_TYPE_NAMES and all("=" in part for part in rest.rstrip(")").split(",") if part.strip())
