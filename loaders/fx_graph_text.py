"""An FX graph as PyTorch prints it (``GraphModule.print_readable``), read as text.

The graphs of a TORCH_TRACE log (AOTAutograd's joint, forward and backward
graphs) are Python source: one ``forward`` method whose parameters are the
graph's inputs, one assignment per node and a ``return``. What matters sits
in two places Python's ``ast`` alone does not give:

* **annotations**, strings like ``"f32[8, 16][16, 1]cpu"`` on each input and
  node (:mod:`gradview.loaders.fx_tensor_types` reads them);
* **comments**: the *descriptor* after an input or an output says what it is
  to AOTAutograd (``# PlainAOTInput(idx=0)``, ``# TangentAOTInput(...)``,
  ``# SavedForBackwardsAOTOutput(idx=3)``, ``# GradAOTOutput(grad_of=...)``),
  and ``# File: model.py:12 in forward, code: ...`` above a group of nodes
  names the source line that made them. So the text is also read with
  ``tokenize``'s rules (a ``#`` outside string literals), and comments are
  matched to lines.

Deletions ride on the node's line (``;  primals_3 = t = None``) and are
skipped; multi-output ops are read through ``getitem`` nodes
(``getitem = native_layer_norm[0]``); ``torch.ops.aten.mm.default`` is kept
as the op ``aten::mm`` and the overload ``default``. Reading needs no PyTorch.
"""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass, field
from typing import Any

from .fx_tensor_types import AnnotationError, SymbolAnnotation, TensorAnnotation, parse_annotation

__all__ = ["FxGraphError", "FxRef", "FxValue", "FxNode", "FxGraph", "parse_fx_graph"]

Annotation = TensorAnnotation | SymbolAnnotation | None


class FxGraphError(ValueError):
    """Text that is not a printed FX graph; the message names the line (of the payload)."""


@dataclass(frozen=True)
class FxRef:
    """A use of a graph value by name, in a node's arguments."""

    name: str


@dataclass(frozen=True)
class FxValue:
    """An input or an output of the graph."""

    name: str
    annotation: Annotation
    descriptor: str | None  # the comment after it: "PlainAOTInput(idx=0)"
    line: int


@dataclass(frozen=True)
class FxNode:
    name: str
    op: str  # "aten::mm", "prims::convert_element_type", "getitem", or the call as written
    overload: str | None  # "default", "Tensor", "dim_IntList"; None for getitem and unknown calls
    args: tuple[Any, ...]  # FxRef for values, Python constants, tuples for lists
    kwargs: dict[str, Any]
    annotation: Annotation
    line: int
    source: str | None = None  # the "File: …" comment above it, when there is one

    def inputs(self) -> list[str]:
        """Names of the values it reads, in order, each once."""
        seen: dict[str, None] = {}
        for item in [*self.args, *self.kwargs.values()]:
            for ref in _refs(item):
                seen.setdefault(ref.name, None)
        return list(seen)


@dataclass
class FxGraph:
    inputs: list[FxValue] = field(default_factory=list)
    nodes: list[FxNode] = field(default_factory=list)
    outputs: list[FxValue] = field(default_factory=list)


def parse_fx_graph(text: str) -> FxGraph:
    """The inputs, nodes and outputs of one printed FX graph (its first ``forward``)."""
    try:
        module = ast.parse(text)
    except SyntaxError as exc:
        raise FxGraphError(f"line {exc.lineno}:{exc.offset}: not Python: {exc.msg}") from None
    function = next((n for n in ast.walk(module) if isinstance(n, ast.FunctionDef) and n.name == "forward"), None)
    if function is None:
        raise FxGraphError("line 1: no forward method: not a printed FX graph")
    comments = _comments(text)
    sources = _SourceComments(comments)
    graph = FxGraph()
    for arg in function.args.args[1:]:  # self first
        graph.inputs.append(FxValue(arg.arg, _annotation(arg.annotation, arg.lineno), _descriptor(comments, arg.lineno), arg.lineno))
    declared: list[FxValue] = []  # a joint graph takes (primals, tangents) and declares the flat inputs
    defined = {value.name for value in graph.inputs}
    for statement in function.body:
        if isinstance(statement, ast.AnnAssign) and statement.value is None and isinstance(statement.target, ast.Name):
            line = statement.lineno
            declared.append(FxValue(statement.target.id, _annotation(statement.annotation, line), _descriptor(comments, line), line))
            defined.add(statement.target.id)
            continue
        if _is_flatten(statement):
            continue  # "primals_1, …, tangents_1, = fx_pytree.tree_flatten_spec(...)": the declared inputs
        if isinstance(statement, ast.Return):
            graph.outputs = _outputs(statement, comments, defined)
            break
        node = _node(statement, sources.above(statement.lineno))
        if node is None:
            continue  # "x = y = None": a deletion
        for name in node.inputs():
            if name not in defined:
                raise FxGraphError(f"line {node.line}: {node.name} reads {name}, which is not defined above it")
        defined.add(node.name)
        graph.nodes.append(node)
    else:
        raise FxGraphError(f"line {function.lineno}: forward has no return")
    if declared:
        graph.inputs = declared
    return graph


