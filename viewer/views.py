"""Turn one step of the pass trace into boxes and arrows: a :class:`DrawGraph` per view.

What is drawn, for a graph:

* one box per node: the op kind on the first line, then each output with a
  short type (``%h : Double(8, 16)``); constants as small boxes holding
  their value;
* one box per graph input, keyed by the input value's id, and one return box
  (``return_id(scope)``);
* one arrow per use of a value: from the node that produces it to the node
  that reads it (or to a return box);
* the nodes of an ``If``/``Loop`` block inside a frame per block
  (``prim::If block0``), with a return box of its own; a block's parameters
  (a loop's counter and carried values) come out of the node that owns it;
* a ``prim::DifferentiableGraph`` node is not a box: its subgraph's nodes are
  drawn in a frame ``DifferentiableGraph_k``, arrows go from the outer
  producers straight to the inner nodes reading them, and from the inner
  results to the outer nodes using the group's outputs. That is how the
  slicing looks: the ops stay where they were, the frame shows the groups.

Views (see :mod:`gradview.viewer.view_steps` for which step each shows):
WHOLE is the step's graph; FORWARD and BACKWARD are f and df of one
DifferentiableGraph; JOINT draws f and df side by side in frames ``f`` and
``df`` and adds one *capture* arrow per value f hands to df, from where f
makes it to df's input for it. Before lambdaLiftReverse df is still a block
reading f's values directly: those uses are drawn as capture arrows.

With ``ghosts=True`` the nodes the step removed are drawn too, faded: they
are listed in ``DrawGraph.ghosts`` (and marked REMOVED by :mod:`marks`).

Everything is linear in the size of the step, and results are cached per
(step, view, DifferentiableGraph); callers get a copy they may change. A
node record is shared by every step where the node did not change, so its
label and IR text are computed once per trace. :func:`draw_union` draws
several steps straight into their union for a layout (no tooltips, no arrow
labels): at 5,000 ops the joint view's 13 drawings took 4.2 s one by one and
2.2 s so, on a loaded machine.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable

from gradview.ir.module_scope import module_path, owner_of_parameter
from gradview.runtime import (
    BlockRecord,
    GraphRole,
    NodeRecord,
    Note,
    PassTrace,
    Step,
    ValueRecord,
    value_names,
    walk_records,
)

from .chain_rule import picture_gradient_names
from .labels import abbreviate
from .layout import drop_broken_clusters, kept_in_union
from .model import Cluster, DrawEdge, DrawGraph, DrawNode, NodeRole, View, return_id
from .module_tree import trace_module_paths
from .ui_priority import step_aside
from .view_registry import view_spec
from .view_steps import (
    changed_here,
    differentiable_graph_count,
    differentiable_graph_numbers,
    gradient_notes,
    gradient_wiring,
    latest_step,
    previous_graph,
    view_steps,
    view_unavailable_reason,
)

__all__ = [
    "draw_step",
    "draw_union",
    "available_views",
    "differentiable_graph_count",
    "view_unavailable_reason",
    "block_return_id",
    "short_type",
    "node_label",
    "node_text",
]

DIFFERENTIABLE_GRAPH = "prim::DifferentiableGraph"
MAX_LINE = 36  # characters per label line; longer lines end in "…"
MAX_OUTPUT_LINES = 4  # output lines per box; the rest are counted
MAX_CONSTANT = 20
_BLOCKS_PER_NODE = 8  # TorchScript nodes have at most two blocks (If); room to spare


def block_return_id(owner_id: int, block_index: int) -> int:
    """The id of the return box of block ``block_index`` of node ``owner_id``.

    Negative like every return id, and after ``return_id(0)`` and
    ``return_id(1)`` (the returns of the graphs drawn), so ids never clash.
    """
    if not 0 <= block_index < _BLOCKS_PER_NODE:
        raise ValueError(f"block index {block_index} out of range 0..{_BLOCKS_PER_NODE - 1}")
    return return_id(2 + owner_id * _BLOCKS_PER_NODE + block_index)


# -- labels -------------------------------------------------------------------------
def _clip(text: str, limit: int = MAX_LINE) -> str:
    return abbreviate(text, limit)


def _clip_name(name: str, limit: int = MAX_LINE) -> str:
    """A dotted name that fits ``limit`` columns, cut at its start where it must
    (``…downsample.1.num_batches_tracked``): its end says which parameter it is."""
    if len(name) <= limit:
        return name
    tail = name[len(name) - (limit - 1):]
    dot = tail.find(".")
    return "…" + (tail[dot + 1 :] if 0 <= dot < len(tail) - 8 else tail)


def _split_top_level(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for position, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:position].strip())
            start = position + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


@functools.lru_cache(maxsize=1 << 16)
def short_type(type_text: str) -> str:
    """A tensor type without strides, requires_grad and device:
    ``Double(8, 16, strides=[16, 1], requires_grad=1, device=cpu)`` -> ``Double(8, 16)``.
    Memoized: a trace has few distinct types and millions of values."""
    head, paren, rest = type_text.partition("(")
    if not paren or not head or not rest.endswith(")"):
        return type_text
    kept = [part for part in _split_top_level(rest[:-1]) if "=" not in part]
    return f"{head}({', '.join(kept)})"


def _attrs(node: NodeRecord) -> str:
    return "[" + ", ".join(f"{name}={text}" for name, text in node.attrs) + "]" if node.attrs else ""


def node_label(node: NodeRecord, user_names: dict[int, str] | None = None) -> str:
    """The text in a node's box: the op (with attributes when they fit), then its
    outputs, each with the name users know it by where the trace gives one
    (``user_names``: value id -> ``layer4.1.conv2.weight.grad``)."""
    head = node.kind + _attrs(node)
    lines = [_clip(head)]
    for value in node.outputs[:MAX_OUTPUT_LINES]:
        lines.append(_clip(f"%{value.name} : {short_type(value.type)}"))
        user = user_names.get(value.id) if user_names else None
        if user and user != value.name:
            lines.append("= " + _clip_name(user, MAX_LINE - 2))
    if len(node.outputs) > MAX_OUTPUT_LINES:
        lines.append(f"… {len(node.outputs) - MAX_OUTPUT_LINES} more outputs")
    return "\n".join(lines)


def _constant_label(node: NodeRecord) -> str:
    value = dict(node.attrs).get("value")
    return _clip(value if value is not None else "None", MAX_CONSTANT)


def node_text(node: NodeRecord, names: dict[int, str]) -> str:
    """The node's line of printed IR (without its blocks)."""
    head, tail = _text_parts(node)
    return head + _inputs_text(node, names) + tail


