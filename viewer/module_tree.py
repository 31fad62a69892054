"""The model's module hierarchy as the picture's skeleton.

A real model's graph is hundreds or thousands of ops; the model that made it
is a few dozen modules (``conv1``, ``layer1`` ... ``fc``), and PyTorch prints
each node's module (its ``scope``). Here the modules become frames of the
drawing, nested as the modules are: one cluster per module, keyed
``mod:<path>``, holding the module's own nodes and the frames of its
submodules; a parameter's input box sits in the module that owns it. The
large-graph tools then fold any of them into one box (``collapse``), which is
how the model level opens: each top-level module one box.

DifferentiableGraph, GradOf and If/Loop frames keep their nesting: such a
frame sits in the innermost module holding all of its nodes (their common
ancestor), so folding that module folds the frame with it.

Everything is linear in the drawing; nothing here imports Textual.
"""

from __future__ import annotations

import dataclasses
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from gradview.ir.module_scope import ancestors, module_path, parent_path
from gradview.runtime import PassTrace, walk_records

from .graph_analysis import Collapsed
from .labels import abbreviate
from .model import Cluster, DrawGraph, DrawNode, NodeRole

__all__ = [
    "MODULE_KEY_PREFIX",
    "module_key",
    "is_module_key",
    "key_path",
    "trace_module_paths",
    "trace_module_types",
    "largest_graph",
    "trace_value_types",
    "saved_bytes_by_node",
    "trace_parameter_ids",
    "top_modules",
    "child_modules",
    "frame_modules",
    "label_module_boxes",
    "merge_box_edges",
    "box_name",
    "HALVES",
    "key_half",
    "in_halves",
    "dissolve_spanning_groups",
    "drop_unread_loose",
    "expanded",
]

T = TypeVar("T")
MODULE_KEY_PREFIX = "mod:"
_LINE = 36  # characters per box line, as the op boxes


# The joint view draws f and df side by side, each in a frame of its own: a
# module has one frame in each half, keyed with the half (``mod:layer1@df``).
# (A DifferentiableGraph across modules is dissolved instead: dissolve_spanning_groups.)
HALVES = ("f", "df")


def module_key(path: str, half: str | None = None) -> str:
    """The cluster key of module ``path`` (in the joint view's ``half``, "f" or "df")."""
    return MODULE_KEY_PREFIX + path + (f"@{half}" if half else "")


def is_module_key(key: str | None) -> bool:
    return key is not None and key.startswith(MODULE_KEY_PREFIX)


def key_path(key: str) -> str:
    """The module path of a module cluster key."""
    return key[len(MODULE_KEY_PREFIX):].partition("@")[0]


def key_half(key: str) -> str | None:
    """The joint view's half a module cluster key belongs to (None: not in one)."""
    return key.partition("@")[2] or None


def in_halves(keys: Iterable[str]) -> set[str]:
    """``keys`` with each plain module key also in each half of the joint view
    (folding ``layer1`` folds it in f and in df)."""
    keys = set(keys)
    out = set(keys)
    out.update(module_key(key_path(key), half) for key in keys if is_module_key(key) and not key_half(key) for half in HALVES)
    return out


# -- the trace's modules ----------------------------------------------------------------------
_per_trace: dict[tuple[str, int], tuple[weakref.ref[PassTrace], Any]] = {}
_per_trace_lock = threading.Lock()


def _once_per_trace(what: str, trace: PassTrace, compute: Callable[[PassTrace], T]) -> T:
    """``compute(trace)``, kept while the trace lives (the app, its workers and
    exports ask many times)."""
    key = (what, id(trace))
    with _per_trace_lock:
        found = _per_trace.get(key)
        if found is not None and found[0]() is trace:
            return found[1]  # type: ignore[no-any-return]
    result = compute(trace)
    with _per_trace_lock:
        _per_trace[key] = (weakref.ref(trace, lambda _ref: _per_trace.pop(key, None)), result)
    return result


def trace_module_types(trace: PassTrace) -> dict[str, str]:
    """Every module of the trace's model (its path, "" never) -> its class name
    ("" where only the scope names it): the modules the trace records
    (``PassTrace.module_types``) and every module a node's scope names, with
    their ancestors. Read once per trace, from the first step of each graph
    (nodes made later by passes carry the scopes they were made from)."""
    return _once_per_trace("modules", trace, _module_types)