def _is_flatten(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Assign)
        and isinstance(statement.targets[0], ast.Tuple)
        and isinstance(statement.value, ast.Call)
        and ast.unparse(statement.value.func).endswith("tree_flatten_spec")
    )


# -- pieces ---------------------------------------------------------------------------------------------
def _comments(text: str) -> dict[int, str]:
    """Line -> the comment on it (without ``#``), and for comment-only lines the same.

    FX prints one statement per line and only one-line string literals, so a
    line's comment starts at its first ``#`` outside quotes: a scan of the lines
    holding a ``#`` finds them, several times faster than ``tokenize`` on big
    graphs. A line that ends inside a string (not FX's printing) falls back to
    ``tokenize`` over the whole text."""
    found: dict[int, str] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        if "#" not in line and "'" * 3 not in line and '"' * 3 not in line:
            continue
        start = _comment_start(line)
        if start is None:
            return _tokenized_comments(text)
        if start >= 0:
            found[number] = line[start + 1 :].strip()
    return found


def _comment_start(line: str) -> int | None:
    """Where the comment of ``line`` starts (-1: none); None when a string does not end on it."""
    quote = None
    position = 0
    while position < len(line):
        char = line[position]
        if quote is not None:
            if char == "\\":
                position += 1
            elif line.startswith(quote, position):
                position += len(quote) - 1
                quote = None
        elif char == "#":
            return position
        elif char in "'\"":
            quote = char * 3 if line.startswith(char * 3, position) else char
            position += len(quote) - 1
        position += 1
    return None if quote is not None else -1


def _tokenized_comments(text: str) -> dict[int, str]:
    found: dict[int, str] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                found[token.start[0]] = token.string[1:].strip()
    except (tokenize.TokenError, IndentationError) as exc:
        raise FxGraphError(f"the graph's text does not tokenize: {exc}") from None
    return found


def _descriptor(comments: dict[int, str], line: int) -> str | None:
    comment = comments.get(line)
    return comment if comment and not comment.startswith("File:") else None


def _annotation(node: ast.expr | None, line: int) -> Annotation:
    if node is None:
        return None
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        return None  # a Python type (int, torch.Tensor): no shape to read
    try:
        return parse_annotation(node.value)
    except AnnotationError as exc:
        raise FxGraphError(f"line {line}: {exc}") from None


def _node(statement: ast.stmt, source: str | None) -> FxNode | None:
    line = statement.lineno
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.value is not None:
        name, value, annotation = statement.target.id, statement.value, _annotation(statement.annotation, line)
    elif isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
        name, value, annotation = statement.targets[0].id, statement.value, None
    elif isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Constant) and statement.value.value is None:
        return None
    elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
        return None  # a docstring
    else:
        raise FxGraphError(f"line {line}: not a node of a printed FX graph: {ast.unparse(statement)[:60]!r}")
    if isinstance(value, ast.Constant) and value.value is None:
        return None  # "x = None": a deletion
    if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name):
        return FxNode(name, "getitem", None, (FxRef(value.value.id), _constant(value.slice, line)), {}, annotation, line, source)
    if isinstance(value, ast.BinOp | ast.UnaryOp | ast.Compare):
        return _arithmetic(name, value, annotation, line, source)
    if not isinstance(value, ast.Call):
        raise FxGraphError(f"line {line}: {name} is not a call: {ast.unparse(value)[:60]!r}")
    op, overload = _target(value.func)
    args = tuple(_constant(arg, line) for arg in value.args)
    kwargs = {kw.arg or "**": _constant(kw.value, line) for kw in value.keywords}
    return FxNode(name, op, overload, args, kwargs, annotation, line, source)


