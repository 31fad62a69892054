"""Run graphs: compile once into straight-line Python, then call it many times.

``compile_graph`` turns a graph into the source of one Python function: each
value becomes a local variable (a register), each node one line that calls a
kernel bound at compile time, ``prim::If`` an ``if`` and ``prim::Loop`` a
``while`` (CPython compiles those to jumps). Nothing is looked up per node
at run time, so the overhead per node is a function call. Values are deleted
after their last use, as TorchScript's interpreter frees registers.

When a kernel fails, the error names the node by its printed line and lists
the shapes of its inputs, read from the failing frame's registers.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy

from gradview.ir import Graph, Node, TensorType, Value, node_summary
from gradview.ir.attributes import AttributeKind, TensorConstant
from gradview.ir.constants import constant_value, missing_tensor_data
from gradview.ir.passes.op_eval import kernel_key, node_kernel
from gradview.ir.python_op import python_function_name
from gradview.kernels import Backend, get_backend
from gradview.kernels.dtypes import to_dtype
from gradview.kernels.protocol import GUARD_FLOAT, GUARD_SAME_NUMERIC, UNKNOWN_DTYPE
from gradview.ops import fast_path_for, refusal_for

from .autograd.grad_mode import is_grad_enabled
from .buffer_reuse import BufferReuse
from .prims import STRUCTURAL_PRIMS, check_types
from .tensor import Tensor

__all__ = ["CompiledGraph", "compile_graph", "run_graph", "GraphRuntimeError", "GraphCompileError"]

_COUNTER = itertools.count()
# ``node_ops(node)`` may return a callable that runs the node instead of the
# interpreter (it gets the node's inputs and returns a sequence of outputs).
NodeOps = Callable[[Node], Callable[..., Sequence[Any]] | None]
# Generated code's file name -> its compiled graph, to map a failing frame
# back to a node (subgraphs run in frames of their own).
_LIVE: weakref.WeakValueDictionary[str, CompiledGraph] = weakref.WeakValueDictionary()


class GraphCompileError(ValueError):
    """The graph cannot be run (unknown op, missing function body); names the node."""


class GraphRuntimeError(RuntimeError):
    """A node failed while running; the message names the node and its input shapes."""

    def __init__(self, message: str, node: Node | None = None) -> None:
        super().__init__(message)
        self.node = node


class CompiledGraph:
    """A graph compiled for one backend. Call it with positional inputs."""

    def __init__(
        self, graph: Graph, backend: Backend, check_inputs: bool = True, node_ops: NodeOps | None = None
    ) -> None:
        self.graph = graph
        self.backend = backend
        self.check_inputs = check_inputs
        self.filename = f"<gradview graph {next(_COUNTER)}>"
        # The version of every graph compiled into this one (subgraphs are graphs
        # of their own), read before compiling: any edit since makes it stale.
        self.versions: list[tuple[Graph, int]] = [(graph, graph.version)]
        writer = _CodeWriter(graph, backend, self.filename, node_ops)
        self.source = writer.generate()
        for sub in writer.subgraphs:
            self.versions.extend(sub.versions)
        self.line_nodes = writer.line_nodes
        self.fast_path_kernels = writer.fast_path_kernels
        self.register_names = writer.names
        namespace = writer.namespace
        try:
            code = compile(self.source, self.filename, "exec")
        except (SyntaxError, RecursionError, MemoryError) as exc:
            raise GraphCompileError(f"the graph is too deeply nested to compile ({exc})") from None
        exec(code, namespace)  # our own generated code
        self._fn = namespace["graph_fn"]
        self.input_types = [v.type() for v in graph.inputs()]
        self._check = _InputCheck(graph)
        _LIVE[self.filename] = self

    def is_current(self) -> bool:
        """Whether no graph compiled into this function was edited since (O(subgraphs))."""
        return all(graph.version == version for graph, version in self.versions)

    def __call__(self, *inputs: Any) -> list[Any]:
        """The user's edge: host inputs are moved onto the backend, results come back to the host."""
        if self.backend.name != "numpy":
            inputs = tuple(self.backend.to_device(v) for v in inputs)
        return self.backend.results_to_host(self._run(inputs))

    def call_on_device(self, *inputs: Any) -> list[Any]:
        """Run on inputs already on the backend; results stay the backend's arrays.

        This is the call used inside the runtime (a DifferentiableGraph's
        forward, the backward graph): arrays cross between host and device only
        at the user's edge (``__call__``, ``run_graph``, ``GraphExecutor.run``).
        """
        return list(self._run(inputs))

    def call_nested(self, *inputs: Any) -> list[Any]:
        """``call_on_device`` from a node of another compiled graph while that graph
        runs (a DifferentiableGraph's forward in the executor's plan): the outer run
        has set NumPy's error state and, if anything fails, names the innermost
        graph's node from the traceback, so neither is done again here."""
        return list(self._fn(*inputs))

    def _run(self, inputs: Sequence[Any]) -> Sequence[Any]:
        if len(inputs) != len(self.input_types):
            names = ", ".join("%" + v.debug_name() for v in self.graph.inputs())
            raise GraphRuntimeError(
                f"the graph takes {len(self.input_types)} inputs ({names}), got {len(inputs)}"
            )
        if self.check_inputs:
            self._check(inputs)
        try:
            # PyTorch computes log(0) = -inf and 0/0 = nan without a word;
            # NumPy would warn: keep quiet like PyTorch.
            with numpy.errstate(all="ignore"):
                return self._fn(*inputs)
        except GraphRuntimeError:
            raise
        except Exception as exc:  # re-raised with the node named
            raise self._explain(exc) from exc

    def _explain(self, exc: Exception) -> GraphRuntimeError:
        """Name the innermost node of any gradview graph that was running."""
        failing: tuple[CompiledGraph, Node, dict[str, Any]] | None = None
        tb = exc.__traceback__
        while tb is not None:
            compiled = _LIVE.get(tb.tb_frame.f_code.co_filename)
            node = compiled.line_nodes.get(tb.tb_lineno) if compiled is not None else None
            if compiled is not None and node is not None:
                failing = (compiled, node, tb.tb_frame.f_locals)
            tb = tb.tb_next
        detail = str(exc) or type(exc).__name__
        if failing is None:
            return GraphRuntimeError(f"running the graph failed: {type(exc).__name__}: {detail}")
        compiled, node, registers = failing
        held = [registers.get(compiled.register_names.get(value, ""), _MISSING) for value in node.inputs()]
        shapes = [f"%{value.debug_name()}: {_describe(h)}" for value, h in zip(node.inputs(), held, strict=True)]
        detail = compiled._kernel_message(node, held) or detail
        return GraphRuntimeError(
            f"{node_summary(node)}: {detail} (inputs: {', '.join(shapes) or 'none'})", node
        )


    def _kernel_message(self, node: Node, held: list[Any]) -> str | None:
        """A fast path failed inside NumPy: the general kernel explains it better."""
        kernel = self.fast_path_kernels.get(node)
        if kernel is None or any(h is _MISSING for h in held):
            return None
        try:
            kernel(self.backend.xp, *held)
        except Exception as exc:  # we only want its message
            return str(exc) or None
        return None