def _module_types(trace: PassTrace) -> dict[str, str]:
    types: dict[str, str] = {}
    seen: set[object] = set()
    for step in trace.steps:
        if step.which in seen:
            continue
        seen.add(step.which)
        for record in walk_records(step.graph):
            path = module_path(record.scope)
            if path and path not in types:
                for level in ancestors(path):
                    types.setdefault(level, "")
    for path, name in trace.module_types.items():
        if path:
            for level in ancestors(path):
                types.setdefault(level, "")
            types[path] = name
    return types


def trace_value_types(trace: PassTrace) -> dict[int, str]:
    """Value id -> its most complete short type over the trace (``Float(1, 64, 16, 16)``):
    late steps erase sizes (``Float(*, *, *, *)``), a module box shows the sizes
    the values had. Records shared between steps are read once."""
    return _once_per_trace("value types", trace, _value_types)


def _value_types(trace: PassTrace) -> dict[int, str]:
    from .views import short_type  # the label code; views imports this module

    types: dict[int, str] = {}
    seen: set[int] = set()

    def note(value_id: int, type_text: str) -> None:
        known = types.get(value_id)
        if known is None or ("*" in known and "*" not in type_text):
            types[value_id] = short_type(type_text)

    for step in trace.steps:
        for param in step.graph.params:
            note(param.id, param.type)
        for record in walk_records(step.graph):
            if id(record) in seen:
                continue
            seen.add(id(record))
            for value in record.outputs:
                note(value.id, value.type)
    return types


def saved_bytes_by_node(trace: PassTrace) -> dict[int, int]:
    """Node id (an input's value id) -> the bytes of the values it makes that a
    differentiated graph saves for backward (``gradview saved``'s list); empty
    where the trace cannot say (a JIT log, sizes unknown)."""
    from gradview.runtime import SavedValuesError, saved_values  # only with modules

    try:
        graphs = saved_values(trace)
    except SavedValuesError:
        return {}
    out: dict[int, int] = {}
    for graph in graphs:
        for value in graph.saved:
            made_by = value.producer_node if value.producer_node is not None else value.forward_value
            out[made_by] = out.get(made_by, 0) + value.bytes
    return out


def trace_parameter_ids(trace: PassTrace) -> set[int]:
    """The value ids of the graph inputs that are a model's parameters or buffers
    (their owner known: ``gradview.runtime.value_names``), read from the first
    step of each graph: a module box counts their bytes as its parameters."""
    from gradview.runtime import name_table  # only with modules

    ids: set[int] = set()
    seen: set[object] = set()
    for step in trace.steps:
        if step.which in seen:
            continue
        seen.add(step.which)
        table = name_table(trace, step.index)
        ids.update(param.id for param in step.graph.params if table.of(param.id).owner is not None)
    return ids


def largest_graph(trace: PassTrace) -> int:
    """The node count of the largest graph the trace shows (the first step of
    each graph, DifferentiableGraphs' nodes included)."""
    sizes: dict[object, int] = {}
    for step in trace.steps:
        if step.which not in sizes:
            sizes[step.which] = sum(1 for _ in walk_records(step.graph))
    return max(sizes.values(), default=0)


def trace_module_paths(trace: PassTrace) -> set[str]:
    """The module paths of :func:`trace_module_types`."""
    return set(trace_module_types(trace))


def top_modules(modules: Iterable[str]) -> list[str]:
    """The modules directly below the model, in the order given."""
    return [path for path in modules if path and "." not in path]


def child_modules(modules: Iterable[str], path: str) -> list[str]:
    """The modules directly below ``path``, in the order given."""
    return [other for other in modules if other and parent_path(other) == path]


# -- frames -----------------------------------------------------------------------------------
def _common(a: str, b: str) -> str:
    """The innermost module holding both ``a`` and ``b`` ("" the model)."""
    if a == b or not a or not b:
        return a if a == b else ""
    left, right = a.split("."), b.split(".")
    size = 0
    for x, y in zip(left, right, strict=False):
        if x != y:
            break
        size += 1
    return ".".join(left[:size])