def _text_parts(node: NodeRecord) -> tuple[str, str]:
    """What :func:`node_text` writes before and after the inputs (which name other records' values)."""
    outputs = ", ".join(f"%{v.name} : {v.type}" for v in node.outputs)
    attrs = "" if node.kind == DIFFERENTIABLE_GRAPH else _attrs(node)
    return f"{outputs} = {node.kind}{attrs}(", ")" + (f" # {node.source}" if node.source else "")


def _inputs_text(node: NodeRecord, names: dict[int, str]) -> str:
    return ", ".join(["%" + names.get(i, f"<unknown {i}>") for i in node.inputs])


# -- what a record draws as, once per trace ---------------------------------------------
class _Memo:
    """Labels and text of node records, computed once per record: the recorder
    shares a record between every step where the node did not change, so a
    5,000-op trace's 81 steps hold about 60,000 distinct records but draw
    millions of boxes. Keyed by ``id``, the record kept beside its entry so
    the id cannot be reused while the entry lives."""

    def __init__(
        self,
        modules: frozenset[str] = frozenset(),
        owners: dict[int, str] | None = None,
        user_names: dict[int, str] | None = None,
    ) -> None:
        self.lock = threading.Lock()
        self.user_names = user_names or {}  # value id -> the name users act on, where the trace gives one
        self.modules = modules  # the trace's module paths: a parameter input's owner is one of them
        self.owners = owners or {}  # graph input value id -> the module owning that parameter, where the trace says
        self.nodes: dict[int, tuple[NodeRecord, NodeRole, str, str, str]] = {}
        self.boxes: dict[tuple[int, str | None], tuple[NodeRecord | ValueRecord, DrawNode]] = {}
        # The last few steps' graphs drawn without ghosts: step index -> (numbers, drawing).
        self.drawn: OrderedDict[int, tuple[dict[int, int], DrawGraph]] = OrderedDict()

    def drawing_of(self, index: int) -> tuple[dict[int, int], DrawGraph] | None:
        with self.lock:
            return self.drawn.get(index)

    def keep_drawing(self, index: int, numbers: dict[int, int], drawing: DrawGraph) -> None:
        with self.lock:
            self.drawn[index] = (numbers, drawing)
            self.drawn.move_to_end(index)
            while len(self.drawn) > _DRAWN_KEPT:
                self.drawn.popitem(last=False)

    def node(self, node: NodeRecord) -> tuple[NodeRole, str, str, str]:
        """The node's role, label and the text around its inputs."""
        found = self.nodes.get(id(node))
        if found is not None and found[0] is node:
            return found[1:]
        role = NodeRole.CONSTANT if node.kind == "prim::Constant" else NodeRole.OP
        label = _constant_label(node) if role is NodeRole.CONSTANT else node_label(node, self.user_names)
        head, tail = _text_parts(node)
        with self.lock:
            self.nodes[id(node)] = (node, role, label, head, tail)
        return role, label, head, tail


    def box(self, record: NodeRecord | ValueRecord, cluster: str | None) -> DrawNode:
        """The box of a node record, or of a graph input's value record, in a
        union drawn for a layout (no tooltip): one object per record and cluster."""
        key = (id(record), cluster)
        found = self.boxes.get(key)
        if found is not None and found[0] is record:
            return found[1]
        if isinstance(record, ValueRecord):
            box = DrawNode(record.id, self.input_label(record), NodeRole.INPUT, cluster, "", self.input_module(record))
        else:
            role, label, _, _ = self.node(record)
            box = DrawNode(record.id, label, role, cluster, "", module_path(record.scope))
        with self.lock:
            self.boxes[key] = (record, box)
        return box


    def input_label(self, param: ValueRecord) -> str:
        """A graph input's box: the name users know it by first where the trace
        gives one (a compiled graph's ``layer4.1.conv2.weight``), then ``%name : type``."""
        own = _clip(f"%{param.name} : {short_type(param.type)}")
        user = self.user_names.get(param.id)
        return f"{_clip_name(user)}\n{own}" if user and user != param.name else own

    def input_module(self, param: ValueRecord) -> str:
        """The module owning a graph input: the one the trace says (a compiled graph's
        parameter, read from where Dynamo found it), else the one its name says
        (``layer1.0.conv1.weight``), else ""."""
        owner = self.owners.get(param.id)
        if owner is not None:
            return owner
        if not self.modules:
            return ""
        return owner_of_parameter(param.name, self.modules) or ""