_MISSING = object()
_FLOAT_DTYPES = frozenset(numpy.dtype(t) for t in (numpy.float16, numpy.float32, numpy.float64))
_NUMERIC_DTYPES = _FLOAT_DTYPES | frozenset(
    numpy.dtype(t) for t in (numpy.int8, numpy.int16, numpy.int32, numpy.int64, numpy.uint8)
)


def _describe(value: Any) -> str:
    if value is _MISSING:
        return "?"
    if value is None:
        return "undefined"
    shape = getattr(value, "shape", None)
    if shape is not None:
        return f"{getattr(value, 'dtype', '?')}{list(shape)}"
    if isinstance(value, list | tuple):
        return type(value).__name__ + "[" + ", ".join(_describe(v) for v in value[:4]) + ("...]" if len(value) > 4 else "]")
    return type(value).__name__


class _InputCheck:
    """What each graph input's type promises, worked out once at compile time:
    (index, value, expected shape or None, expected rank or None, dtype or None)."""

    def __init__(self, graph: Graph) -> None:
        self.rules: list[tuple[int, Value, tuple[int, ...] | None, int | None, Any]] = []
        for index, value in enumerate(graph.inputs()):
            expected = value.type()
            if not isinstance(expected, TensorType):
                continue
            sizes = expected.sizes
            shape = tuple(sizes) if sizes is not None and None not in sizes else None  # type: ignore[arg-type]
            rank = len(sizes) if sizes is not None else None
            dtype = to_dtype(expected.scalar_type) if expected.scalar_type is not None else None
            self.rules.append((index, value, shape, rank, dtype))

    def __call__(self, inputs: Sequence[Any]) -> None:
        for index, value, shape, rank, dtype in self.rules:
            given = inputs[index]
            if given is None:
                continue
            try:
                given_shape, given_dtype = given.shape, given.dtype
            except AttributeError:
                raise GraphRuntimeError(
                    f"{_where(index, value)} must be an array (the graph types it {value.type()}), "
                    f"got {type(given).__name__}"
                ) from None
            if shape is not None and given_shape != shape:
                raise GraphRuntimeError(
                    f"{_where(index, value)} has shape {list(given_shape)} but the graph expects "
                    f"{list(shape)} ({value.type()})"
                )
            if shape is None and rank is not None and len(given_shape) != rank:
                raise GraphRuntimeError(
                    f"{_where(index, value)} has rank {len(given_shape)} but the graph expects {value.type()}"
                )
            if dtype is not None and given_dtype != dtype:
                raise GraphRuntimeError(
                    f"{_where(index, value)} has dtype {given_dtype} but the graph expects "
                    f"{value.type().scalar_type}"  # type: ignore[attr-defined]
                )


