"""Open what the user names: a graph, a Python function, a saved trace or a JIT log.

The one loader behind ``gradview view``, ``gradview trace`` and ``gradview
export`` (the viewer imports it from :mod:`gradview.viewer.session`), so every
command shows the same trace of the same target.

``load_target(target, inputs=None)`` returns a :class:`Session`: the pass
trace to step through and, when the target is a graph or a function, the
graph and example inputs so the viewer can run it. A graph goes through the
GraphExecutor as a training step would: a forward run with the
floating-point tensor inputs requiring grad (so the compile phases, the
DifferentiableGraph slicing and ``differentiate`` are recorded), then a
backward run (so the backward graph's own executor is recorded too).

``model.py:build``, a function taking no arguments, builds a PyTorch model:
it returns ``(model, example_inputs)`` or ``(model, example_inputs, how)``,
converted by :func:`gradview.ir.from_torch` (parameters and buffers become
graph inputs; they require grad as in torch, buffers never).

Example inputs come from, in order: the ``inputs`` spec given on the command
line, a builder, a function ``example_inputs()`` (or ``<fn>_example_inputs()``)
in the Python file (NumPy arrays, lists, numbers or torch tensors), or the
complete tensor types of the graph's inputs; ``inputs="none"`` runs no graph
and traces the generic pass pipelines instead (as when no inputs are known).
A spec is a comma-separated list with one entry per graph input, ``[name=]SHAPE[:DTYPE]``
for a tensor (``8x4``, ``16``, ``()`` for a 0-d tensor, ``:f32``/``:f64``/
``:i64``/``:bool``) or a Python number or ``true``/``false``.

An entry may end in ``:nograd`` (``3x4:nograd``, ``w=4:f32:nograd``): that
input does not require grad in the training step. Otherwise which inputs
require grad comes from the file (torch or gradview tensors from
``example_inputs()``: as they say, when one of them requires grad), an
``.ir`` input's ``requires_grad=0``, or else every floating-point tensor does.

``inline_threshold`` sets the executor's InlineAutodiffSubgraphs threshold
(PyTorch's 5 by default; 0 keeps every DifferentiableGraph, so a small
function still shows its backward graph), ``min_group_size`` the smallest
group CreateAutodiffSubgraphs keeps (PyTorch's 2; 1 lets ``x * w`` form one,
beyond PyTorch).

Every failure is a :class:`TargetError` with one line naming the target.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy

from gradview.autodiff import autodiff_mode
from gradview.ir import (
    FromTorchError,
    Graph,
    IRParseError,
    IRVerifyError,
    ScriptError,
    TensorType,
    check_argument_counts,
    check_block_depth,
    from_torch,
    lint,
    parse_ir,
    script,
)
from gradview.runtime import autograd, example_inputs
from gradview.runtime.example_inputs import (
    ExampleInputsTooLarge,
    example_inputs_for,
    example_size_problem,
    random_array,
)
from gradview.runtime.executor import GraphExecutor
from gradview.runtime.interpreter import GraphRuntimeError
from gradview.runtime.pass_trace import PassTrace, TraceFormatError
from gradview.runtime.runnable import CannotRun, cannot_run, describe_cannot_run
from gradview.runtime.tensor import Tensor
from gradview.runtime.trace_types import Note

from .compile_model import CompileError, compile_and_trace, temporary_trace_dir
from .compiled_trace import load_compiled_trace
from .jit_log import load_jit_log
from .torch_trace_log import looks_like_torch_trace

__all__ = [
    "PythonTarget", "Session", "TargetError", "example_inputs_for", "load_python", "load_target",
    "parse_input_spec", "input_spec_requires_grad", "record_training_step", "trace_executor", "trace_pipelines", "NO_INPUTS",
]

NO_INPUTS = "none"  # the --inputs spec that asks for the pipelines, not a run

_DTYPES = {
    "f16": numpy.float16, "half": numpy.float16, "f32": numpy.float32, "float": numpy.float32,
    "f64": numpy.float64, "double": numpy.float64, "i32": numpy.int32, "int": numpy.int64,
    "i64": numpy.int64, "long": numpy.int64, "bool": numpy.bool_,
}


class TargetError(Exception):
    """The target cannot be opened; the message is one line naming it."""


@dataclass
class Session:
    """What the viewer shows: the trace, and the graph with inputs when it can run it."""

    name: str
    trace: PassTrace
    graph: Graph | None = None  # the graph as loaded, before any pass
    inputs: list[Any] | None = None  # example inputs for ``graph``: arrays or Python values
    input_names: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the loader wants the user to know
    # Why the graph cannot run on its inputs (one line naming the node), when running
    # it failed: the trace then holds the steps up to the failure, and r, b, G and
    # the saved values say this instead of running.
    run_error: str | None = None
    # Every node gradview cannot run, with the reason, when the run failed on one.
    cannot_run: tuple[CannotRun, ...] = ()

    @property
    def can_run(self) -> bool:
        """r, b and G: a graph with example inputs, or compiled graphs (a TORCH_TRACE
        log's), which run on inputs made from their annotated types."""
        if self.run_error is not None:
            return False
        if self.graph is not None and self.inputs is not None:
            return True
        return any(Note.COMPILE_ID in step.annotations for step in self.trace.steps)


# -- input specs ------------------------------------------------------------------------
def parse_input_spec(spec: str, graph_inputs: Sequence[Any], seed: int = 0) -> list[Any]:
    """Example inputs from a spec like ``x=8x4,w=4x16:f32,3`` (one entry per graph
    input, in order); an entry for a tensor input is a shape (``16`` is a
    vector of 16), for any other input a Python value."""
    names = [v.debug_name() for v in graph_inputs]
    entries = [e.strip() for e in _split_spec(spec) if e.strip()]
    if len(entries) != len(names):
        raise TargetError(
            f"--inputs gives {len(entries)} values for {len(names)} inputs ({', '.join('%' + n for n in names)})"
        )
    rng = numpy.random.default_rng(seed)
    values = []
    left = example_inputs.MAX_EXAMPLE_BYTES  # read here: the fuzzer lowers it
    for position, (entry, name) in enumerate(zip(entries, names, strict=True)):
        if "=" in entry:
            given, _, entry = entry.partition("=")
            if given.strip().lstrip("%") != name:
                raise TargetError(f"--inputs entry {position + 1} names {given.strip()!r}, but input {position + 1} is %{name}")
        is_tensor = isinstance(graph_inputs[position].type(), TensorType)
        entry, _ = _grad_suffix(entry.strip())
        values.append(_parse_entry(entry, position, rng, is_tensor, left))
        left -= getattr(values[-1], "nbytes", 0)
    return values


def input_spec_requires_grad(spec: str) -> list[bool | None]:
    """Per entry of an input spec, False where it ends in ``:nograd``, else None (the default)."""
    return [_grad_suffix(e.strip())[1] for e in _split_spec(spec) if e.strip()]


_NOGRAD = ":nograd"


def _grad_suffix(entry: str) -> tuple[str, bool | None]:
    """``3x4:nograd`` -> ``("3x4", False)``; an entry without the suffix -> ``(entry, None)``."""
    if entry.lower().endswith(_NOGRAD):
        return entry[: -len(_NOGRAD)].rstrip(), False
    return entry, None


def _split_spec(spec: str) -> list[str]:
    # Commas inside parentheses belong to a shape like (2,3).
    parts, depth, current = [], 0, []
    for ch in spec:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


_SHAPE = re.compile(r"^(\(\s*\)|\(?\s*\d+(\s*[x,]\s*\d+)*\s*,?\s*\)?)(:(\w+))?$")


def _parse_entry(entry: str, position: int, rng: numpy.random.Generator, is_tensor: bool, budget: int) -> Any:
    lowered = entry.lower()
    if not is_tensor:
        if lowered in ("true", "false"):
            return lowered == "true"
        try:
            return int(entry)
        except ValueError:
            pass
        try:
            return float(entry)
        except ValueError:
            raise TargetError(f"--inputs entry {position + 1} ({entry!r}): input {position + 1} is not a tensor; give a number or true/false") from None
    match = _SHAPE.match(entry.replace(" ", ""))
    if match is None:
        raise TargetError(f"--inputs entry {position + 1} ({entry!r}) is not a shape like 8x4[:f32][:nograd] or a number")
    dims = [int(d) for d in re.findall(r"\d+", match.group(1))]
    dtype_name = (match.group(4) or "f64").lower()
    dtype = _DTYPES.get(dtype_name)
    if dtype is None:
        raise TargetError(f"--inputs entry {position + 1}: unknown dtype {dtype_name!r} (use one of {', '.join(_DTYPES)})")
    too_big = example_size_problem(tuple(dims), dtype, budget)
    if too_big is not None:
        raise TargetError(f"--inputs entry {position + 1} ({entry!r}): {too_big}")
    return random_array(rng, tuple(dims), dtype)


# -- tracing ----------------------------------------------------------------------------------
def trace_executor(
    graph: Graph,
    inputs: Sequence[Any],
    requires_grad: Sequence[bool] | None = None,
    autodiff: str | None = None,
    inline_threshold: int | None = None,
    min_group_size: int | None = None,
) -> PassTrace:
    """The trace of one training step of ``graph``: compile and run forward with
    floating-point tensors requiring grad (or those ``requires_grad`` marks),
    then backward from every output that requires grad (with gradients of ones).
    ``autodiff`` is the executor's autodiff mode, ``inline_threshold`` its
    InlineAutodiffSubgraphs threshold and ``min_group_size`` CreateAutodiffSubgraphs'
    (PyTorch's by default)."""
    trace = PassTrace()
    record_training_step(trace, graph, inputs, requires_grad, autodiff, inline_threshold, min_group_size)
    return trace


def record_training_step(
    trace: PassTrace,
    graph: Graph,
    inputs: Sequence[Any],
    requires_grad: Sequence[bool] | None = None,
    autodiff: str | None = None,
    inline_threshold: int | None = None,
    min_group_size: int | None = None,
) -> None:
    """:func:`trace_executor` into ``trace``: when running fails, ``trace`` keeps
    every step recorded up to there (the caller decides whether to show them)."""
    trace.record("Input", graph, changed=False)
    # The executor compiles copies; the trace keeps the ids.
    executor = GraphExecutor(
        graph, trace=trace, autodiff=autodiff, inline_threshold=inline_threshold, min_group_size=min_group_size
    )
    if requires_grad is None:
        requires_grad = [isinstance(v, numpy.ndarray) and numpy.issubdtype(v.dtype, numpy.floating) for v in inputs]
    tensors = [
        Tensor(value, requires_grad=flag) if isinstance(value, numpy.ndarray) else value
        for value, flag in zip(inputs, requires_grad, strict=True)
    ]
    outputs = executor.run(tensors)
    roots = [out for out in _flatten_outputs(outputs) if isinstance(out, Tensor) and out.requires_grad]
    if roots:
        autograd.backward(roots, [Tensor(numpy.ones_like(out.data)) for out in roots])


def trace_pipelines(graph: Graph) -> PassTrace:
    """The trace of the generic pipelines (required, optimization, non-diff) on a
    copy of ``graph``, which the trace shows as the same nodes as ``graph``."""
    from gradview.ir.passes.pipelines import (
        run_nondiff_optimization,
        run_optimization,
        run_required_passes,
    )

    trace = PassTrace()
    trace.record("Input", graph, changed=False)
    copies: dict[Any, Any] = {}
    working = graph.copy(copies)
    trace.inherit_ids(copies)  # an untouched node keeps its id: the first pass is not "+all -all"
    record = trace.pipeline_recorder(working)
    run_required_passes(working, record=record)
    run_optimization(working, record=record)
    run_nondiff_optimization(working, record=record)
    return trace


def _flatten_outputs(values: Sequence[Any]) -> list[Any]:
    flat: list[Any] = []
    for value in values:
        if isinstance(value, list | tuple):
            flat.extend(_flatten_outputs(value))
        else:
            flat.append(value)
    return flat


# -- targets ----------------------------------------------------------------------------------
def load_target(
    target: str,
    inputs: str | None = None,
    seed: int = 0,
    autodiff: str | None = None,
    inline_threshold: int | None = None,
    compile: bool = False,  # the command line's --compile
    min_group_size: int | None = None,
) -> Session:
    """Open ``target``: ``model.ir``, ``model.py:fn``, ``trace.json``, a JIT log file,
    or a TORCH_TRACE log (a file or its directory) of torch.compile's graphs.

    ``autodiff`` ("torch", the default, or "extended") is the executor's autodiff
    mode and ``inline_threshold`` its InlineAutodiffSubgraphs threshold (None:
    PyTorch's) for graphs and functions; traces and logs were recorded with theirs."""
    if autodiff is not None:
        try:
            autodiff_mode(autodiff)
        except ValueError as exc:
            raise TargetError(str(exc)) from None
    if inline_threshold is not None and inline_threshold < 0:
        raise TargetError(f"--inline-threshold must be 0 or more, not {inline_threshold}")
    if min_group_size is not None and min_group_size < 1:
        raise TargetError(f"--min-group-size must be 1 or more, not {min_group_size}")
    if compile:
        return _compile_session(target)
    session = _load(target, inputs, seed, autodiff, inline_threshold, min_group_size)
    if min_group_size is not None and session.graph is None:
        session.notes.append(
            f"--min-group-size {min_group_size} is ignored: {target} is a recorded trace, "
            "which keeps the group size it was recorded with"
        )
    if inputs is not None and session.graph is None:
        session.notes.append(
            f"--inputs is ignored: {target} holds recorded graphs, which run on inputs made from their own types"
        )
    if inline_threshold is not None and session.graph is None:
        session.notes.append(
            f"--inline-threshold {inline_threshold} is ignored: {target} is a recorded trace, "
            "which keeps the threshold it was recorded with"
        )
    elif inline_threshold is not None and session.trace.inline_threshold() is None:
        session.notes.append(
            f"--inline-threshold {inline_threshold} changed nothing: no step of this trace inlines "
            "DifferentiableGraphs (it applies when the executor differentiates a graph or function)"
        )
    return session


# Enough of a file's start to tell what it is: a TORCH_TRACE log's first line
# begins with the path of the torch file that wrote it, which in a virtual
# environment is long (``.venv/lib/python3.11/site-packages/torch/_dynamo/...``).
_SNIFF_BYTES = 4096


def _load(
    target: str, inputs: str | None, seed: int, autodiff: str | None, inline_threshold: int | None,
    min_group_size: int | None = None,
) -> Session:
    lowered = target.lower()
    if ".py:" in lowered and lowered.rpartition(":")[0].endswith(".py"):
        loaded = load_python(target)
        session = _graph_session(
            target, loaded.graph, inputs, loaded.inputs, seed, loaded.requires_grad, autodiff, inline_threshold,
            min_group_size,
        )
        session.trace.module_types.update(loaded.module_types)
        return session
    path = Path(target)
    if path.is_dir():
        return _compiled_session(target)
    if not path.is_file():
        raise TargetError(f"{target}: cannot read: no such file")
    if lowered.endswith(".py"):
        raise TargetError(_needs_a_function(target, path))
    if lowered.endswith(".ir"):
        try:
            graph = parse_ir(path.read_text(encoding="utf-8", errors="surrogateescape"))
            lint(graph)
            check_argument_counts(graph)  # as `gradview check` does
            check_block_depth(graph)
        except IRParseError as exc:
            raise TargetError(f"{target}:{exc.summary}") from None
        except IRVerifyError as exc:
            raise TargetError(f"{target}: invalid graph: {exc}") from None
        return _graph_session(
            target, graph, inputs, None, seed, autodiff=autodiff, inline_threshold=inline_threshold,
            min_group_size=min_group_size,
        )
    try:
        with path.open("rb") as handle:
            start = handle.read(_SNIFF_BYTES).lstrip()
        if start.startswith(b"\x1f\x8b"):
            raise TargetError(f"{target}: a gzip-compressed file: decompress it first (gunzip)")
        if b"\x00" in start:
            raise TargetError(f"{target}: not a text file (a graph, a trace, a JIT log or a TORCH_TRACE log)")
        if start.startswith(b"graph("):
            raise TargetError(f"{target}: looks like an IR file; name it .ir to trace its passes")
        if looks_like_torch_trace(start):
            return _compiled_session(target)
        trace = PassTrace.load(target) if start.startswith(b"{") else load_jit_log(target)
    except TraceFormatError as exc:
        raise TargetError(str(exc).splitlines()[0]) from None
    except OSError as exc:
        raise TargetError(f"{target}: cannot read: {exc.strerror or exc}") from None
    if len(trace) == 0:
        raise TargetError(f"{target}: the file holds no graph steps")
    return Session(target, trace)


def _needs_a_function(target: str, path: Path) -> str:
    """The one line for a Python file named without ``:fn``, with the functions it
    defines (read from its source: nothing is imported or run)."""
    message = f"{target}: a Python file needs a function: {target}:build or {target}:<fn>"
    try:
        tree = ast.parse(path.read_bytes())
    except (SyntaxError, ValueError, OSError):
        return message
    names = [
        node.name for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and not node.name.startswith("_") and not node.name.endswith("example_inputs")
    ]
    if not names:
        return message + " (it defines no function)"
    shown = ", ".join(names[:_FUNCTIONS_SHOWN]) + (", ..." if len(names) > _FUNCTIONS_SHOWN else "")
    return f"{message} (it defines {shown})"


_FUNCTIONS_SHOWN = 8


def _compile_session(target: str) -> Session:
    """``model.py:build --compile``: torch.compile's graphs of the model, from a temporary TORCH_TRACE."""
    lowered = target.lower()
    if not (".py:" in lowered and lowered.rpartition(":")[0].endswith(".py")):
        raise TargetError(f"{target}: --compile takes model.py:build (a function returning a PyTorch model and its inputs)")
    with temporary_trace_dir() as directory:
        try:
            compile_and_trace(target, directory)
        except CompileError as exc:
            raise TargetError(str(exc)) from None
        session = _compiled_session(directory)
    session.name = target
    session.notes.insert(0, "compiled with torch.compile(backend=\"aot_eager\"): one forward and backward under TORCH_TRACE")
    return session


def _compiled_session(target: str) -> Session:
    """A TORCH_TRACE log (a file, or the directory PyTorch wrote): its compiled graphs."""
    try:
        compiled = load_compiled_trace(target)
    except TraceFormatError as exc:
        raise TargetError(str(exc).splitlines()[0]) from None
    except OSError as exc:
        raise TargetError(f"{target}: cannot read: {exc.strerror or exc}") from None
    notes = []
    if compiled.skipped:
        notes.append(
            f"{len(compiled.graphs)} compiled graph{'s' if len(compiled.graphs) != 1 else ''} read; "
            f"{compiled.skipped} log entries that are not AOTAutograd's graphs skipped"
        )
    return Session(target, compiled.trace, notes=notes)


def _graph_session(
    target: str,
    graph: Graph,
    spec: str | None,
    file_inputs: list[Any] | None,
    seed: int,
    requires_grad: list[bool] | None = None,
    autodiff: str | None = None,
    inline_threshold: int | None = None,
    min_group_size: int | None = None,
) -> Session:
    names = [v.debug_name() for v in graph.inputs()]
    notes: list[str] = []
    values = _example_values(target, graph, spec, file_inputs, seed)
    if values is None:
        if spec is None:
            notes.append(
                "no example inputs (pass --inputs, e.g. --inputs 8x4,4x16): showing the passes without running"
            )
        return Session(target, trace_pipelines(graph), graph, None, names, notes)
    if len(values) != len(names):
        raise TargetError(f"{target}: {len(values)} example inputs for {len(names)} graph inputs")
    trace = PassTrace()
    requires_grad = _requires_grad_flags(graph, values, spec, requires_grad)
    try:
        record_training_step(trace, graph, values, requires_grad, autodiff, inline_threshold, min_group_size)
    except (GraphRuntimeError, ValueError, TypeError, RuntimeError, NotImplementedError) as exc:
        # The steps recorded up to the failure still open (r, b, G and saved say why they cannot run).
        error = f"running the graph on the example inputs failed: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
        return _stopped_session(target, graph, trace, values, names, notes, error)
    return Session(target, trace, graph, values, names, notes)


def _example_values(
    target: str, graph: Graph, spec: str | None, file_inputs: list[Any] | None, seed: int
) -> list[Any] | None:
    """The example inputs, or None to run no graph; every failure is one TargetError line."""
    try:
        if spec is not None and spec.strip().lower() == NO_INPUTS:
            return None
        if spec is not None:
            return parse_input_spec(spec, graph.inputs(), seed)
        if file_inputs is not None:
            return list(file_inputs)
        return example_inputs_for(graph, seed)
    except ExampleInputsTooLarge as exc:  # names the input already
        raise TargetError(str(exc)) from None
    except (MemoryError, ValueError, OverflowError) as exc:  # what NumPy says of a shape it cannot make
        raise TargetError(f"{target}: cannot make the example inputs: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None


def _requires_grad_flags(
    graph: Graph, values: Sequence[Any], spec: str | None, given: Sequence[bool] | None
) -> list[bool]:
    """Which inputs require grad in the training step: the spec's ``:nograd``, else
    what the file said (``given``), else the input's declared ``requires_grad=0``,
    else every floating-point tensor (PyTorch's types would say the same)."""
    flags = []
    from_spec = input_spec_requires_grad(spec) if spec is not None else []
    for position, (value, graph_input) in enumerate(zip(values, graph.inputs(), strict=True)):
        flag = isinstance(value, numpy.ndarray) and numpy.issubdtype(value.dtype, numpy.floating)
        if given is not None:
            flag = bool(given[position])
        elif getattr(graph_input.type(), "requires_grad", None) is False:
            flag = False  # an .ir input annotated requires_grad=0 keeps it at specializeTypes
        if position < len(from_spec) and from_spec[position] is False:
            flag = False
        flags.append(flag)
    return flags


def _stopped_session(
    target: str, graph: Graph, trace: PassTrace, values: list[Any], names: list[str], notes: list[str], error: str
) -> Session:
    """A session whose run failed: the executor's steps up to the failure, or, when
    it recorded no pass, the generic pipelines (which need no values)."""
    shown = "the executor's steps up to there"
    if len(trace) <= 1:
        try:
            trace = trace_pipelines(graph)
            shown = "the generic pass pipelines instead, since the executor recorded no pass"
        except Exception:  # a pass that fails here too: the input graph alone still opens
            shown = "the input graph alone, since the passes fail on it too"
    blocked = cannot_run(graph)
    if blocked:
        error = f"{error} ({describe_cannot_run(blocked)})"
    notes.append(f"{error}; showing {shown}")
    return Session(target, trace, graph, values, names, notes, run_error=error, cannot_run=tuple(blocked))


@dataclass
class PythonTarget:
    """What ``model.py:name`` stands for: a graph, with example inputs when the file gives them."""

    graph: Graph
    inputs: list[Any] | None = None
    # Which inputs require grad in the training step; None: every floating-point tensor.
    requires_grad: list[bool] | None = None
    # A PyTorch model's modules: dotted path ("" the model) -> class name (``BasicBlock``).
    module_types: dict[str, str] = field(default_factory=dict)


def load_python(spec: str) -> PythonTarget:
    """``model.py:name``: import the file and make a graph of ``name``.

    A function that takes arguments is compiled with :func:`gradview.ir.script`;
    its example inputs come from ``name_example_inputs()`` or ``example_inputs()``
    in the file (NumPy arrays, lists, numbers, or torch tensors). A function
    that takes none is a builder: ``build()`` returns ``(model, example_inputs)``
    or ``(model, example_inputs, how)`` with a torch module or function, torch
    tensors, and ``how`` ``"trace"`` (the default) or ``"script"``; PyTorch
    compiles the model and :func:`gradview.ir.from_torch` lifts its parameters
    and buffers to graph inputs.
    """
    path, _, name = spec.rpartition(":")
    module = _import_file(path)
    fn = getattr(module, name, None)
    if not callable(fn):
        raise TargetError(f"{path}: no function named {name!r}")
    if _takes_no_arguments(fn):
        return _build(spec, fn)
    try:
        graph = script(fn).graph
    except ScriptError as exc:
        raise TargetError(str(exc)) from None
    maker = getattr(module, f"{name}_example_inputs", None) or getattr(module, "example_inputs", None)
    inputs = None
    if callable(maker):
        try:
            made = maker()
        except Exception as exc:
            raise TargetError(f"{path}: example_inputs() failed: {type(exc).__name__}: {exc}") from None
        if not isinstance(made, list | tuple):
            raise TargetError(
                f"{path}: {maker.__name__}() must return a list of inputs (arrays, numbers, tensors), "
                f"not {type(made).__name__}"
            )
        inputs = [_as_value(v) for v in made]
        return PythonTarget(graph, inputs, _tensor_flags(made, inputs))
    return PythonTarget(graph, inputs)


def _tensor_flags(made: Sequence[Any], inputs: Sequence[Any]) -> list[bool] | None:
    """Which example inputs require grad, when the file's tensors say: as torch's (or
    gradview's) ``requires_grad`` once one of them requires grad; None (every
    floating-point tensor) when none does, as a plain ``torch.randn`` says nothing."""
    said = [getattr(value, "requires_grad", None) for value in made]
    if not any(flag is True for flag in said):
        return None
    return [
        bool(flag) if flag is not None
        else isinstance(value, numpy.ndarray) and numpy.issubdtype(value.dtype, numpy.floating)
        for flag, value in zip(said, inputs, strict=True)
    ]


def _import_file(path: str) -> Any:
    if not Path(path).is_file():
        raise TargetError(f"{path}: cannot read: no such file")
    module_name = "_gradview_model_" + Path(path).stem.replace("-", "_")
    loader = importlib.util.spec_from_file_location(module_name, path)
    if loader is None or loader.loader is None:
        raise TargetError(f"{path}: cannot import as a Python module")
    module = importlib.util.module_from_spec(loader)
    try:
        loader.loader.exec_module(module)
    except Exception as exc:  # the user's module failed: one line
        raise TargetError(f"{path}: import failed: {type(exc).__name__}: {exc}") from None
    return module


def _takes_no_arguments(fn: Any) -> bool:
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters)


def _build(spec: str, fn: Any) -> PythonTarget:
    """Call the builder and convert what it returns with :func:`from_torch`."""
    name = spec.rpartition(":")[2]
    try:
        built = fn()
    except Exception as exc:  # the user's builder failed: one line
        raise TargetError(f"{spec}: {name}() failed: {type(exc).__name__}: {exc}") from None
    if not isinstance(built, tuple) or len(built) not in (2, 3):
        raise TargetError(f"{spec}: {name}() must return (model, example_inputs) or (model, example_inputs, how)")
    model, examples, how = built if len(built) == 3 else (*built, "trace")
    try:
        graph, inputs = from_torch(model, examples, how=how)
    except (FromTorchError, ImportError, ValueError) as exc:
        raise TargetError(f"{spec}: {str(exc).splitlines()[0]}") from None
    # The example inputs require grad when floating-point (so the view shows their
    # gradients); parameters and buffers as torch has them (buffers never).
    count = len(examples) if isinstance(examples, list | tuple) else 1
    flags = []
    for position, (value, graph_input) in enumerate(zip(inputs, graph.inputs(), strict=True)):
        floating = isinstance(value, numpy.ndarray) and numpy.issubdtype(value.dtype, numpy.floating)
        declared = getattr(graph_input.type(), "requires_grad", None)
        flags.append(floating if position < count or declared is None else floating and declared)
    named = getattr(model, "named_modules", None)
    module_types = {path: type(module).__name__ for path, module in named()} if callable(named) else {}
    return PythonTarget(graph, inputs, flags, module_types)


def _as_value(value: Any) -> Any:
    """An example input as the runtime takes it: lists and torch tensors become NumPy arrays."""
    if isinstance(value, list):
        return numpy.asarray(value)
    if hasattr(value, "detach") and hasattr(value, "numpy"):  # a torch or gradview tensor; torch is not imported here
        detached = value.detach()
        return numpy.array((detached.cpu() if hasattr(detached, "cpu") else detached).numpy(), copy=True)
    return value