class _Union(DrawGraph):
    """The union of several drawings, drawn straight into one graph as
    :func:`gradview.viewer.layout.union_graph` would merge them (nodes: the
    latest wins, in the order first seen, in the deepest frame; arrows once per (source, target,
    value), self-loops dropped): a layout needs nothing else, and the
    drawings share most of their boxes. ``member`` holds the boxes of the
    drawing being added."""

    def __init__(self) -> None:
        super().__init__()
        self.member: set[int] = set()
        self._seen: set[tuple[int, int, int]] = set()

    def add_node(self, node: DrawNode) -> None:
        self.nodes[node.id] = kept_in_union(self.clusters, self.nodes.get(node.id), node)
        self.member.add(node.id)

    def add_edge(self, edge: DrawEdge) -> None:
        self.add_arrow(edge.source, edge.target, edge.value_id, edge.capture)

    def add_arrow(self, source: int, target: int, value: int, capture: bool) -> None:
        key = (source, target, value)
        if source != target and key not in self._seen:
            self._seen.add(key)
            self.edges.append(DrawEdge(source, target, value, "", capture))


_MEMOS: dict[int, tuple[weakref.ref[PassTrace], _Memo]] = {}
_memos_lock = threading.Lock()


def _memo(trace: PassTrace) -> _Memo:
    """The trace's memo (dropped with the trace)."""
    with _memos_lock:
        found = _MEMOS.get(id(trace))
        if found is not None and found[0]() is trace:
            return found[1]
        memo = _Memo(frozenset(trace_module_paths(trace)), _parameter_owners(trace), _user_names(trace))
        key = id(trace)
        _MEMOS[key] = (weakref.ref(trace, lambda _ref: _MEMOS.pop(key, None)), memo)
        return memo