def _where(index: int, value: Value) -> str:
    return f"input {index} (%{value.debug_name()})"


class _CodeWriter:
    """Generates the Python source of one graph (and of its subgraphs, recursively)."""

    def __init__(self, graph: Graph, backend: Backend, filename: str, node_ops: NodeOps | None = None) -> None:
        self.node_ops = node_ops
        self.graph = graph
        self.backend = backend
        self.filename = filename
        self.lines: list[str] = []
        self.line_nodes: dict[int, Node] = {}
        self.fast_path_kernels: dict[Node, Any] = {}
        self.names: dict[Value, str] = {}
        self.namespace: dict[str, Any] = {"xp": backend.xp, "__builtins__": __builtins__}
        self.last_use = _last_uses(graph)
        self.reuse = BufferReuse()
        self.array_type: str | None = None
        self.constants = 0
        self.subgraphs: list[CompiledGraph] = []

    # -- names ---------------------------------------------------------------
    def name(self, value: Value) -> str:
        name = self.names.get(value)
        if name is None:
            name = f"v{len(self.names)}"
            self.names[value] = name
        return name

    def global_(self, prefix: str, obj: Any) -> str:
        name = f"{prefix}{self.constants}"
        self.constants += 1
        self.namespace[name] = obj
        return name

    def fresh_local(self) -> str:
        name = f"t{self.constants}"
        self.constants += 1
        return name

    def emit(self, indent: int, text: str, node: Node | None = None) -> None:
        self.lines.append("    " * indent + text)
        if node is not None:
            self.line_nodes[len(self.lines)] = node

    # -- generation ----------------------------------------------------------
    def generate(self) -> str:
        params = ", ".join(self.name(v) for v in self.graph.inputs())
        self.emit(0, f"def graph_fn({params}):")
        self.block(self.graph.block, 1)
        outs = ", ".join(self.name(v) for v in self.graph.outputs())
        self.emit(1, f"return ({outs}{',' if len(self.graph.outputs()) == 1 else ''})")
        return "\n".join(self.lines) + "\n"

    def block(self, block: Any, indent: int) -> None:
        start = len(self.lines)
        for node in block.nodes():
            self.node(node, indent)
            dead = self.last_use.get(node)
            if dead:
                self.emit(indent, "del " + ", ".join(self.name(v) for v in dead))
        if len(self.lines) == start:
            self.emit(indent, "pass")

    def node(self, node: Node, indent: int) -> None:
        kind = node.kind()
        if self.node_ops is not None:
            op = self.node_ops(node)
            if op is not None:
                # The caller runs this node itself (the executor's DifferentiableGraphOp).
                call = f"{self.global_('op', op)}({', '.join(self.name(v) for v in node.inputs())})"
                outputs = node.outputs()
                if outputs:
                    self.emit(indent, f"{', '.join(self.name(v) for v in outputs)}, = {call}", node)
                else:
                    self.emit(indent, call, node)
                return
        handler = STRUCTURAL_HANDLERS.get(kind)
        if handler is not None:
            handler(self, node, indent)
            return
        if kind in STRUCTURAL_PRIMS:
            python_name = python_function_name(node)
            reason = STRUCTURAL_PRIMS[kind] if python_name is None else (
                f"it calls the Python function {python_name}, which only PyTorch can run"
            )
            raise GraphCompileError(f"cannot run `{node_summary(node)}`: {reason}")
        key = kernel_key(node)
        if key is None:
            types = ", ".join(str(v.type()) for v in node.inputs())
            raise GraphCompileError(
                f"no overload of {node.kind()} accepts {len(node.inputs())} inputs ({types}): `{node_summary(node)}`"
            )
        kernel = node_kernel(node)
        if kernel is None:
            refusal = refusal_for(key)
            if refusal is not None:
                raise GraphCompileError(f"gradview does not run {key}: {refusal}: `{node_summary(node)}`")
            raise GraphCompileError(f"unknown operator {key} (gradview has no kernel for it): `{node_summary(node)}`")
        fn = self.global_("k", kernel)
        args = ["xp"] + [self.name(v) for v in node.inputs()] + self.omitted_defaults(node)
        fast = self.fast_path(node)
        if fast is not None and not node.attribute_names():
            call, positions, *guard = fast
            inputs = node.inputs()
            direct = self.direct_call(node, call, positions, guarded=bool(guard))
            if guard:
                # Types left the dtype open: check it at run time, else the kernel.
                test = self.guard_test(guard[0], [self.name(inputs[i]) for i in positions])
                direct = f"{direct} if {test} else {fn}({', '.join(args)})"
            self.emit(indent, f"{self.targets(node)} = {direct}", node)
            self.fast_path_kernels[node] = kernel
            return
        # Prims with attributes (prim::ConstantChunk[chunks=2, dim=0]) get
        # them as keyword arguments named like the attributes.
        for attr in node.attribute_names():
            args.append(f"{attr}={self.global_('a', node.attribute(attr))}")
        self.emit(indent, f"{self.targets(node)} = {fn}({', '.join(args)})", node)

    def direct_call(self, node: Node, call: Any, positions: tuple[int, ...], guarded: bool) -> str:
        """``f(a, b)``, or ``f(a, b, out=a)`` guarded at run time when ``a`` dies
        here and owns its buffer (see buffer_reuse.py). A call behind a dtype
        guard may fall back to a kernel that passes an input through, so it
        neither makes an owned buffer nor counts as a pure reader."""
        inputs = node.inputs()
        names = [self.name(inputs[i]) for i in positions]
        fn = self.global_("f", call)
        inline = getattr(call, "inline", None)
        if inline is not None:  # an expression in place of the call (see kernels/protocol.py)
            return "(" + inline.format(*names, fn=fn) + ")"
        plain = f"{fn}({', '.join(names)})"
        xp = self.backend.xp
        # A product returns a new array as a ufunc does (``fresh_result``: a wrapper saying so).
        is_matmul = call is xp.matmul or getattr(call, "fresh_result", False)
        elementwise = (
            not is_matmul and getattr(call, "nout", None) == 1 and getattr(call, "signature", None) is None
        )
        if not (elementwise or is_matmul):
            return plain
        reuse = None
        if elementwise and all(isinstance(inputs[i].type(), TensorType) for i in positions):
            reuse = self.reuse.reusable_input(node, positions)
        if not guarded:
            self.reuse.record_direct_call(node)
        if reuse is None:
            return plain
        target = self.name(inputs[reuse])
        # NumPy computes a one-element result faster into a fresh array than
        # into ``out=`` (measured: 0.9 against 2.3 us); from 256 elements on,
        # writing into the dying buffer wins. Known one-element tensors never
        # reuse; tensors of unknown size check at run time.
        numel = _known_numel(inputs[reuse])
        if numel is not None and numel <= 1:
            return plain
        if self.array_type is None:
            self.array_type = self.global_("nd", xp.ndarray)
        array = self.array_type
        test = [f"{target}.__class__ is {array}"]
        if numel is None:
            test.append(f"{target}.size > 1")
        for i in positions:
            other = self.name(inputs[i])
            if other != target:  # broadcasting must not grow the result past the target
                test.append(
                    f"({target}.shape == {other}.shape or {other}.ndim <= {target}.ndim"
                    f" and {target}.shape[{target}.ndim - {other}.ndim:] == {other}.shape)"
                )
        return f"({fn}({', '.join(names)}, out={target}) if {' and '.join(test)} else {plain})"

    def guard_test(self, guard: str, names: list[str]) -> str:
        if guard == GUARD_SAME_NUMERIC:
            numeric = self.global_("dt", _NUMERIC_DTYPES)
            first, second = names
            return f"{first}.dtype is {second}.dtype and {first}.dtype in {numeric}"
        if guard == GUARD_FLOAT:
            floats = self.global_("dt", _FLOAT_DTYPES)
            return f"{names[0]}.dtype in {floats}"
        raise GraphCompileError(f"unknown fast-path guard {guard!r}")

    def omitted_defaults(self, node: Node) -> list[str]:
        """Default values of trailing schema arguments the node leaves out."""
        schema = node.maybe_schema()
        if schema is None or len(node.inputs()) >= len(schema.arguments):
            return []
        return [self.global_("d", arg.default) for arg in schema.arguments[len(node.inputs()):]]

    def fast_path(self, node: Node) -> tuple[Any, tuple[int, ...]] | None:
        """A direct call the kernel allows for this node's static dtypes and constants."""
        key = kernel_key(node)
        rule = fast_path_for(key) if key is not None else None
        if rule is None:
            return None
        dtypes = [
            (v.type().scalar_type or UNKNOWN_DTYPE) if isinstance(v.type(), TensorType) else None
            for v in node.inputs()
        ]
        constants = [constant_value(v) for v in node.inputs()]
        schema = node.maybe_schema()
        if schema is not None:
            for arg in schema.arguments[len(constants):]:
                dtypes.append(None)
                constants.append(arg.default)
        return rule(self.backend.xp, key, dtypes, constants)

    def targets(self, node: Node) -> str:
        outs = node.outputs()
        if not outs:
            return "_"
        if len(outs) == 1:
            return self.name(outs[0])
        return ", ".join(self.name(v) for v in outs)

    def assign(self, indent: int, targets: list[Value], sources: list[str]) -> None:
        if targets:
            left = ", ".join(self.name(v) for v in targets)
            self.emit(indent, f"{left} = {', '.join(sources)}{',' if len(sources) == 1 and len(targets) > 1 else ''}")