def _writes_in_place(node: DrawNode) -> bool:
    """An op that writes into its input (``copy_``, ``add_``: a buffer's update) has
    an effect though nothing reads its result."""
    words = node.label.split(maxsplit=1)
    return bool(words) and words[0].rstrip(":").endswith("_") and not words[0].endswith("__")


def drop_unread_loose(graph: DrawGraph) -> DrawGraph:
    """``graph`` without the ops and constants outside every frame that nothing
    in the picture reads and that write nothing in place: at the model level,
    sizes a DifferentiableGraph hands its backward (read by no box here), a
    ``detach`` AOTAutograd adds and dead code are the IR's business (the ops
    level shows them). ``graph`` is not changed."""
    read = {edge.source for edge in graph.edges}
    gone = {
        node_id for node_id, node in graph.nodes.items()
        if node.cluster is None and node.role in (NodeRole.OP, NodeRole.CONSTANT) and node_id not in read
        and not node.module and not _writes_in_place(node)
    }
    if not gone:
        return graph
    out = dataclasses.replace(graph, nodes={i: n for i, n in graph.nodes.items() if i not in gone})
    out.edges = [edge for edge in graph.edges if edge.target not in gone]
    out.ghosts = graph.ghosts - gone
    return out


def dissolve_spanning_groups(graph: DrawGraph) -> tuple[DrawGraph, list[str]]:
    """``graph`` without the frames of DifferentiableGraphs whose ops come from
    more than one module (PyTorch groups ops across module boundaries: the end of
    ``layers.10`` and the start of ``layers.11`` in one graph); their nodes and
    inner frames move to the frame around them, so the modules frame them. Also
    the titles of the frames dissolved (the view bar says they show at the ops level)."""
    clusters = graph.clusters
    modules_in: dict[str, set[str]] = {}
    for node in graph.nodes.values():
        key = node.cluster
        while key is not None and key in clusters:
            if clusters[key].title.startswith("DifferentiableGraph") and node.module:
                modules_in.setdefault(key, set()).add(node.module)
            key = clusters[key].parent
    spanning = {key for key, found in modules_in.items() if len(found) > 1}
    if not spanning:
        return graph, []

    def kept(key: str | None) -> str | None:
        while key is not None and key in spanning:
            key = clusters[key].parent
        return key

    out = DrawGraph(compact_ranks=graph.compact_ranks)
    out.sources = graph.sources
    out.ghosts = set(graph.ghosts)
    out.edges = list(graph.edges)
    for node_id, node in graph.nodes.items():
        moved = kept(node.cluster)
        out.nodes[node_id] = node if moved == node.cluster else dataclasses.replace(node, cluster=moved)
    for key, cluster in clusters.items():
        if key not in spanning:
            parent = kept(cluster.parent)
            out.clusters[key] = cluster if parent == cluster.parent else Cluster(key, cluster.title, parent)
    return out, [clusters[key].title for key in clusters if key in spanning]