def _user_names(trace: PassTrace) -> dict[int, str]:
    """Value id -> the name users act on, where a step's annotations give one: a
    compiled graph's parameters, buffers and arguments by the names Dynamo read
    them under, and their gradients (``layer4.1.conv2.weight.grad``)."""
    names: dict[int, str] = {}
    for step in trace.steps:
        logged = step.annotations.get(Note.VALUE_NAMES)
        if not isinstance(logged, dict) or not logged:
            continue
        for param in step.graph.params:
            found = logged.get(param.name)
            if isinstance(found, str):
                names.setdefault(param.id, found)
        for node in walk_records(step.graph):
            for value in node.outputs:
                found = logged.get(value.name)
                if isinstance(found, str):
                    names.setdefault(value.id, found)
    return names


def _parameter_owners(trace: PassTrace) -> dict[int, str]:
    """Graph input value id -> the module its box sits in, where the trace says:
    the module owning a parameter or buffer (a compiled graph's, by the name
    Dynamo read it under), and for a compiled backward graph's saved input the
    module of the forward op that made the value of that name (AOTAutograd hands
    saved values from forward to backward by name)."""
    owners: dict[int, str] = {}
    made_in: dict[tuple[object, str], str] = {}  # (compile id, forward value name) -> module
    for step in trace.steps:
        named = step.annotations.get(Note.PARAMETER_OWNERS)
        if isinstance(named, dict) and named:
            for param in step.graph.params:
                owner = named.get(param.name)
                if isinstance(owner, str):
                    owners.setdefault(param.id, owner)
        compile_id = step.annotations.get(Note.COMPILE_ID)
        if compile_id is not None and step.which.role is GraphRole.FORWARD:
            for node in walk_records(step.graph):
                module = module_path(node.scope)
                if module:
                    for value in node.outputs:
                        made_in.setdefault((compile_id, value.name), module)
    if made_in:
        for step in trace.steps:
            compile_id = step.annotations.get(Note.COMPILE_ID)
            if compile_id is not None and step.which.role is GraphRole.BACKWARD:
                for param in step.graph.params:
                    module = made_in.get((compile_id, param.name))
                    if module is not None:
                        owners.setdefault(param.id, module)
    return owners