def _last_uses(graph: Graph) -> dict[Node, list[Value]]:
    """For each node, the values of its block whose last use it is (freed after it).

    A use inside a nested block counts as a use by the enclosing node of the
    value's own block, so values used in a loop body live until the loop ends.
    Block outputs are never freed by the block that returns them.
    """
    result: dict[Node, list[Value]] = {}
    for block in _all_blocks(graph):
        returned = set(block.outputs())
        # Block parameters are never freed: a loop writes its body's
        # parameters (counter, carried values) on every iteration.
        start = [] if block.owning_node is not None else [block.param_node]
        for node in [*start, *block.nodes()]:
            for value in node.outputs():
                if value in returned:
                    continue
                last: Node | None = None
                for use in value.uses:
                    user = use.user
                    while user.owning_block is not block and user.owning_block is not None:
                        user = user.owning_block.owning_node  # type: ignore[assignment]
                    if user.owning_block is not block or user is block.return_node:
                        last = None
                        break
                    if last is None or user.topo_position > last.topo_position:
                        last = user
                if last is not None:
                    result.setdefault(last, []).append(value)
    return result


def _all_blocks(graph: Graph) -> list[Any]:
    blocks = [graph.block]
    for node in graph.all_nodes():
        blocks.extend(node.blocks())
    return blocks