# Python's operators on sizes (``mul_6: "Sym(2*s77)" = primals_1 * 2`` under dynamic
# shapes) as the int ops TorchScript writes for them.
_BINARY = {
    ast.Add: "aten::add", ast.Sub: "aten::sub", ast.Mult: "aten::mul", ast.FloorDiv: "aten::floordiv",
    ast.Mod: "aten::remainder", ast.Div: "aten::div", ast.Pow: "aten::pow",
}
_COMPARE = {ast.Eq: "aten::eq", ast.NotEq: "aten::ne", ast.Lt: "aten::lt", ast.LtE: "aten::le", ast.Gt: "aten::gt", ast.GtE: "aten::ge"}


def _arithmetic(name: str, value: ast.expr, annotation: Annotation, line: int, source: str | None) -> FxNode:
    if isinstance(value, ast.BinOp) and type(value.op) in _BINARY:
        op, args = _BINARY[type(value.op)], (value.left, value.right)
    elif isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
        op, args = "aten::neg", (value.operand,)
    elif isinstance(value, ast.Compare) and len(value.ops) == 1 and type(value.ops[0]) in _COMPARE:
        op, args = _COMPARE[type(value.ops[0])], (value.left, value.comparators[0])
    else:
        raise FxGraphError(f"line {line}: {name} is an expression gradview does not read: {ast.unparse(value)[:60]!r}")
    return FxNode(name, op, "int", tuple(_constant(arg, line) for arg in args), {}, annotation, line, source)


class _SourceComments:
    """The "File: …" comment heading each group of nodes, read while walking the
    nodes in line order: a node's source is the latest such comment above it,
    unless a "No stacktrace found" comment came after it. One pass in all."""

    def __init__(self, comments: dict[int, str]) -> None:
        self._lines = sorted(line for line, text in comments.items() if text.startswith(("File:", "No stacktrace found")))
        self._comments = comments
        self._next = 0
        self._current: str | None = None

    def above(self, line: int) -> str | None:
        while self._next < len(self._lines) and self._lines[self._next] < line:
            comment = self._comments[self._lines[self._next]]
            self._current = comment if comment.startswith("File:") else None
            self._next += 1
        return self._current


def _target(func: ast.expr) -> tuple[str, str | None]:
    """``torch.ops.aten.mm.default`` -> ("aten::mm", "default"); other calls as written."""
    parts: list[str] = []
    node = func
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    parts.reverse()
    if len(parts) == 5 and parts[:2] == ["torch", "ops"]:
        return f"{parts[2]}::{parts[3]}", parts[4]
    if len(parts) == 4 and parts[:2] == ["torch", "ops"]:
        return f"{parts[2]}::{parts[3]}", None
    return ast.unparse(func), None


def _constant(node: ast.expr, line: int) -> Any:
    """An argument: a value by name, a constant, a list or tuple of them; other expressions as text."""
    if isinstance(node, ast.Name):
        return FxRef(node.id)
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.List | ast.Tuple):
        return tuple(_constant(item, line) for item in node.elts)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        return -node.operand.value
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "torch":
        return f"torch.{node.attr}"  # torch.float32, torch.contiguous_format
    return ast.unparse(node)  # torch.device(type='cpu') and the like, kept as written


def _outputs(statement: ast.Return, comments: dict[int, str], defined: set[str]) -> list[FxValue]:
    value = statement.value
    if isinstance(value, ast.Call) and value.args:  # pytree.tree_unflatten([...], self._out_spec)
        value = value.args[0]
    items = value.elts if isinstance(value, ast.Tuple | ast.List) else [value] if value is not None else []
    outputs = []
    for item in items:
        if isinstance(item, ast.Constant) and item.value is None:
            outputs.append(FxValue("None", None, _descriptor(comments, item.lineno), item.lineno))
            continue
        if not isinstance(item, ast.Name):
            raise FxGraphError(f"line {item.lineno}: an output that is not a value: {ast.unparse(item)[:60]!r}")
        if item.id not in defined:
            raise FxGraphError(f"line {item.lineno}: the output {item.id} is not defined")
        outputs.append(FxValue(item.id, None, _descriptor(comments, item.lineno), item.lineno))
    return outputs


def _refs(item: Any) -> list[FxRef]:
    if isinstance(item, FxRef):
        return [item]
    if isinstance(item, tuple):
        return [ref for part in item for ref in _refs(part)]
    return []