# -- drawing ------------------------------------------------------------------------
class _Drawer:
    """Draws graphs into one DrawGraph, remembering which box produces each value."""

    def __init__(self, out: DrawGraph, names: dict[int, str], numbers: dict[int, int], memo: _Memo) -> None:
        self.out = out
        self.memo = memo
        # Drawing a union for a layout: boxes only need their label (the size)
        # and cluster, arrows their ends, so no tooltip or arrow label is made.
        self.union = out if isinstance(out, _Union) else None
        self.names = names
        self.numbers = numbers  # DifferentiableGraph node id -> k
        self.source: dict[int, int] = {}  # value id -> id of the box it comes out of
        self.captured: frozenset[int] = frozenset()  # values whose uses are capture arrows

    def graph(self, record: BlockRecord, cluster: str | None, scope: int, skip: frozenset[int] = frozenset()) -> None:
        """A whole graph: inputs (except ``skip``, values drawn elsewhere), nodes, return."""
        for param in record.params:
            if param.id in skip:
                continue
            if self.union is not None:
                self.union.add_node(self.memo.box(param, cluster))
            else:
                self.out.add_node(DrawNode(
                    param.id, self.memo.input_label(param), NodeRole.INPUT, cluster, f"%{param.name} : {param.type}",
                    self.memo.input_module(param),
                ))
            self.source[param.id] = param.id
        self.nodes(record.nodes, cluster)
        self.returns(record.returns, return_id(scope), "return", cluster)

    def returns(self, values: tuple[int, ...], box: int, label: str, cluster: str | None) -> None:
        listed = "" if self.union is not None else ", ".join("%" + self.names.get(v, "?") for v in values)
        self.out.add_node(DrawNode(box, label, NodeRole.RETURN, cluster, f"{label} ({listed})"))
        for value in values:
            self.edge(value, box)

    def edge(self, value: int, target: int) -> None:
        source = self.source.get(value)
        if source is None:
            return
        if self.union is not None:
            self.union.add_arrow(source, target, value, value in self.captured)
        else:
            label = "%" + self.names.get(value, "?")
            self.out.add_edge(DrawEdge(source, target, value, label, value in self.captured))

    def nodes(self, nodes: tuple[NodeRecord, ...], cluster: str | None) -> None:
        for count, node in enumerate(nodes):
            if not count % 256:
                step_aside()  # drawn ahead in a thread: a step key goes first
            if node.kind == DIFFERENTIABLE_GRAPH and node.subgraph is not None:
                self.differentiable_graph(node, cluster)
                continue
            if self.union is not None:
                self.union.add_node(self.memo.box(node, cluster))
            else:
                role, label, head, tail = self.memo.node(node)
                self.out.add_node(DrawNode(
                    node.id, label, role, cluster, head + _inputs_text(node, self.names) + tail, module_path(node.scope)
                ))
            for value in node.inputs:
                self.edge(value, node.id)
            for index, block in enumerate(node.blocks):
                key = f"n{node.id}.block{index}"
                self.out.clusters[key] = Cluster(key, f"{node.kind} block{index}", cluster)
                for param in block.params:
                    self.source[param.id] = node.id  # a loop's counter and carried values
                self.nodes(block.nodes, key)
                self.returns(block.returns, block_return_id(node.id, index), f"block{index} return", key)
            for value in node.outputs:
                self.source[value.id] = node.id

    def differentiable_graph(self, node: NodeRecord, cluster: str | None) -> None:
        assert node.subgraph is not None
        sub = node.subgraph
        k = self.numbers.get(node.id, 0)
        key = f"dg{node.id}"
        self.out.clusters[key] = Cluster(key, f"DifferentiableGraph_{k}", cluster)
        for param, outer in zip(sub.params, node.inputs, strict=False):
            if outer in self.source:
                self.source[param.id] = self.source[outer]
        self.nodes(sub.nodes, key)
        for output, inner in zip(node.outputs, sub.returns, strict=False):
            if inner in self.source:
                self.source[output.id] = self.source[inner]


def _draw(step: Step, numbers: dict[int, int], memo: _Memo, out: DrawGraph | None = None) -> DrawGraph:
    out = DrawGraph() if out is None else out
    names = {} if isinstance(out, _Union) else value_names(step.graph)
    _Drawer(out, names, numbers, memo).graph(step.graph, None, 0)
    return out


def _plain_drawing(step: Step, previous: Step | None, numbers: dict[int, int], memo: _Memo) -> DrawGraph:
    """``step``'s graph drawn, without ghosts (a copy the caller may add to).

    Most passes change nothing: a step whose graph equals ``previous``'s (the
    previous step of the same graph; records are shared between steps, so the
    comparison is mostly by identity) is drawn as that step was. At 5,000 ops
    a drawing costs a quarter of a second, the comparison a millisecond."""
    found = memo.drawing_of(previous.index) if previous is not None else None
    if found is not None and previous is not None and found[0] == numbers and previous.graph == step.graph:
        drawing = found[1]
    else:
        drawing = _draw(step, numbers, memo)
    memo.keep_drawing(step.index, numbers, drawing)
    return drawing.copy()


