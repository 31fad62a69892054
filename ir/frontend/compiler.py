"""Compile a Python function's AST to a TorchScript-style Graph.

The supported subset (everything else raises :class:`ScriptError` naming
``file:line:col``):

* arguments annotated ``torch.Tensor``/``Tensor`` (or not annotated), ``int``,
  ``float``, ``bool``, ``List[int]``/``list[int]``, ``Tuple[...]``/``tuple[...]``;
* ``+ - * / // % ** @``, unary ``-``/``+``/``not``, comparisons (not chained),
  ``and``/``or`` (short-circuit ``prim::If`` as TorchScript emits);
* calls ``torch.NAME(...)``/``torch.nn.functional.NAME(...)`` and tensor methods
  ``x.NAME(...)`` for any registered ``aten::NAME`` overload (positional and
  keyword arguments, schema defaults, ints packed into ``int[]`` lists), and the
  builtins ``len``, ``int``, ``float``, ``bool``;
* ``x.shape``, indexing tuples/lists by an int, tensors by an int (``aten::select``);
* assignment (names, tuple unpacking), annotated assignment, augmented
  assignment (always out of place: ``x += y`` emits ``aten::add``, not ``aten::add_``);
* ``if``/``elif``/``else`` (``prim::If`` with an output per variable assigned in a
  branch and defined after it; both branches may end in ``return``),
  ``for i in range(...)`` and ``while`` (``prim::Loop`` with loop-carried variables);
  ``break`` and ``continue`` become flags, as TorchScript lowers them: the loop's
  condition output is ``not break``, and statements after an ``if`` that may
  exit are guarded by ``if not (break or continue)``;
* tuple and list literals, ``return``, int/float/bool/None constants, and
  int/float/bool globals or closure variables (inlined as constants);
* calls of other Python functions (or ``script``-compiled ones) found among the
  globals or closure variables: the callee is compiled too and called through
  ``prim::CallFunction`` on a ``Function`` constant that carries its graph, as
  ``torch.jit.script`` emits (None/bool/int/float defaults become constants at
  the call); the executor's Inline pass pastes the body in.
  Recursion is rejected, as TorchScript rejects it.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import textwrap
from collections.abc import Callable, Sequence
from typing import Any

from ..builders import return_types
from ..constants import type_of_constant
from ..graph import Block, Graph
from ..node import Node, Value
from ..operators import schema_accepts, schemas_for
from ..schema import NO_DEFAULT, FunctionSchema
from ..types import (
    TENSOR,
    BoolType,
    FloatType,
    FunctionType,
    IntType,
    ListType,
    NoneType,
    OptionalType,
    TensorType,
    TupleType,
    Type,
)

__all__ = ["ScriptError", "ScriptFunction", "compile_function", "script"]

MAX_TRIP_COUNT = 9223372036854775807

_BINOPS: dict[type, tuple[str, str]] = {
    ast.Add: ("aten::add", "+"),
    ast.Sub: ("aten::sub", "-"),
    ast.Mult: ("aten::mul", "*"),
    ast.Div: ("aten::div", "/"),
    ast.FloorDiv: ("aten::floordiv", "//"),
    ast.Mod: ("aten::remainder", "%"),
    ast.Pow: ("aten::pow", "**"),
    ast.MatMult: ("aten::matmul", "@"),
}
_CMPOPS: dict[type, tuple[str, str]] = {
    ast.Lt: ("aten::lt", "<"),
    ast.LtE: ("aten::le", "<="),
    ast.Gt: ("aten::gt", ">"),
    ast.GtE: ("aten::ge", ">="),
    ast.Eq: ("aten::eq", "=="),
    ast.NotEq: ("aten::ne", "!="),
}
# The comparison with its operands swapped (``1 < x`` is ``x > 1``).
_SWAPPED = {"aten::lt": "aten::gt", "aten::gt": "aten::lt", "aten::le": "aten::ge",
            "aten::ge": "aten::le", "aten::eq": "aten::eq", "aten::ne": "aten::ne"}
_BUILTINS = {"len": "aten::len", "int": "aten::Int", "float": "aten::Float", "bool": "aten::Bool"}
_SCALARS = {"int": IntType, "float": FloatType, "bool": BoolType}


class ScriptError(ValueError):
    """Python source outside the supported subset. ``str(err)`` is one line:
    ``file:line:col: message`` (``col`` counts from 1)."""

    def __init__(self, message: str, filename: str, line: int, column: int) -> None:
        self.message = message
        self.filename = filename
        self.line = line
        self.column = column
        super().__init__(f"{filename}:{line}:{column}: {message}")


class ScriptFunction:
    """A compiled function: ``.graph`` is its IR, ``.fn`` the Python original.

    The IR layer does not run graphs; ``gradview.runtime.script`` returns a
    subclass whose call runs the graph through a GraphExecutor.
    """

    def __init__(self, fn: Callable[..., Any], graph: Graph, filename: str) -> None:
        self.fn = fn
        self.graph = graph
        self.filename = filename
        self.name = getattr(fn, "__name__", "<function>")
        self.__doc__ = getattr(fn, "__doc__", None)

    @property
    def code(self) -> str:
        return str(self.graph)

    def __call__(self, *args: Any) -> Any:
        raise TypeError(
            f"gradview.ir.script compiles only; run {self.name!r} with "
            "gradview.runtime.script(fn)(...) or gradview.runtime.GraphExecutor(f.graph)"
        )

    def __repr__(self) -> str:
        return f"<ScriptFunction {self.name}>"


def script(fn: Callable[..., Any]) -> ScriptFunction:
    """Compile ``fn`` (usable as a decorator); see the module docstring for the subset."""
    graph, filename = compile_function(fn)
    return ScriptFunction(fn, graph, filename)


def compile_function(fn: Callable[..., Any]) -> tuple[Graph, str]:
    """``fn``'s graph and the file its source came from."""
    filename = inspect.getsourcefile(fn) or inspect.getfile(fn)
    try:
        lines, first_line = inspect.getsourcelines(fn)
    except (OSError, TypeError) as exc:
        raise ScriptError(f"cannot read the source of {fn!r}: {exc}", filename or "<unknown>", 0, 0) from None
    source = textwrap.dedent("".join(lines))
    indent = len(lines[0]) - len(lines[0].lstrip())
    tree = ast.parse(source)
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if not defs or isinstance(defs[0], ast.AsyncFunctionDef):
        raise ScriptError("only plain functions (def) can be scripted", filename, first_line, indent + 1)
    return _Compiler(fn, filename, first_line - 1, indent).compile(defs[0]), filename