# -- structural prims ------------------------------------------------------------
def _constant(writer: _CodeWriter, node: Node, indent: int) -> None:
    out = writer.name(node.output())
    if node.output().type().__class__.__name__ == "NamedType" and str(node.output().type()) == "Function":
        writer.emit(indent, f"{out} = None  # a Function constant", node)
        return
    kind = node.attribute_kind("value") if "value" in node.attribute_names() else None
    if kind is AttributeKind.t or kind is AttributeKind.ts:
        # Tensors come from the text's data or from data attached by a frontend.
        missing = missing_tensor_data(node)
        if missing is not None:
            raise GraphCompileError(
                f"cannot run `{node_summary(node)}`: {missing}; load the model with "
                "gradview.ir.from_torch, or attach the value (gradview.ir.constants.attach_tensor_data)"
            )
        raw = node.attribute("value")
        if kind is AttributeKind.ts:
            arrays = [_tensor_constant(writer.backend, t) for t in raw]
            writer.emit(indent, f"{out} = list({writer.global_('c', tuple(arrays))})", node)
            return
        writer.emit(indent, f"{out} = {writer.global_('c', _tensor_constant(writer.backend, raw))}", node)
        return
    value = constant_value(node.output())
    if isinstance(value, bool | int | str) or value is None or isinstance(value, float) and value == value and abs(value) != float("inf"):
        writer.emit(indent, f"{out} = {value!r}", node)
    elif isinstance(value, list) and all(isinstance(v, bool | int | float | str) for v in value):
        # A fresh list each run: list ops may mutate it.
        writer.emit(indent, f"{out} = list({writer.global_('c', tuple(value))})", node)
    else:
        writer.emit(indent, f"{out} = {writer.global_('c', value)}", node)