def frame_modules(graph: DrawGraph, types: Mapping[str, str]) -> DrawGraph:
    """``graph`` with a frame per module (``mod:<path>``, nested as the modules),
    holding the nodes drawn outside other frames and the outermost frames of
    DifferentiableGraphs and blocks (each in the common module of its nodes).
    In the joint view each half (f, df) gets frames of its own inside its own.
    (A DifferentiableGraph across modules is dissolved first: :func:`dissolve_spanning_groups`.)
    Nodes without a module stay outside every module frame. ``graph`` is not changed."""
    clusters = graph.clusters

    def half_of(key: str | None) -> str | None:
        return key if key in HALVES and key in clusters and clusters[key].parent is None else None

    # The outermost frame below a half (or the top) holding each frame, and its common module.
    outermost: dict[str, str] = {}

    def top(key: str) -> str:
        found = outermost.get(key)
        if found is None:
            parent = clusters[key].parent if key in clusters else None
            found = top(parent) if parent is not None and parent in clusters and half_of(parent) is None else key
            outermost[key] = found
        return found

    frame_module: dict[str, str] = {}
    for node in graph.nodes.values():
        if node.cluster is None or node.cluster not in clusters or half_of(node.cluster) is not None:
            continue
        if node.role is NodeRole.RETURN:
            continue  # a block's return box belongs to its block, not to a module
        frame = top(node.cluster)
        frame_module[frame] = _common(frame_module[frame], node.module) if frame in frame_module else node.module

    def holder(key: str | None) -> str | None:
        """The container a node directly in frame ``key`` is framed in (None: not one)."""
        return half_of(key)

    used: set[tuple[str, str | None]] = set()  # (module, half)
    out = DrawGraph()
    out.ghosts = set(graph.ghosts)
    out.compact_ranks = graph.compact_ranks
    out.sources = graph.sources
    for node_id, node in graph.nodes.items():
        half = holder(node.cluster)
        loose = node.cluster is None or half is not None
        # An op the IR names no module for stays outside them: the model's own
        # (ResNet's flatten) and one a pass or AOTAutograd added look the same.
        module = node.module
        # Constants are shared plumbing (ConstantPooling keeps one per value, in
        # whichever module came first): in a module they would wire it to every reader.
        if loose and module and node.role in (NodeRole.OP, NodeRole.INPUT):
            out.nodes[node_id] = DrawNode(node.id, node.label, node.role, module_key(module, half), node.tooltip, module)
            used.add((module, half))
        else:
            out.nodes[node_id] = node
    out.edges = list(graph.edges)
    for key, cluster in clusters.items():
        half = half_of(cluster.parent)
        if (cluster.parent is None or half is not None) and half_of(key) is None and frame_module.get(key):
            module = frame_module[key]
            used.add((module, half))
            out.clusters[key] = Cluster(cluster.key, cluster.title, module_key(module, half))
        else:
            out.clusters[key] = cluster
    frames = {(level, half) for found, half in used for level in ancestors(found)}
    for path, half in sorted(frames, key=lambda item: (item[0].count("."), item[0], item[1] or "")):
        parent = parent_path(path)
        kind = types.get(path, "")
        title = f"{path} · {kind}" if kind else path
        outer = module_key(parent, half) if parent else half
        out.clusters[module_key(path, half)] = Cluster(module_key(path, half), title, outer)
    # Frames in the order a parent comes before its children (the layout writes them so).
    ordered = {k: c for k, c in out.clusters.items() if half_of(k) is not None}
    ordered.update((k, c) for k, c in out.clusters.items() if is_module_key(k))
    ordered.update((k, c) for k, c in out.clusters.items() if k not in ordered)
    out.clusters = ordered
    return out



# -- module boxes -----------------------------------------------------------------------------
_DTYPE_BYTES = {
    "Float": 4, "Double": 8, "Half": 2, "BFloat16": 2, "Long": 8, "Int": 4, "Short": 2,
    "Char": 1, "Byte": 1, "Bool": 1,
}


def _bytes(type_text: str) -> int:
    head, paren, rest = type_text.partition("(")
    size = _DTYPE_BYTES.get(head)
    if size is None or not paren:
        return 0
    count = 1
    for part in rest.rstrip(")").split(","):
        part = part.strip()
        if not part:
            continue
        if not part.isdigit():
            return 0
        count *= int(part)
    return count * size


def _size_text(count: int) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} B"