# Functions being compiled right now (outermost first), to reject recursion,
# and the graphs of callees compiled under the outermost call, so a function
# called twice is compiled once.
_ACTIVE: list[Callable[..., Any]] = []
_CALLEES: dict[Callable[..., Any], Graph] = {}


def _constant_defaults(fn: Callable[..., Any]) -> dict[str, Any]:
    """``fn``'s default argument values that can be graph constants (None, bool, int, float)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return {}
    return {p.name: p.default for p in params
            if p.default is not inspect.Parameter.empty and type(p.default) in (type(None), bool, int, float)}


def _callee_graph(fn: Callable[..., Any]) -> Graph:
    if isinstance(fn, ScriptFunction):
        return fn.graph
    graph = _CALLEES.get(fn)
    if graph is None:
        _ACTIVE.append(fn)
        try:
            graph, _ = compile_function(fn)
        finally:
            _ACTIVE.pop()
        _CALLEES[fn] = graph
    return graph


class _SourceGraph(Graph):
    """A Graph that lists the nodes created since the compiler last gave nodes
    a source location, so locating them costs their number, not the graph's.
    The list is dropped (None) once compilation ends."""

    __slots__ = ("unlocated",)

    def __init__(self) -> None:
        super().__init__()
        self.unlocated: list[Node] | None = []

    def create(self, kind: str, inputs: Sequence[Value] = (), num_outputs: int = 1) -> Node:
        node = super().create(kind, inputs, num_outputs)
        if self.unlocated is not None:
            self.unlocated.append(node)
        return node


def _located(node: ast.AST, where: ast.AST) -> ast.AST:
    return ast.fix_missing_locations(ast.copy_location(node, where))


def _name(flag: str, where: ast.AST, negate: bool = False) -> ast.expr:
    name = _located(ast.Name(flag, ast.Load()), where)
    return _located(ast.UnaryOp(ast.Not(), name), where) if negate else name


def _set_flag(flag: str, value: bool, where: ast.AST) -> ast.stmt:
    return _located(ast.Assign([ast.Name(flag, ast.Store())], ast.Constant(value)), where)


def _exits(body: list[ast.stmt]) -> set[type]:
    """Which of Break/Continue end this loop's iterations (nested loops own theirs)."""
    found: set[type] = set()
    stack = list(body)
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, (ast.Break, ast.Continue)):
            found.add(type(stmt))
        elif isinstance(stmt, ast.If):
            stack.extend(stmt.body)
            stack.extend(stmt.orelse)
    return found


def _guard_exits(body: list[ast.stmt], break_flag: str | None, continue_flag: str | None) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for i, stmt in enumerate(body):
        if isinstance(stmt, ast.Break):
            out.append(_set_flag(break_flag, True, stmt))  # type: ignore[arg-type]
            return out  # the rest of the block is dead, as after Python's break
        if isinstance(stmt, ast.Continue):
            out.append(_set_flag(continue_flag, True, stmt))  # type: ignore[arg-type]
            return out
        if isinstance(stmt, ast.If) and _exits([stmt]):
            lowered = _located(ast.If(stmt.test, _guard_exits(stmt.body, break_flag, continue_flag)
                                      or [_located(ast.Pass(), stmt)],
                                      _guard_exits(stmt.orelse, break_flag, continue_flag)), stmt)
            out.append(lowered)
            rest = body[i + 1:]
            if rest:
                names = [_name(f, rest[0]) for f in (break_flag, continue_flag) if f]
                either = names[0] if len(names) == 1 else _located(ast.BoolOp(ast.Or(), names), rest[0])
                guard = _located(ast.UnaryOp(ast.Not(), either), rest[0])
                out.append(_located(ast.If(guard, _guard_exits(rest, break_flag, continue_flag), []),
                                    rest[0]))
            return out
        out.append(stmt)
    return out