def _known_numel(value: Value) -> int | None:
    """The element count a tensor's type fixes, or None when a size is unknown."""
    found = value.type()
    if not isinstance(found, TensorType) or found.sizes is None or any(s is None for s in found.sizes):
        return None
    count = 1
    for size in found.sizes:
        count *= size
    return count


def _tensor_constant(backend: Backend, value: TensorConstant) -> Any:
    xp = backend.xp
    if value.values is None:  # data attached by a frontend (attach_tensor_data): uploaded once, here
        return backend.to_device(value.data)
    return xp.asarray(value.values, dtype=to_dtype(value.scalar_type)).reshape(value.sizes)


def _if(writer: _CodeWriter, node: Node, indent: int) -> None:
    then_block, else_block = node.blocks()
    writer.emit(indent, f"if {writer.name(node.input())}:", node)
    writer.block(then_block, indent + 1)
    writer.assign(indent + 1, node.outputs(), [writer.name(v) for v in then_block.outputs()])
    writer.emit(indent, "else:")
    writer.block(else_block, indent + 1)
    writer.assign(indent + 1, node.outputs(), [writer.name(v) for v in else_block.outputs()])


def _loop(writer: _CodeWriter, node: Node, indent: int) -> None:
    trip, cond, *initial = node.inputs()
    (body,) = node.blocks()
    counter, *carried = body.inputs()
    cond_var = writer.fresh_local()
    trip_var = writer.fresh_local()
    writer.emit(indent, f"{trip_var} = {writer.name(trip)}", node)
    writer.emit(indent, f"{writer.name(counter)} = 0")
    writer.assign(indent, carried, [writer.name(v) for v in initial])
    writer.emit(indent, f"{cond_var} = {writer.name(cond)}")
    writer.emit(indent, f"while {cond_var} and {writer.name(counter)} < {trip_var}:")
    writer.block(body, indent + 1)
    results = body.outputs()
    writer.emit(
        indent + 1,
        f"{', '.join([cond_var] + [writer.name(v) for v in carried])} = "
        f"{', '.join(writer.name(v) for v in results)}{',' if len(results) == 1 else ''}",
    )
    writer.emit(indent + 1, f"{writer.name(counter)} += 1")
    writer.assign(indent, node.outputs(), [writer.name(v) for v in carried])