def _draw_record(
    record: BlockRecord, numbers: dict[int, int], cluster: str | None, scope: int, memo: _Memo
) -> DrawGraph:
    out = DrawGraph()
    if cluster is not None:
        out.clusters[cluster] = Cluster(cluster, cluster)
    _Drawer(out, value_names(record), numbers, memo).graph(record, cluster, scope)
    return out


def _lost(current: BlockRecord, previous: BlockRecord) -> tuple[set[int], set[int]]:
    """The node ids of ``current`` and of ``previous``: when ``previous`` has
    none that ``current`` lacks, there are no ghosts and it need not be drawn."""
    return {node.id for node in walk_records(current)}, {node.id for node in walk_records(previous)}


def _add_ghosts(out: DrawGraph, now: set[int], was: set[int], before: DrawGraph) -> None:
    """Add the nodes of ``before`` (the previous graph drawn) that the current graph lost."""
    added: set[int] = set()
    for node_id, node in before.nodes.items():
        if node_id in was and node_id not in now and node_id not in out.nodes:
            _copy_cluster(out, before, node.cluster)
            out.add_node(node)
            added.add(node_id)
    for edge in before.edges:
        touches = edge.source in added or edge.target in added
        if touches and edge.source in out.nodes and edge.target in out.nodes:
            out.add_edge(edge)
    out.ghosts |= added


def _copy_cluster(out: DrawGraph, before: DrawGraph, key: str | None) -> None:
    while key is not None and key not in out.clusters and key in before.clusters:
        out.clusters[key] = before.clusters[key]
        key = before.clusters[key].parent


def _single(trace: PassTrace, index: int, step: Step, ghosts: bool) -> DrawGraph:
    numbers = differentiable_graph_numbers(trace, step)
    memo = _memo(trace)
    before = latest_step(trace, step.which, step.index - 1)  # the previous step of this graph
    out = _plain_drawing(step, before, numbers, memo)
    if ghosts and changed_here(trace, index, step):
        previous = previous_graph(trace, step)
        if previous is not None:
            now, was = _lost(step.graph, previous)
            if not was <= now:
                _add_ghosts(out, now, was, _previous_drawing(before, previous, numbers, memo))
    return out


def _previous_drawing(before: Step | None, previous: BlockRecord, numbers: dict[int, int], memo: _Memo) -> DrawGraph:
    """``previous`` (the graph a step is compared with) drawn: as ``before``
    (the previous step of the graph) was, when that drawing is still kept and
    ``previous`` is its graph (the usual case)."""
    found = memo.drawing_of(before.index) if before is not None and before.graph is previous else None
    if found is not None and found[0] == numbers:
        return found[1]
    return _draw_record(previous, numbers, None, 0, memo)


def _joint(
    trace: PassTrace, index: int, dg: int, f: Step, df: Step, ghosts: bool, out: DrawGraph | None = None
) -> DrawGraph:
    out = DrawGraph() if out is None else out
    notes = gradient_notes(trace, index, dg) or {}
    compile_id = notes.get(Note.COMPILE_ID)
    title = f"compiled graph {compile_id}" if compile_id is not None else f"DifferentiableGraph_{dg}"
    out.clusters["f"] = Cluster("f", f"f: forward of {title}")
    out.clusters["df"] = Cluster("df", f"df: backward of {title}")
    union = out if isinstance(out, _Union) else None
    names = {} if union is not None else {**value_names(f.graph), **value_names(df.graph)}
    memo = _memo(trace)
    drawer = _Drawer(out, names, {}, memo)
    drawer.graph(f.graph, "f", 0)
    # Before lambdaLiftReverse, df is the reverse block: it reads f's values
    # directly (they share ids), so those uses are drawn as captures.
    reads = frozenset(p.id for p in df.graph.params if p.id in drawer.source)
    drawer.captured = reads
    drawer.graph(df.graph, "df", 1, skip=reads)
    drawer.captured = frozenset()
    wiring = gradient_wiring(f.graph, df.graph, notes)
    for f_values, df_inputs in (
        (wiring.captured_inputs_f, wiring.captured_inputs_df),
        (wiring.captured_outputs_f, wiring.captured_outputs_df),
    ):
        for value, df_input in zip(f_values, df_inputs, strict=False):
            source = drawer.source.get(value) if value is not None else None
            if source is None or df_input is None:
                continue
            if union is not None:
                if df_input in union.member:
                    union.add_arrow(source, df_input, value, True)
            elif df_input in out.nodes:
                out.add_edge(DrawEdge(source, df_input, value, "%" + names.get(value, "?"), capture=True))
    if ghosts:
        for step, cluster, scope in ((f, "f", 0), (df, "df", 1)):
            previous = previous_graph(trace, step) if changed_here(trace, index, step) else None
            if previous is not None:
                now, was = _lost(step.graph, previous)
                if not was <= now:
                    _add_ghosts(out, now, was, _draw_record(previous, {}, cluster, scope, memo))
    return out