class _Compiler:
    def __init__(self, fn: Callable[..., Any], filename: str, line_offset: int, col_offset: int) -> None:
        self.fn = fn
        self.filename = filename
        self.line_offset = line_offset
        self.col_offset = col_offset
        self.graph = _SourceGraph()
        self.env: dict[str, Value] = {}
        # name -> why it is not defined (only in one branch, only inside a loop)
        self.partial: dict[str, str] = {}
        self._loop_count = 0  # numbers the break/continue flags of loops
        self.globals = dict(getattr(fn, "__globals__", {}))
        code = getattr(fn, "__code__", None)
        closure = getattr(fn, "__closure__", None) or ()
        if code is not None:
            for name, cell in zip(code.co_freevars, closure, strict=False):
                with contextlib.suppress(ValueError):
                    self.globals[name] = cell.cell_contents

    # -- errors and locations --------------------------------------------------
    def _where(self, node: ast.AST) -> tuple[int, int]:
        line = getattr(node, "lineno", 1) + self.line_offset
        col = getattr(node, "col_offset", 0) + (self.col_offset if getattr(node, "lineno", 1) > 0 else 0)
        return line, col

    def error(self, node: ast.AST, message: str) -> ScriptError:
        line, col = self._where(node)
        return ScriptError(message, self.filename, line, col + 1)

    def location(self, node: ast.AST) -> str:
        # TorchScript's source comments count columns from 0.
        line, col = self._where(node)
        return f"{self.filename}:{line}:{col}"

    def _locate(self, node: ast.AST) -> None:
        """Give every node created since the last sweep ``node``'s location."""
        pending = self.graph.unlocated
        if not pending:
            return
        where = self.location(node)
        for n in pending:
            if n.source_location is None:
                n.source_location = where
        pending.clear()

    # -- entry -------------------------------------------------------------------
    def compile(self, fdef: ast.FunctionDef) -> Graph:
        args = fdef.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            raise self.error(fdef, "only plain positional arguments are supported")
        for arg in args.args:
            type_ = self.annotation(arg.annotation) if arg.annotation is not None else TENSOR
            self.env[arg.arg] = self.graph.add_input(arg.arg, type_)
        returned = self.body(fdef.body)
        if returned is None:
            returned = self.graph.insert_constant(None)
            self._locate(fdef)
        self.graph.register_output(returned)
        self.graph.unlocated = None
        return self.graph

    def annotation(self, node: ast.expr) -> Type:
        if isinstance(node, ast.Constant) and node.value is None:
            return NoneType()
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return self.annotation(ast.parse(node.value, mode="eval").body)
        name = _dotted(node)
        if name in ("torch.Tensor", "Tensor"):
            return TENSOR
        if name in _SCALARS:
            return _SCALARS[name]()
        if isinstance(node, ast.Subscript):
            head = _dotted(node.value).rpartition(".")[2]
            elems = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if head in ("List", "list") and len(elems) == 1:
                return ListType(self.annotation(elems[0]))
            if head in ("Tuple", "tuple"):
                return TupleType(tuple(self.annotation(e) for e in elems))
            if head == "Optional" and len(elems) == 1:
                return OptionalType(self.annotation(elems[0]))
        raise self.error(node, f"unsupported type annotation {ast.unparse(node)!r}")

    # -- statements ----------------------------------------------------------------
    def body(self, stmts: list[ast.stmt]) -> Value | None:
        """Compile ``stmts`` into the current block; the returned value if the body returns."""
        for i, stmt in enumerate(stmts):
            returned = self.statement(stmt)
            if returned is not None:
                if i + 1 < len(stmts):
                    raise self.error(stmts[i + 1], "code after return is not supported")
                return returned
        return None

    def statement(self, stmt: ast.stmt) -> Value | None:
        if isinstance(stmt, ast.Return):
            value = self.expr(stmt.value) if stmt.value is not None else self.graph.insert_constant(None)
            self._locate(stmt)
            return value
        if isinstance(stmt, ast.Expr):
            if isinstance(stmt.value, ast.Constant):  # docstring
                return None
            self.expr(stmt.value)
        elif isinstance(stmt, ast.Pass):
            pass
        elif isinstance(stmt, ast.Assign):
            if len(stmt.targets) != 1:
                raise self.error(stmt, "chained assignment (a = b = ...) is not supported")
            self.assign(stmt.targets[0], stmt.value)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is None or not isinstance(stmt.target, ast.Name):
                raise self.error(stmt, "annotated assignment needs a name and a value")
            wanted = self.annotation(stmt.annotation)
            value = self.expr(stmt.value)
            if not value.type().is_subtype_of(wanted):
                raise self.error(stmt.value, f"expected a value of type {wanted}, got {value.type()}")
            self.bind(stmt.target.id, value)
        elif isinstance(stmt, ast.AugAssign):
            if not isinstance(stmt.target, ast.Name):
                raise self.error(stmt.target, "augmented assignment is supported on names only")
            current = self.lookup(stmt.target)
            value = self.binop(stmt, current, stmt.op, self.expr(stmt.value))
            self.bind(stmt.target.id, value)
        elif isinstance(stmt, ast.If):
            return self.if_(stmt)
        elif isinstance(stmt, ast.For):
            self.for_(stmt)
        elif isinstance(stmt, ast.While):
            self.while_(stmt)
        else:
            raise self.error(stmt, f"unsupported Python syntax: {type(stmt).__name__} statement")
        self._locate(stmt)
        return None

    def bind(self, name: str, value: Value) -> None:
        node = value.node
        if (
            not value.has_debug_name()
            and node.kind() != "prim::Param"
            and node.owning_block is self.graph._insert.block
        ):
            value.set_debug_name(name)
        self.env[name] = value
        self.partial.pop(name, None)

    def assign(self, target: ast.expr, value_node: ast.expr) -> None:
        if isinstance(target, ast.Name):
            self.bind(target.id, self.expr(value_node))
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            names = target.elts
            if not all(isinstance(n, ast.Name) for n in names):
                raise self.error(target, "only names can be unpacked into")
            if isinstance(value_node, (ast.Tuple, ast.List)) and len(value_node.elts) == len(names):
                values = [self.expr(e) for e in value_node.elts]
            else:
                values = self.unpack(value_node, self.expr(value_node), len(names))
            for name, value in zip(names, values, strict=True):
                self.bind(name.id, value)  # type: ignore[attr-defined]
            return
        raise self.error(target, f"cannot assign to {type(target).__name__}")

    def unpack(self, where: ast.expr, value: Value, count: int) -> list[Value]:
        type_ = value.type()
        if isinstance(type_, TupleType):
            if len(type_.elems) != count:
                raise self.error(where, f"cannot unpack a tuple of {len(type_.elems)} into {count} names")
            node = self.graph.create("prim::TupleUnpack", [value], 0)
            for elem in type_.elems:
                node.add_output(elem)
        elif isinstance(type_, ListType):
            node = self.graph.create("prim::ListUnpack", [value], 0)
            for _ in range(count):
                node.add_output(type_.elem)
        else:
            raise self.error(where, f"cannot unpack a value of type {type_}")
        self.graph.insert_node(node)
        return list(node.outputs())

    # -- control flow ----------------------------------------------------------------
    def _new_node(self, kind: str, inputs: list[Value], stmt: ast.AST) -> Node:
        node = self.graph.create(kind, inputs, 0)
        node.source_location = self.location(stmt)
        self.graph.insert_node(node)
        return node

    def _branch(self, block: Block, stmts: list[ast.stmt]) -> tuple[dict[str, Value], Value | None]:
        saved_env, saved_partial = self.env, self.partial
        self.env, self.partial = dict(saved_env), dict(saved_partial)
        try:
            with self.graph.insert_point(block):
                returned = self.body(stmts)
            return self.env, returned
        finally:
            self.env, self.partial = saved_env, saved_partial

    def if_(self, stmt: ast.If) -> Value | None:
        cond = self.condition(stmt.test)
        node = self._new_node("prim::If", [cond], stmt)
        then_block, else_block = node.add_block(), node.add_block()
        then_env, then_ret = self._branch(then_block, stmt.body)
        else_env, else_ret = self._branch(else_block, stmt.orelse)
        if (then_ret is None) != (else_ret is None):
            raise self.error(stmt, "return in only one branch of an if is not supported")
        outputs: list[tuple[str | None, Value, Value]] = []
        if then_ret is not None and else_ret is not None:
            outputs.append((None, then_ret, else_ret))
        names = list(dict.fromkeys([*then_env, *else_env]))
        for name in names:
            a, b = then_env.get(name), else_env.get(name)
            if a is not None and b is not None and (a is not self.env.get(name) or b is not self.env.get(name)):
                outputs.append((name, a, b))
            elif (a is None) != (b is None) and name not in self.env:
                missing = "false" if b is None else "true"
                self.partial[name] = f"{name!r} is not defined in the {missing} branch of the if at line {self._where(stmt)[0]}"
        result = None
        for name, a, b in outputs:
            if a.type() != b.type():
                what = "the returned value" if name is None else f"{name!r}"
                raise self.error(
                    stmt, f"type mismatch for {what} in if branches: {a.type()} in the true branch, "
                    f"{b.type()} in the false branch"
                )
            then_block.register_output(a)
            else_block.register_output(b)
            out = node.add_output(a.type())
            if name is None:
                result = out
            else:
                out.set_debug_name(name)
                self.env[name] = out
        return result

    def _lower_exits(self, stmt: ast.For | ast.While) -> tuple[list[ast.stmt], str | None]:
        """The loop body with ``break``/``continue`` turned into flags, as
        TorchScript lowers them: ``break`` sets a loop-carried flag that ends
        the loop at the end of this iteration, ``continue`` a per-iteration
        flag, and the statements after an ``if`` that may exit run only when
        neither flag is set. Returns the body and the break flag's name."""
        exits = _exits(stmt.body)
        if not exits:
            return stmt.body, None
        self._loop_count += 1
        break_flag = f"__break{self._loop_count}" if ast.Break in exits else None
        continue_flag = f"__continue{self._loop_count}" if ast.Continue in exits else None
        if break_flag:
            self.bind(break_flag, self.graph.insert_constant(False))
            self._locate(stmt)
        body = _guard_exits(stmt.body, break_flag, continue_flag)
        if continue_flag:
            body = [_set_flag(continue_flag, False, stmt), *body]
        return body, break_flag

    def _carried(self, body: list[ast.stmt], exclude: set[str]) -> list[str]:
        assigned: list[str] = []
        for sub in body:
            for n in ast.walk(sub):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    assigned.append(n.id)
                elif isinstance(n, ast.Return):
                    raise self.error(n, "return inside a loop is not supported")
        return [n for n in dict.fromkeys(assigned) if n in self.env and n not in exclude]

    def _loop(self, stmt: ast.For | ast.While, trip: Value, cond: Value, target: str | None,
              derive: Callable[[Value], Value] | None) -> None:
        body, break_flag = self._lower_exits(stmt)
        carried = self._carried(body, {target} if target else set())
        node = self._new_node("prim::Loop", [trip, cond, *(self.env[n] for n in carried)], stmt)
        block = node.add_block()
        counter = block.add_input(None if derive else target, IntType())
        saved_env, saved_partial = self.env, self.partial
        self.env, self.partial = dict(saved_env), dict(saved_partial)
        try:
            for name in carried:
                self.env[name] = block.add_input(name, saved_env[name].type())
            with self.graph.insert_point(block):
                if target is not None:
                    self.env[target] = derive(counter) if derive else counter
                self.body(body)
                # The loop goes on while no ``break`` ran and the while test holds.
                still = _name(break_flag, stmt, negate=True) if break_flag else None
                if isinstance(stmt, ast.While):
                    test = stmt.test if still is None else _located(ast.BoolOp(ast.And(), [still, stmt.test]), stmt)
                    next_cond = self.condition(test)
                elif still is not None:
                    next_cond = self.condition(still)
                else:
                    next_cond = self.graph.insert_constant(True)
                self._locate(stmt)
            block.register_output(next_cond)
            body_env = self.env
        finally:
            self.env, self.partial = saved_env, saved_partial
        for name in carried:
            new = body_env[name]
            if new.type() != saved_env[name].type():
                raise self.error(
                    stmt, f"loop-carried variable {name!r} changes type from {saved_env[name].type()} "
                    f"to {new.type()} in the loop body"
                )
            block.register_output(new)
            self.env[name] = node.add_output(new.type()).set_debug_name(name)
        for name in body_env:
            if name not in self.env and name != target:
                self.partial[name] = f"{name!r} is only defined inside the loop at line {self._where(stmt)[0]}"

    def for_(self, stmt: ast.For) -> None:
        if stmt.orelse:
            raise self.error(stmt, "for ... else is not supported")
        if not isinstance(stmt.target, ast.Name):
            raise self.error(stmt.target, "the loop variable must be a name")
        it = stmt.iter
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
                and "range" not in self.env and not it.keywords and 1 <= len(it.args) <= 3):
            raise self.error(it, "only 'for NAME in range(...)' loops are supported")
        bounds = [self.expr(a) for a in it.args]
        for a, v in zip(it.args, bounds, strict=True):
            if v.type() != IntType():
                raise self.error(a, f"range() takes ints, got {v.type()}")
        derive = None
        if len(bounds) == 1:
            trip = bounds[0]
        else:
            start, stop = bounds[0], bounds[1]
            step = bounds[2] if len(bounds) == 3 else self.graph.insert_constant(1)
            trip = self.graph.insert("aten::__range_length", [start, stop, step])

            def derive(counter: Value) -> Value:
                return self.graph.insert("aten::__derive_index", [counter, start, step])

        true = self.graph.insert_constant(True)
        self._locate(it)
        self._loop(stmt, trip, true, stmt.target.id, derive)

    def while_(self, stmt: ast.While) -> None:
        if stmt.orelse:
            raise self.error(stmt, "while ... else is not supported")
        cond = self.condition(stmt.test)
        trip = self.graph.insert_constant(MAX_TRIP_COUNT)
        self._locate(stmt)
        self._loop(stmt, trip, cond, None, None)

    def condition(self, test: ast.expr) -> Value:
        value = self.expr(test)
        type_ = value.type()
        if type_ == BoolType():
            return value
        if isinstance(type_, TensorType) or type_ in (IntType(), FloatType()):
            value = self.graph.insert("aten::Bool", [value])
            self._locate(test)
            return value
        raise self.error(test, f"a condition must be a bool, Tensor, int or float, got {type_}")

    # -- expressions ---------------------------------------------------------------
    def expr(self, node: ast.expr) -> Value:
        value = self._expr(node)
        self._locate(node)
        return value

    def _expr(self, node: ast.expr) -> Value:
        if isinstance(node, ast.Constant):
            if node.value is None or isinstance(node.value, (bool, int, float, str)):
                return self.graph.insert_constant(node.value)
            raise self.error(node, f"unsupported constant {node.value!r}")
        if isinstance(node, ast.Name):
            return self.lookup(node)
        if isinstance(node, ast.BinOp):
            return self.binop(node, self.expr(node.left), node.op, self.expr(node.right))
        if (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
                and isinstance(node.operand, ast.Constant) and type(node.operand.value) in (int, float)):
            return self.graph.insert_constant(-node.operand.value)
        if isinstance(node, ast.UnaryOp):
            operand = self.expr(node.operand)
            if isinstance(node.op, ast.UAdd):
                return operand
            if isinstance(node.op, ast.USub):
                return self.call(node, "aten::neg", [operand], {}, "unary -")
            if isinstance(node.op, ast.Not):
                return self.call(node, "aten::__not__", [self._as_bool(node.operand, operand)], {}, "not")
            raise self.error(node, "unsupported unary operator ~")
        if isinstance(node, ast.BoolOp):
            return self.boolop(node)
        if isinstance(node, ast.Compare):
            if len(node.ops) != 1:
                raise self.error(node, "chained comparisons are not supported")
            op = type(node.ops[0])
            if op not in _CMPOPS:
                raise self.error(node, f"unsupported comparison {type(node.ops[0]).__name__}")
            kind, text = _CMPOPS[op]
            left, right = self.expr(node.left), self.expr(node.comparators[0])
            if not isinstance(left.type(), TensorType) and isinstance(right.type(), TensorType):
                return self.call(node, _SWAPPED[kind], [right, left], {}, text)
            return self.call(node, kind, [left, right], {}, text)
        if isinstance(node, ast.Call):
            return self.call_expr(node)
        if isinstance(node, ast.Tuple):
            values = [self.expr(e) for e in node.elts]
            out = self.graph.create("prim::TupleConstruct", values, 0)
            out.add_output(TupleType(tuple(v.type() for v in values)))
            return self.graph.insert_node(out).output()
        if isinstance(node, ast.List):
            return self.list_literal(node, [self.expr(e) for e in node.elts])
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        if isinstance(node, ast.Attribute):
            if node.attr == "shape":
                return self.call(node, "aten::size", [self.expr(node.value)], {}, ".shape")
            raise self.error(node, f"unsupported attribute {ast.unparse(node)!r}")
        if isinstance(node, ast.IfExp):
            cond = self.condition(node.test)
            out = self._new_node("prim::If", [cond], node)
            values = []
            for block, sub in ((out.add_block(), node.body), (out.add_block(), node.orelse)):
                with self.graph.insert_point(block):
                    values.append(self.expr(sub))
                block.register_output(values[-1])
            if values[0].type() != values[1].type():
                raise self.error(node, f"type mismatch in conditional expression: {values[0].type()} vs {values[1].type()}")
            return out.add_output(values[0].type())
        raise self.error(node, f"unsupported Python syntax: {type(node).__name__} expression")

    def lookup(self, node: ast.Name) -> Value:
        name = node.id
        if name in self.env:
            return self.env[name]
        if name in self.partial:
            raise self.error(node, self.partial[name])
        value = self.globals.get(name, _MISSING)
        if value is not _MISSING and (value is None or isinstance(value, (bool, int, float))):
            return self.graph.insert_constant(value)
        if value is not _MISSING:
            raise self.error(node, f"global {name!r} of type {type(value).__name__} cannot be used in a scripted function")
        raise self.error(node, f"undefined variable {name!r}")

    def _as_bool(self, where: ast.expr, value: Value) -> Value:
        if value.type() == BoolType():
            return value
        if isinstance(value.type(), TensorType) or value.type() in (IntType(), FloatType()):
            return self.graph.insert("aten::Bool", [value])
        raise self.error(where, f"expected a bool, got {value.type()}")

    def boolop(self, node: ast.BoolOp) -> Value:
        is_and = isinstance(node.op, ast.And)
        result = self._as_bool(node.values[0], self.expr(node.values[0]))
        for operand in node.values[1:]:
            out = self._new_node("prim::If", [result], node)
            first, second = out.add_block(), out.add_block()
            evaluate, short = (first, second) if is_and else (second, first)
            with self.graph.insert_point(evaluate):
                value = self._as_bool(operand, self.expr(operand))
            evaluate.register_output(value)
            with self.graph.insert_point(short):
                const = self.graph.insert_constant(not is_and)
            short.register_output(const)
            result = out.add_output(BoolType())
        return result

    def binop(self, node: ast.AST, left: Value, op: ast.operator, right: Value) -> Value:
        if type(op) not in _BINOPS:
            raise self.error(node, f"unsupported operator {type(op).__name__}")
        kind, text = _BINOPS[type(op)]
        lt, rt = left.type(), right.type()
        if not isinstance(lt, TensorType) and isinstance(rt, TensorType):
            # Python falls back to Tensor.__rOP__: TorchScript does the same.
            if kind in ("aten::add", "aten::mul"):
                return self.call(node, kind, [right, left], {}, text)
            if kind == "aten::sub":
                negated = self.call(node, "aten::neg", [right], {}, text)
                return self.call(node, "aten::add", [negated, left], {}, text)
        return self.call(node, kind, [left, right], {}, text)

    def list_literal(self, node: ast.expr, values: list[Value]) -> Value:
        types = list(dict.fromkeys(v.type() for v in values))
        if len(types) > 1:
            raise self.error(node, f"list elements must have one type, got {', '.join(map(str, types))}")
        elem = types[0] if types else TENSOR
        out = self.graph.create("prim::ListConstruct", values, 0)
        out.add_output(ListType(elem))
        return self.graph.insert_node(out).output()

    def subscript(self, node: ast.Subscript) -> Value:
        if isinstance(node.slice, ast.Slice):
            raise self.error(node, "slicing is not supported")
        value = self.expr(node.value)
        type_ = value.type()
        if isinstance(type_, TupleType):
            index = node.slice
            negative = isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub)
            inner = index.operand if negative else index  # type: ignore[attr-defined]
            if not (isinstance(inner, ast.Constant) and type(inner.value) is int):
                raise self.error(node.slice, "tuples can only be indexed by an integer literal")
            i = -inner.value if negative else inner.value
            if not -len(type_.elems) <= i < len(type_.elems):
                raise self.error(node.slice, f"tuple index {i} out of range for {type_}")
            i %= len(type_.elems)
            out = self.graph.create("prim::TupleIndex", [value, self.graph.insert_constant(i)], 0)
            out.add_output(type_.elems[i])
            return self.graph.insert_node(out).output()
        index = self.expr(node.slice)
        if isinstance(type_, ListType):
            return self.call(node, "aten::__getitem__", [value, index], {}, "[]")
        if isinstance(type_, TensorType):
            return self.call(node, "aten::select", [value, self.graph.insert_constant(0), index], {}, "[]")
        raise self.error(node, f"cannot index a value of type {type_}")

    def call_expr(self, node: ast.Call) -> Value:
        func = node.func
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise self.error(node, "*args and **kwargs in calls are not supported")
        kwargs = {k.arg: self.expr(k.value) for k in node.keywords}
        name = _dotted(func)
        if name and name.startswith("torch.") and "torch" not in self.env:
            op = name.rpartition(".")[2]
            if name not in (f"torch.{op}", f"torch.nn.functional.{op}"):
                raise self.error(node, f"unsupported function {name!r}")
            args = [self.expr(a) for a in node.args]
            return self.call(node, f"aten::{op}", args, kwargs, name)
        if isinstance(func, ast.Name) and func.id in _BUILTINS and func.id not in self.env:
            if len(node.args) != 1 or kwargs:
                raise self.error(node, f"{func.id}() takes exactly one argument")
            return self.call(node, _BUILTINS[func.id], [self.expr(node.args[0])], {}, f"{func.id}()")
        if isinstance(func, ast.Attribute):
            receiver = self.expr(func.value)
            if isinstance(receiver.type(), ListType) and func.attr == "append":
                # xs.append(v) mutates xs in place (TorchScript's aten::append).
                if len(node.args) != 1 or kwargs:
                    raise self.error(node, "append() takes exactly one argument")
                return self.call(node, "aten::append", [receiver, self.expr(node.args[0])], {}, "list.append")
            if not isinstance(receiver.type(), TensorType):
                raise self.error(node, f"unsupported method {func.attr!r} on a value of type {receiver.type()}")
            args = [receiver, *(self.expr(a) for a in node.args)]
            return self.call(node, f"aten::{func.attr}", args, kwargs, f"Tensor.{func.attr}", method=True)
        if isinstance(func, ast.Name) and func.id not in self.env:
            callee = self.globals.get(func.id)
            if isinstance(callee, ScriptFunction) or inspect.isfunction(callee):
                return self.call_function(node, func.id, callee, kwargs)
        raise self.error(node, f"unsupported call of {ast.unparse(func)!r}: only torch functions, "
                         "tensor methods, len/int/float/bool and Python functions are supported")

    def call_function(self, node: ast.Call, name: str, callee: Callable[..., Any],
                      kwargs: dict[str, Value]) -> Value:
        """``name(args...)`` for a Python function: compile it and emit ``prim::CallFunction``."""
        python_fn = callee.fn if isinstance(callee, ScriptFunction) else callee
        if python_fn is self.fn or python_fn in _ACTIVE:
            stack = _ACTIVE or [self.fn]
            chain = " -> ".join([getattr(f, "__name__", "?") for f in stack] + [name])
            raise self.error(node, f"recursive call of {name!r} ({chain}): recursion cannot be compiled")
        # Callees are compiled with the outermost function at the bottom of
        # the stack (nested compilers already stand on it).
        outermost = not _ACTIVE
        if outermost:
            _ACTIVE.append(self.fn)
        try:
            body = _callee_graph(callee)
        finally:
            if outermost:
                _ACTIVE.pop()
                _CALLEES.clear()
        params = [v.debug_name() for v in body.inputs()]
        args = [self.expr(a) for a in node.args]
        if len(args) > len(params):
            raise self.error(node, f"{name}() takes {len(params)} arguments, got {len(args)}")
        for key in kwargs:
            if key not in params[len(args):]:
                raise self.error(node, f"{name}() got an unexpected or repeated argument {key!r}")
        bound = args + [kwargs.get(p) for p in params[len(args):]]
        defaults = _constant_defaults(python_fn)
        for i, (param, value) in enumerate(zip(params, bound, strict=True)):
            if value is None and param in defaults:
                # As TorchScript does, a default becomes a constant at the call site.
                bound[i] = self.graph.insert_constant(defaults[param])
            elif value is None:
                raise self.error(node, f"{name}() is missing argument {param!r}")
        for param, value, formal in zip(params, bound, body.inputs(), strict=True):
            if not value.type().is_subtype_of(formal.type()):
                raise self.error(node, f"{name}() expects {param!r} of type {formal.type()}, got {value.type()}")
        fn_const = self.graph.create("prim::Constant")
        fn_const.output().set_type(FunctionType())
        fn_const.s_("name", name)
        fn_const.g_("Subgraph", body)
        self.graph.insert_node(fn_const)
        call = self.graph.create("prim::CallFunction", [fn_const.output(), *bound], 0)
        for out in body.outputs():
            call.add_output(out.type())
        self.graph.insert_node(call)
        return call.output()

    # -- overload resolution ---------------------------------------------------------
    def call(self, node: ast.AST, kind: str, args: list[Value], kwargs: dict[str, Value],
             what: str, method: bool = False) -> Value:
        for schema in schemas_for(kind):
            bound = self._bind(schema, args, kwargs, method)
            if bound is not None:
                inputs = [self._materialize(item) for item in bound]
                out = self.graph.create(kind, inputs, 0)
                for type_ in return_types(schema, inputs):
                    out.add_output(type_)
                self.graph.insert_node(out)
                if len(schema.returns) != 1:
                    raise self.error(node, f"{what} returns {len(schema.returns)} values; only single results are supported")
                return out.output()
        types = ", ".join(str(a.type()) for a in args)
        extra = (", " + ", ".join(f"{k}={v.type()}" for k, v in kwargs.items())) if kwargs else ""
        if not schemas_for(kind):
            raise self.error(node, f"unsupported operation {what!r} (no operator {kind})")
        raise self.error(node, f"no overload of {kind} ({what}) accepts arguments ({types}{extra})")

    def _bind(self, schema: FunctionSchema, args: list[Value], kwargs: dict[str, Value],
              method: bool) -> list[Any] | None:
        params = schema.arguments
        positional = [p for p in params if not p.kwarg_only]
        items: list[Any] = list(args)
        if len(items) > len(positional):
            # x.view(2, 3): trailing ints packed into the int[] argument, as TorchScript does.
            last = len(positional) - 1
            rest = items[last:]
            if not (method and last >= 1 and _is_int_list(positional[last].type)
                    and all(v.type() == IntType() for v in rest)):
                return None
            items = items[:last] + [("pack", rest)]
        bound: list[Any] = []
        for i, param in enumerate(params):
            if i < len(items) and not param.kwarg_only:
                if param.name in kwargs:
                    return None
                bound.append(items[i])
            elif param.name in kwargs:
                bound.append(kwargs[param.name])
            elif param.default is not NO_DEFAULT:
                default = param.default
                if param.type == FloatType() and type(default) is int:
                    default = float(default)
                bound.append(("const", default))
            else:
                return None
        if set(kwargs) - {p.name for p in params}:
            return None
        # An int where int[] is expected becomes a one-element list.
        for i, (param, item) in enumerate(zip(params, bound, strict=True)):
            if (isinstance(item, Value) and item.type() == IntType() and _is_int_list(param.type)
                    and (param.list_size is not None or (method and i == len(items) - 1))):
                bound[i] = ("pack", [item])
        types = [_type_of_item(item) for item in bound]
        return bound if schema_accepts(schema, types) else None

    def _materialize(self, item: Any) -> Value:
        if isinstance(item, Value):
            return item
        tag, payload = item
        if tag == "const":
            return self.graph.insert_constant(payload)
        out = self.graph.create("prim::ListConstruct", payload, 0)
        out.add_output(ListType(IntType()))
        return self.graph.insert_node(out).output()


_MISSING = object()


def _is_int_list(type_: Type) -> bool:
    if isinstance(type_, OptionalType):
        type_ = type_.elem
    return isinstance(type_, ListType) and type_.elem == IntType()


def _type_of_item(item: Any) -> Type:
    if isinstance(item, Value):
        return item.type()
    tag, payload = item
    if tag == "pack":
        return ListType(IntType())
    return type_of_constant(payload)


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else ""
    return ""