def _grad_of(writer: _CodeWriter, node: Node, indent: int) -> None:
    (block,) = node.blocks()
    inputs = node.inputs()
    test = " or ".join(f"{writer.name(v)} is not None" for v in inputs) or "False"
    writer.emit(indent, f"if {test}:", node)
    writer.block(block, indent + 1)
    writer.assign(indent + 1, node.outputs(), [writer.name(v) for v in block.outputs()])
    writer.emit(indent, "else:")
    writer.assign(indent + 1, node.outputs(), ["None"] * len(node.outputs()))
    if not node.outputs():
        writer.emit(indent + 1, "pass")


def _tuple_construct(writer: _CodeWriter, node: Node, indent: int) -> None:
    items = [writer.name(v) for v in node.inputs()]
    writer.emit(indent, f"{writer.name(node.output())} = ({', '.join(items)}{',' if len(items) == 1 else ''})", node)


def _list_construct(writer: _CodeWriter, node: Node, indent: int) -> None:
    items = [writer.name(v) for v in node.inputs()]
    writer.emit(indent, f"{writer.name(node.output())} = [{', '.join(items)}]", node)


def _unpack(writer: _CodeWriter, node: Node, indent: int) -> None:
    outs = node.outputs()
    source = writer.name(node.input())
    if not outs:
        writer.emit(indent, "pass", node)
    elif len(outs) == 1:
        writer.emit(indent, f"({writer.name(outs[0])},) = {source}", node)
    else:
        writer.emit(indent, f"{', '.join(writer.name(v) for v in outs)} = {source}", node)


def _tuple_index(writer: _CodeWriter, node: Node, indent: int) -> None:
    source, index = node.inputs()
    writer.emit(indent, f"{writer.name(node.output())} = {writer.name(source)}[{writer.name(index)}]", node)


def _identity(writer: _CodeWriter, node: Node, indent: int) -> None:
    writer.assign(indent, node.outputs(), [writer.name(v) for v in node.inputs()][: len(node.outputs())])
    if writer.line_nodes.get(len(writer.lines)) is None and node.outputs():
        writer.line_nodes[len(writer.lines)] = node


def _is_grad_enabled(writer: _CodeWriter, node: Node, indent: int) -> None:
    """``torch.is_grad_enabled()`` asks the running program's grad mode, which
    no kernel knows: it is read from the runtime when the line runs."""
    writer.emit(indent, f"{writer.name(node.output())} = {writer.global_('grad_mode', is_grad_enabled)}()", node)


def _autograd_zero(writer: _CodeWriter, node: Node, indent: int) -> None:
    writer.emit(indent, f"{writer.name(node.output())} = None", node)


def _subgraph_call(writer: _CodeWriter, node: Node, indent: int) -> None:
    sub = CompiledGraph(node.g("Subgraph"), writer.backend, check_inputs=False)
    writer.subgraphs.append(sub)
    fn = writer.global_("g", sub._fn)
    args = ", ".join(writer.name(v) for v in node.inputs())
    n_out = len(node.outputs())
    if n_out == 0:
        writer.emit(indent, f"{fn}({args})", node)
    else:
        targets = ", ".join(writer.name(v) for v in node.outputs())
        writer.emit(indent, f"{targets}{',' if n_out == 1 else ''} = {fn}({args})[:{n_out}]", node)