# -- the cache ---------------------------------------------------------------------------
_CACHE_SIZE = 16  # drawings of big steps are large; the app keeps its own cache too
_DRAWN_KEPT = 8  # ghost-free drawings for the steps after them (see _plain_drawing)
_Key = tuple[int, int, int, View, int, bool]
_cache: OrderedDict[_Key, tuple[weakref.ref[PassTrace], DrawGraph]] = OrderedDict()


_cache_lock = threading.Lock()  # the app's UI thread and its layout worker both draw


def _cached(trace: PassTrace, key: _Key, build: Callable[[], DrawGraph]) -> DrawGraph:
    with _cache_lock:
        found = _cache.get(key)
    if found is None or found[0]() is not trace:
        found = (weakref.ref(trace), build())
        with _cache_lock:
            _cache[key] = found
            while len(_cache) > _CACHE_SIZE:
                _cache.popitem(last=False)
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
    return found[1].copy()


# -- the API -----------------------------------------------------------------------------
def draw_step(trace: PassTrace, index: int, view: View, dg: int = 0, ghosts: bool = True) -> DrawGraph:
    """The drawing of step ``index`` in ``view`` (of DifferentiableGraph ``dg``);
    empty when the view has nothing to show yet (:func:`view_unavailable_reason` says why)."""

    def build() -> DrawGraph:
        steps = view_steps(trace, index, view, dg)
        if not steps:
            return DrawGraph()
        if view_spec(view).joint:
            drawing = _joint(trace, index, dg, steps[0], steps[1], ghosts)
        else:
            drawing = _single(trace, index, steps[0], ghosts)
        previous = [previous_graph(trace, step) for step in steps] if ghosts else []
        drawing.sources = tuple(step.graph for step in steps) + tuple(graph for graph in previous if graph is not None)
        drawing.gradient_names = picture_gradient_names(trace, index, dg, steps)
        return drawing

    return _cached(trace, (id(trace), len(trace), index, view, dg, ghosts), build)


def draw_union(trace: PassTrace, shown: Iterable[tuple[int, View, int]]) -> DrawGraph:
    """The union of the drawings of ``shown`` ((step index, view, DifferentiableGraph)
    each), without ghosts, for a layout: what ``union_graph([draw_step(trace, i, v, k,
    ghosts=False) for i, v, k in shown])`` gives, except that boxes have no tooltip
    and arrows no label. Several times faster, since a box is made once per node
    record and an arrow once however many drawings share it."""
    out = _Union()
    memo = _memo(trace)
    for index, view, dg in shown:
        steps = view_steps(trace, index, view, dg)
        out.member = set()
        if not steps:
            continue
        if view_spec(view).joint:
            _joint(trace, index, dg, steps[0], steps[1], False, out)
        else:
            _draw(steps[0], differentiable_graph_numbers(trace, steps[0]), memo, out)
    drop_broken_clusters(out)
    union = DrawGraph(out.nodes, out.edges, out.clusters)
    return union


def available_views(trace: PassTrace, index: int, dg: int = 0) -> list[View]:
    """The views with something to draw at ``index`` (WHOLE always)."""
    return [view for view in View if view_unavailable_reason(trace, index, view, dg) is None]