def label_module_boxes(
    folded: Collapsed,
    before: DrawGraph,
    types: Mapping[str, str],
    value_types: Mapping[int, str],
    known_shapes: dict[str, tuple[list[str], list[str]]] | None = None,
    saved_bytes: Mapping[int, int] | None = None,
    parameters: set[int] | frozenset[int] | None = None,
) -> None:
    """Give each folded module's box its summary: name and class, op count and
    parameter bytes, the shapes going out, the bytes its ops save for backward
    (in and out shapes in its tooltip). ``value_types``: value id -> short type;
    ``known_shapes``, kept between calls, gives a module the complete shapes an
    earlier step showed; ``saved_bytes``: node (or input) id -> the bytes of the
    values it makes that the backward keeps; ``parameters``: the inputs that are
    parameters or buffers (None: every input in a module). ``before`` is the drawing that was
    folded (the boxes' members are its nodes). One pass over the edges."""
    out = folded.graph
    boxes = {box: key for box, key in folded.groups.items() if is_module_key(key)}
    if not boxes:
        return
    ins: dict[int, list[str]] = {box: [] for box in boxes}
    outs: dict[int, list[str]] = {box: [] for box in boxes}
    for edge in before.edges:
        source, target = folded.box_of.get(edge.source), folded.box_of.get(edge.target)
        if source == target:
            continue
        shape = value_types.get(edge.value_id, "")
        if not shape:
            continue
        if source in outs and shape not in outs[source]:
            outs[source].append(shape)
        if target in ins and shape not in ins[target]:
            ins[target].append(shape)
    for box, key in boxes.items():
        path = key_path(key)
        members = folded.members[box]
        ops = sum(1 for i in members if before.nodes[i].role is NodeRole.OP)
        params = sum(
            _bytes(value_types.get(i, "")) for i in members
            if before.nodes[i].role is NodeRole.INPUT and (parameters is None or i in parameters)
        )
        saved = sum(saved_bytes.get(i, 0) for i in members) if saved_bytes else 0
        shapes_in, shapes_out = ins[box], outs[box]
        if known_shapes is not None:
            # Late steps erase sizes (Float(*, *)): a module keeps the shapes an earlier step showed.
            complete = not any("*" in shape for shape in shapes_in + shapes_out)
            if complete and (shapes_in or shapes_out):
                known_shapes[path] = (shapes_in, shapes_out)
            elif path in known_shapes:
                shapes_in, shapes_out = known_shapes[path]
        kind = types.get(path, "")
        # The name alone on the first line: what a zoomed-out box keeps.
        lines = [abbreviate(box_name(path), _LINE)]
        counts = f"{ops} op{'s' if ops != 1 else ''}"
        if params:
            counts += f" · {_size_text(params)}"
        lines.append(abbreviate(f"{kind} · {counts}" if kind else counts, _LINE))
        # Three lines, so a ResNet's dozen top-level modules fit a terminal: the
        # shapes going out (a chain's next box shows what came in); the inspector has both.
        if shapes_out:
            lines.append(abbreviate("→ " + ", ".join(shapes_out[:2]) + (" …" if len(shapes_out) > 2 else ""), _LINE))
        if saved:
            lines.append(f"saves {_size_text(saved)} for backward")
        node = out.nodes[box]
        tooltip = (
            f"module {path}" + (f" ({kind})" if kind else "")
            + f": {ops} ops, {_size_text(params)} of parameters and buffers"
            + (f", {_size_text(saved)} saved for backward" if saved else "")
            + f"; in {', '.join(shapes_in) or 'nothing'}; out {', '.join(shapes_out) or 'nothing'}"
            + " (folded: enter or x expands it)"
        )
        out.nodes[box] = DrawNode(box, "\n".join(lines), node.role, node.cluster, tooltip, path)


def expanded(collapsed: frozenset[str], group: str, modules: Iterable[str]) -> frozenset[str]:
    """The folded groups once ``group`` (a folded box) is unfolded: a module's
    submodules come out folded, in the same half of the joint view; a module
    folded in both halves stays folded in the other one."""
    out = set(collapsed) - {group}
    if not is_module_key(group):
        return frozenset(out)
    path, half = key_path(group), key_half(group)
    if half is not None and module_key(path) in out:
        out.discard(module_key(path))
        out.update(module_key(path, other) for other in HALVES if other != half)
    out.update(module_key(child, half) for child in child_modules(modules, path))
    return frozenset(out)


def box_name(path: str) -> str:
    """What a module's box is called: the last part of its path, with its
    parent's where that part is an index (``layer1.0``, not ``0``)."""
    parts = path.split(".")
    if len(parts) > 1 and parts[-1].isdigit():
        return ".".join(parts[-2:])
    return parts[-1]


def merge_box_edges(graph: DrawGraph, boxes: set[int] | frozenset[int]) -> None:
    """One arrow per pair of ends where an end is one of ``boxes`` (folded
    modules): the values a module hands on (a block's several results, each
    step's own copies in a union) are one arrow in the picture, which keeps
    the layout to the modules' chain."""
    if not boxes:
        return
    seen: set[tuple[int, int]] = set()
    kept = []
    for edge in graph.edges:
        if edge.source in boxes or edge.target in boxes:
            pair = (edge.source, edge.target)
            if pair in seen:
                continue
            seen.add(pair)
        kept.append(edge)
    graph.edges = kept