def _type_check(writer: _CodeWriter, node: Node, indent: int) -> None:
    types = node.tys("types")
    fn = writer.global_("t", lambda *values: check_types(types, values))
    args = ", ".join(writer.name(v) for v in node.inputs())
    outs = node.outputs()
    inputs = [writer.name(v) for v in node.inputs()]
    writer.assign(indent, outs[:-1], inputs)
    writer.emit(indent, f"{writer.name(outs[-1])} = {fn}({args})", node)


def _raise(writer: _CodeWriter, node: Node, indent: int) -> None:
    message = writer.name(node.inputs()[0]) if node.inputs() else "'exception'"
    fn = writer.global_("r", _raise_exception)
    writer.emit(indent, f"{fn}({message})", node)


def _raise_exception(message: Any) -> None:
    raise GraphRuntimeError(f"the graph raised an exception: {message}")


STRUCTURAL_HANDLERS = {
    "prim::Constant": _constant,
    "prim::If": _if,
    "prim::Loop": _loop,
    "prim::GradOf": _grad_of,
    "prim::TupleConstruct": _tuple_construct,
    "prim::ListConstruct": _list_construct,
    "prim::TupleUnpack": _unpack,
    "prim::ListUnpack": _unpack,
    "prim::TupleIndex": _tuple_index,
    "prim::unchecked_cast": _identity,
    "prim::profile": _identity,
    "prim::profile_ivalue": _identity,
    "prim::AutogradZero": _autograd_zero,
    "aten::is_grad_enabled": _is_grad_enabled,
    "prim::DifferentiableGraph": _subgraph_call,
    "prim::FallbackGraph": _subgraph_call,
    "prim::RequiresGradCheck": _type_check,
    "prim::TypeCheck": _type_check,
    "prim::RaiseException": _raise,
}


def compile_graph(
    graph: Graph, backend: str | Backend = "numpy", check_inputs: bool = True, node_ops: NodeOps | None = None
) -> CompiledGraph:
    """Compile ``graph`` once for ``backend``; call the result with the inputs."""
    chosen = backend if isinstance(backend, Backend) else get_backend(backend)
    return CompiledGraph(graph, chosen, check_inputs, node_ops)


def run_graph(graph: Graph, inputs: Sequence[Any], backend: str | Backend = "numpy") -> list[Any]:
    """Run ``graph`` on positional ``inputs`` and return its outputs as a list.

    Tensors are arrays (NumPy; CuPy inputs are accepted with ``backend="cupy"``,
    and NumPy inputs are moved to the GPU and results back) or gradview Tensors
    that do not require grad (their arrays run; one that requires grad is refused
    by name, since nothing here records gradients), scalars and lists
    are Python values, ``None`` is an undefined tensor or a None optional.

    The compiled function is kept on the graph (``graph.derived``) and reused
    while the graph is unchanged: every edit bumps ``graph.version``, and a
    changed version (of the graph or of a subgraph compiled into it) recompiles.
    So calling ``run_graph`` in a loop costs what ``compile_graph`` once costs.
    """
    chosen = backend if isinstance(backend, Backend) else get_backend(backend)
    key = (_RUN_GRAPH_KEY, chosen)
    compiled = graph.derived.get(key)
    if compiled is None or not compiled.is_current():
        compiled = CompiledGraph(graph, chosen)
        graph.derived[key] = compiled
    return compiled(*[_array_of(value, position) for position, value in enumerate(inputs)])


def _array_of(value: Any, position: int) -> Any:
    """A gradview Tensor stands for its array; one that requires grad is refused by
    name (run_graph records no gradient, so taking its array would lose it)."""
    if isinstance(value, Tensor):
        if value.requires_grad:
            raise TypeError(
                f"run_graph input {position} is a gradview Tensor that requires grad, and run_graph records no "
                "gradient: run it with GraphExecutor(graph).run(inputs) for autograd, or pass tensor.data"
            )
        return value.data
    if isinstance(value, list | tuple) and any(isinstance(item, Tensor | list | tuple) for item in value):
        return type(value)(_array_of(item, position) for item in value)
    return value


# Names run_graph's entries in ``Graph.derived`` (one compiled function per backend).
_RUN_GRAPH_KEY = "gradview.runtime.run_graph"
