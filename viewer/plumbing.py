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
  ints or an integer scalar tensor (``x.size(0) * 4`` as the tracer records
  it). A ``aten::Int`` of a tensor computed from data stays: it is a real
  dependency (and a sync point).

What stays although it is plumbing: a box read by a return (a graph's, a
block's: the value leaves the picture there), a box whose value f hands to
df (a capture arrow), and a box nobody reads (dead code, which
EliminateDeadCode's step should show). So a block never loses the node that
makes its result.

Labels: the op without ``aten::`` (``_convolution`` as ``conv2d``, the
function PyTorch's module calls), then ``name=value`` for each argument that
came from folded plumbing and differs from its default (the schema's, or the
value PyTorch's module passes where the schema has none: a batch norm's
``momentum=0.1``). A list whose entries are equal shows one entry where
PyTorch accepts one int for it (``int[2]``: ``stride=2``); ``padding`` is
written ``pad``. A size read at run time shows where it comes from
(``size=[%q.size(0), 8, 64]``), and the arrow from ``%q``'s producer stays:
every edge between real boxes through folded plumbing becomes one edge. The
output lines and the tooltip (the full IR line, which the inspector shows)
stay as they were.

Everything is linear in the drawing: dict lookups, each box and edge visited
a bounded number of times (the labels' text is capped).
"""

from __future__ import annotations

import ast
import dataclasses
import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from gradview.ir import IRParseError, parse_type, schemas_for
from gradview.ir.operators import schema_accepts
from gradview.ir.schema import NO_DEFAULT, FunctionSchema
from gradview.ir.types import SCALAR_TYPE_NAMES
from gradview.runtime.pass_trace import PassTrace
from gradview.runtime.trace_records import BlockRecord, NodeRecord, ValueRecord, walk_records

from .labels import abbreviate
from .model import DrawEdge, DrawGraph, DrawNode, NodeRole, View
from .view_steps import previous_graph, view_steps
from .views import DIFFERENTIABLE_GRAPH, MAX_LINE, draw_step

__all__ = ["Folded", "fold_plumbing", "fold_step", "step_graphs", "is_plumbing_kind"]

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
    "aten::len",
})
# Shown as their input: they change a number's box, not its value.
_TRANSPARENT = frozenset({"prim::NumToTensor", "aten::Int", "aten::Float", "aten::Bool", "aten::ScalarImplicit"})
_SIZE_TYPES = frozenset({"int", "float", "bool", "int[]", "int[]?", "NoneType", "Scalar", "number"})
_LIST_TYPES = frozenset({"int[]", "int[]?"})

_INT64_MAX = 2**63 - 1
# Values PyTorch treats as the default although the schema gives none or another
# spelling: what nn.Conv2d, nn.BatchNorm2d and friends pass, and slice's open ends.
_ALSO_DEFAULT: dict[str, dict[str, Any]] = {
    "aten::_convolution": {
        "bias": None, "stride": 1, "padding": 0, "dilation": 1, "transposed": False, "output_padding": 0,
        "groups": 1, "benchmark": False, "deterministic": False, "cudnn_enabled": True, "allow_tf32": True,
    },
    "aten::convolution": {
        "bias": None, "stride": 1, "padding": 0, "dilation": 1, "transposed": False, "output_padding": 0, "groups": 1,
    },
    "aten::batch_norm": {"training": False, "momentum": 0.1, "eps": 1e-05, "cudnn_enabled": True},
    "aten::native_batch_norm": {"momentum": 0.1, "eps": 1e-05},
    "aten::native_layer_norm": {"eps": 1e-05},
    "aten::lstm": {"has_biases": True, "dropout": 0.0, "train": False, "bidirectional": False, "batch_first": False},
    "aten::gru": {"has_biases": True, "dropout": 0.0, "train": False, "bidirectional": False, "batch_first": False},
    "aten::slice": {"start": 0, "end": _INT64_MAX},
}
_ANY_OP_ALSO_DEFAULT: dict[str, Any] = {"pin_memory": False, "layout": 0}  # None means strided, not pinned
# Lists PyTorch also takes as one int (the schema says SymInt[] but conv2d's says SymInt[2]).
_EXPANDS: dict[str, frozenset[str]] = {
    kind: frozenset({"stride", "padding", "dilation", "output_padding"})
    for kind in ("aten::_convolution", "aten::convolution")
}
_SHORT_NAMES = {"padding": "pad"}  # as the issue's ``conv2d stride=2 pad=1`` reads
_PRIM_ARGUMENTS = {"prim::If": ("cond",), "prim::Loop": ("max_trip_count", "cond")}
_ATTRIBUTE_LINES = 2  # lines for the op and its arguments; the rest is cut with "…"
_MAX_TEXT = 120  # an argument's text is cut here, so nested plumbing stays linear


@dataclass
class Folded:
    """A drawing with its plumbing folded: ``graph`` to lay out and draw,
    ``box_of`` each folded box's reader (the box that shows it: selecting a
    folded node selects that one), ``members`` each reader's folded boxes in
    program order."""

    graph: DrawGraph
    box_of: dict[int, int] = field(default_factory=dict)
    members: dict[int, list[int]] = field(default_factory=dict)


def is_plumbing_kind(kind: str) -> bool:
    """Is a node of ``kind`` always plumbing (whatever its inputs)?"""
    return kind in _ALWAYS


# -- the API -----------------------------------------------------------------------------------
def step_graphs(trace: PassTrace, index: int, view: View, dg: int = 0) -> list[BlockRecord]:
    """The graphs :func:`draw_step` draws for ``(index, view, dg)``, then the graphs
    its ghosts come from (the previous graph of each): what :func:`fold_plumbing` reads."""
    steps = view_steps(trace, index, view, dg)
    previous = [previous_graph(trace, step) for step in steps]
    return [step.graph for step in steps] + [graph for graph in previous if graph is not None]


def fold_step(trace: PassTrace, index: int, view: View, dg: int = 0, ghosts: bool = True) -> Folded:
    """Step ``index`` in ``view`` drawn at the ``ops`` level."""
    return fold_plumbing(draw_step(trace, index, view, dg, ghosts), step_graphs(trace, index, view, dg))


def fold_plumbing(drawing: DrawGraph, graphs: Iterable[BlockRecord]) -> Folded:
    """``drawing`` with its plumbing folded into the boxes that read it.

    ``graphs`` are the records it was drawn from (:func:`step_graphs`: the
    step's graphs first, then the previous ones for the ghosts; a node id in
    several keeps its first record). Boxes without a record are kept as drawn."""
    folding = _Folding(drawing, _Records(graphs))
    return folding.result()


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


# -- expressions ----------------------------------------------------------------------------------
_DYNAMIC: Any = object()  # a value known only at run time


@dataclass(frozen=True)
class _Expr:
    """What a reader's argument shows: ``text``, the Python ``value`` when it is
    known from constants alone, and ``bare`` when it is a real box's value (an arrow shows it)."""

    text: str
    value: Any = _DYNAMIC
    bare: bool = False
    infix: bool = False  # ``a*b``: an operand of another operator needs parentheses

    def operand(self) -> str:
        return f"({self.text})" if self.infix else self.text


def _format(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return repr(value)  # the shortest text that reads back as the same double: 1e-05, 0.1
    if isinstance(value, str):
        return '"' + value + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_format(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(_format(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return str(value)


def _constant(node: NodeRecord) -> _Expr:
    """A constant's value, read from its printed attribute and its type."""
    text = dict(node.attrs).get("value")
    type_ = node.outputs[0].type if node.outputs else ""
    if text is None:
        return _Expr("None", None)
    try:
        if type_ == "bool":
            value: Any = text in ("1", "True")
        elif type_ == "int":
            value = int(text)
        elif type_ == "float":
            value = float(text)
        elif text.startswith(("{", "<")) or "(" in type_:
            # A tensor, never equal to a default; a scalar one (``{4}``) as its number.
            return _Expr(text[1:-1] if text.startswith("{") and text.endswith("}") else text)
        else:
            value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return _Expr(text)
    return _Expr(_format(value), value)


def _cut(text: str) -> str:
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"


def _short_kind(kind: str) -> str:
    return kind.removeprefix("aten::")


# -- folding ------------------------------------------------------------------------------------
class _Folding:
    def __init__(self, drawing: DrawGraph, records: _Records) -> None:
        self.drawing = drawing
        self.records = records
        self.outgoing: dict[int, list[DrawEdge]] = {}
        self.incoming: dict[int, list[DrawEdge]] = {}
        for edge in drawing.edges:
            self.outgoing.setdefault(edge.source, []).append(edge)
            self.incoming.setdefault(edge.target, []).append(edge)
        self.folded: set[int] = set()
        for box_id, box in drawing.nodes.items():
            if self._plumbing(box_id, box) and not self._must_stay(box_id):
                self.folded.add(box_id)
        self.exprs: dict[int, _Expr] = {}

    # which boxes fold
    def _plumbing(self, box_id: int, box: DrawNode) -> bool:
        if box.role is NodeRole.RETURN:
            return False
        if box.role is NodeRole.INPUT:
            return box_id not in self.records.nodes and self.records.type_of(box_id) in _LIST_TYPES
        node = self.records.nodes.get(box_id)
        if node is None:
            return box.role is NodeRole.CONSTANT
        if node.blocks or node.subgraph is not None:
            return False
        types = [value.type for value in node.outputs]
        if node.kind in _ALWAYS or (types and all(t in _LIST_TYPES for t in types)):
            return True
        return (
            node.kind in _SIZE_ARITHMETIC
            and bool(node.inputs)
            and all(self._folded_value(value) for value in node.inputs)
            and all(t in _SIZE_TYPES or _scalar_tensor(t) for t in types)
        )

    def _must_stay(self, box_id: int) -> bool:
        """Read by a return, handed from f to df, or read by nobody."""
        edges = self.outgoing.get(box_id)
        if not edges:
            return True
        nodes = self.drawing.nodes
        return any(edge.capture or nodes[edge.target].role is NodeRole.RETURN for edge in edges if edge.target in nodes)

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
                for edge in self.incoming.get(box, ()):
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
        out = DrawGraph()
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
        out.ghosts = drawing.ghosts - self.folded
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
        return Folded(out, {box: targets[box] for box in drawing.nodes if box in self.folded}, members)

    # labels
    def _relabelled(self, box_id: int, box: DrawNode) -> DrawNode:
        node = self.records.nodes.get(box_id)
        if node is None or box.role is not NodeRole.OP:
            return box
        lines = box.label.splitlines()
        head = self._head(node)
        return dataclasses.replace(box, label="\n".join(head + lines[1:]))

    def _head(self, node: NodeRecord) -> list[str]:
        exprs = [self._expr(value) for value in node.inputs]
        shown = [i for i, e in enumerate(exprs) if not e.bare]
        schema = _schema(node.kind, tuple(self.records.type_of(v) for v in node.inputs)) if shown else None
        name = _short_kind(node.kind)
        said = None  # an argument the name already says
        if node.kind in _EXPANDS and schema is not None:
            convolution = _convolution_name(schema, exprs)
            if convolution is not None:
                name, said = convolution, schema.argument_index("transposed")
        if node.attrs:
            name += "[" + ", ".join(f"{key}={text}" for key, text in node.attrs) + "]"
        tokens = []
        for position in shown:
            if position == said:
                continue
            token = _argument(node.kind, schema, position, exprs[position])
            if token:
                tokens.append(token)
        return _wrap(abbreviate(name, MAX_LINE), tokens)

    def _expr(self, value: int) -> _Expr:
        resolved = self.records.resolve(value)
        found = self.exprs.get(resolved)
        if found is None:
            found = self.exprs[resolved] = self._make_expr(resolved)
        return found

    def _make_expr(self, value: int) -> _Expr:
        producer = self.records.producer.get(value)
        if producer is None or producer[0].id not in self.folded:
            name = self.records.name_of(value)
            return _Expr(name, bare=value not in self.folded)  # an int[] input folds, yet has no value
        node, position = producer
        kind = node.kind
        args = [self._expr(v) for v in node.inputs]
        if kind == "prim::Constant":
            return _constant(node)
        if kind in _TRANSPARENT and len(args) == 1:
            return dataclasses.replace(args[0], bare=False)
        if kind in ("prim::ListConstruct", "prim::TupleConstruct"):
            static = all(a.value is not _DYNAMIC for a in args)
            values = [a.value for a in args]
            if kind == "prim::ListConstruct":
                if static:
                    return _Expr(_cut(_format(values)), values)
                if all(a.bare for a in args) and node.outputs[0].type not in _LIST_TYPES:
                    return _Expr(_cut("[" + ", ".join(a.text for a in args) + "]"), bare=True)  # the arrows show them
                return _Expr(_cut("[" + ", ".join(a.text for a in args) + "]"))
            if static:
                return _Expr(_cut(_format(tuple(values))), tuple(values))
            return _Expr(_cut("(" + ", ".join(a.text for a in args) + ")"))
        if kind in ("prim::TupleUnpack", "prim::ListUnpack") and args:
            source = self.records.producer.get(self.records.resolve(node.inputs[0]))
            if source is not None and source[0].id in self.folded and source[0].kind in (
                "prim::ListConstruct", "prim::TupleConstruct"
            ) and position < len(source[0].inputs):
                return self._expr(source[0].inputs[position])  # the packed value itself
            return _Expr(_cut(f"{args[0].text}[{position}]"))
        if kind in ("aten::size", "aten::sym_size") and args:
            dims = ", ".join(a.text for a in args[1:])
            return _Expr(_cut(f"{args[0].text}.size({dims})"))
        if kind in ("aten::numel", "aten::sym_numel", "aten::dim") and args:
            return _Expr(_cut(f"{args[0].text}.{_short_kind(kind).removeprefix('sym_')}()"))
        if kind == "prim::GetAttr" and args:
            return _Expr(_cut(f"{args[0].text}.{dict(node.attrs).get('name', '?').strip(chr(34))}"))
        infix = _infix(kind, args)
        if infix is not None:
            return infix
        suffix = f"[{position}]" if len(node.outputs) > 1 else ""
        return _Expr(_cut(f"{_short_kind(kind)}({', '.join(a.text for a in args)}){suffix}"))


_OPERATORS = {
    "aten::mul": "*", "aten::add": "+", "aten::sub": "-", "aten::floordiv": "//", "aten::floor_divide": "//",
    "aten::remainder": "%",
}


def _infix(kind: str, args: list[_Expr]) -> _Expr | None:
    """Size arithmetic as Python writes it: ``%q.size(1)*4``, ``trunc(%e.size(2)/4)``."""
    operator = _OPERATORS.get(kind)
    if operator is not None and (len(args) == 2 or len(args) == 3 and _same(args[2].value, 1)):
        return _Expr(_cut(f"{args[0].operand()}{operator}{args[1].operand()}"), infix=True)
    if kind == "aten::div" and len(args) in (2, 3):
        mode = args[2].value if len(args) == 3 else None
        quotient = f"{args[0].operand()}/{args[1].operand()}"
        if mode is None:
            return _Expr(_cut(quotient), infix=True)
        if mode == "floor":
            return _Expr(_cut(f"{args[0].operand()}//{args[1].operand()}"), infix=True)
        if mode == "trunc":
            return _Expr(_cut(f"trunc({quotient})"))
    return None


def _scalar_tensor(type_text: str) -> bool:
    """``Long(requires_grad=0, device=cpu)``: an integer tensor with no dimensions (NumToTensor's result)."""
    head, _, rest = type_text.partition("(")
    return head in ("Long", "Int") and (not rest or all("=" in part for part in rest.rstrip(")").split(",") if part.strip()))


# -- arguments ------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1 << 14)
def _schema(kind: str, types: tuple[str, ...]) -> FunctionSchema | None:
    """The overload of ``kind`` whose arguments take ``types``; else the first of that arity."""
    candidates = schemas_for(kind)  # ``.out`` overloads take one more argument: they never match
    if not candidates:
        return None
    try:
        parsed = [_parsed_type(text) for text in types]
    except (IRParseError, ValueError):
        parsed = None
    if parsed is not None:
        for schema in candidates:
            if schema_accepts(schema, parsed):
                return schema
    same = [s for s in candidates if len(s.arguments) == len(types)]
    return same[0] if same else candidates[0]


@functools.lru_cache(maxsize=1 << 14)
def _parsed_type(text: str) -> Any:
    return parse_type(text)


def _convolution_name(schema: FunctionSchema, exprs: list[_Expr]) -> str | None:
    """``conv2d`` (or ``conv_transpose2d``) as PyTorch's module calls it, from the stride's length."""
    index = schema.argument_index("stride")
    transposed = schema.argument_index("transposed")
    if index is None or transposed is None or index >= len(exprs) or transposed >= len(exprs):
        return None
    stride, flag = exprs[index].value, exprs[transposed].value
    if not isinstance(stride, list) or not 1 <= len(stride) <= 3 or not isinstance(flag, bool):
        return None
    return f"conv{'_transpose' if flag else ''}{len(stride)}d"


def _argument(kind: str, schema: FunctionSchema | None, position: int, expr: _Expr) -> str:
    """``name=value`` for one argument; "" when it equals its default."""
    argument = schema.arguments[position] if schema is not None and position < len(schema.arguments) else None
    if argument is None:
        names = _PRIM_ARGUMENTS.get(kind, ())
        name = names[position] if position < len(names) else f"arg{position}"
        return f"{name}={expr.text}"
    name = argument.name
    value = expr.value
    if value is not _DYNAMIC and _is_default(kind, name, argument.default, value):
        return ""
    text = expr.text
    expands = argument.list_size is not None or name in _EXPANDS.get(kind, ())
    if expands and isinstance(value, list) and value and all(_same(v, value[0]) for v in value):
        text = _format(value[0])
    type_text = argument.type_text.rstrip("?")
    if type_text == "ScalarType" and isinstance(value, int) and 0 <= value < len(SCALAR_TYPE_NAMES):
        text = SCALAR_TYPE_NAMES[value]
    return f"{_SHORT_NAMES.get(name, name)}={text}"


def _is_default(kind: str, name: str, default: Any, value: Any) -> bool:
    also = _ALSO_DEFAULT.get(kind, {}).get(name, NO_DEFAULT)
    if also is NO_DEFAULT:
        also = _ANY_OP_ALSO_DEFAULT.get(name, NO_DEFAULT)
    return any(d is not NO_DEFAULT and _equal(value, d) for d in (default, also))


def _equal(value: Any, default: Any) -> bool:
    """Equal as PyTorch reads them: an ``int[N]`` default of one int means N of them."""
    if isinstance(value, list) and not isinstance(default, list):
        return bool(value) and all(_same(v, default) for v in value)
    if isinstance(value, list) and isinstance(default, list):
        return len(value) == len(default) and all(_same(v, d) for v, d in zip(value, default, strict=True))
    return _same(value, default)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) != isinstance(b, bool) or (a is None) != (b is None):
        return False
    return bool(a == b) if not isinstance(a, (list, tuple)) else a == b


def _wrap(head: str, tokens: list[str]) -> list[str]:
    """The op and its arguments on at most two lines of ``MAX_LINE``, an argument
    broken at its spaces only when it fills a line on its own; what does not fit
    ends with "…" (the tooltip has the whole line)."""
    words: list[str] = []
    for token in tokens:
        words.extend([token] if len(token) <= MAX_LINE else token.split(" "))
    lines = [head]
    for position, word in enumerate(words):
        if len(lines[-1]) + 1 + len(word) <= MAX_LINE:
            lines[-1] += " " + word
        elif len(lines) < _ATTRIBUTE_LINES:
            lines.append(word)
        else:
            lines[-1] = abbreviate(" ".join([lines[-1], *words[position:]]), MAX_LINE)
            break
    lines[-1] = abbreviate(lines[-1], MAX_LINE)  # one word longer than a line
    return lines
