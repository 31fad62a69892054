"""GraphExecutor: specialize, optimize, differentiate and run a graph, as
TorchScript's GraphExecutor does.

``run(inputs)`` computes an ArgumentSpec of the inputs and looks up a plan
compiled for it; the first call with a new spec runs ``compile_spec``, the
seeds' pipeline, in order:

    Inline, LowerGradOf, specializeAutogradZero, LowerSimpleTuples,
    ConstantPooling, runRequiredPasses, ConstantPropagation,
    PropagateInputShapes, PropagateRequiresGrad, runOptimization,
    then, if the graph needs gradients: CreateAutodiffSubgraphs, and for each
    DifferentiableGraph: differentiate, PropagateInputShapes(f),
    runOptimization(f), runNondiffOptimization(f), packGradient;
    InlineAutodiffSubgraphs; otherwise runNondiffOptimization;
    and a final EliminateDeadCode.

The steps are records of the pipeline table (``PIPELINE_TABLE`` in gradview.runtime),
run in the order ``PRE_AUTODIFF_STEPS`` and ``FORWARD_GRAPH_STEPS`` say.

Every step is reported to an optional trace, a
:class:`~gradview.runtime.trace_types.Recorder` (``trace.record(name, graph,
which=GraphName..., changed=..., seconds=..., annotations=...)``), which is how
the viewer replays the compilation.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy

from gradview.autodiff import (
    DEFAULT_INLINE_THRESHOLD,
    AutodiffMode,
    Gradient,
    autodiff_mode,
    differentiate,
)
from gradview.autodiff.executor_steps import (
    CREATE_AUTODIFF_SUBGRAPHS,
    INLINE_AUTODIFF_SUBGRAPHS,
    SPECIALIZE_AUTOGRAD_ZERO,
)
from gradview.ir import Graph, ListType, Node, OptionalType, TensorType, TupleType
from gradview.ir.passes import propagate_requires_grad, run_required_passes
from gradview.ir.passes.pipelines import (
    RUN_NONDIFF_OPTIMIZATION,
    RUN_OPTIMIZATION,
    RUN_REQUIRED_PASSES,
)
from gradview.ir.passes.registry import (
    CONSTANT_POOLING,
    CONSTANT_PROPAGATION,
    ELIMINATE_DEAD_CODE,
    INLINE,
    LOWER_GRAD_OF,
    LOWER_SIMPLE_TUPLES,
    PROPAGATE_INPUT_SHAPES,
    PROPAGATE_REQUIRES_GRAD,
    PassInfo,
    Phase,
)
from gradview.ir.types import AnyType, TypeVar
from gradview.kernels.backend import get_backend

from .argument_spec import ArgumentSpec, SpecKey, specialize_types
from .autograd.grad_mode import is_grad_enabled
from .device_copy import to_backend
from .differentiable_graph_op import DifferentiableGraphOp, TensorRegistry
from .eager_ops import eager_op_for, inplace_op_for, passes_values_through
from .interpreter import STRUCTURAL_HANDLERS, CompiledGraph, compile_graph
from .tensor import Tensor
from .trace_types import MAIN_GRAPH, GraphName, Recorder

__all__ = [
    "AUTODIFF_SUBGRAPH_NODE_THRESHOLD", "AUTODIFF_SUBGRAPH_INLINE_THRESHOLD", "ExecutionPlan", "GraphExecutor", "GraphExecutorState", "pack_gradient",
    "SPECIALIZE_TYPES", "PACK_GRADIENT", "PRE_AUTODIFF_STEPS", "FORWARD_GRAPH_STEPS", "EXECUTOR_STEPS",
]

# TorchScript's defaults: a DifferentiableGraph needs at least two nodes, and
# after differentiation groups smaller than five are inlined back.
AUTODIFF_SUBGRAPH_NODE_THRESHOLD = 2
AUTODIFF_SUBGRAPH_INLINE_THRESHOLD = DEFAULT_INLINE_THRESHOLD


@dataclass
class ExecutionPlan:
    """An optimized graph for one ArgumentSpec, compiled to run (torch's
    ExecutionPlan: ``graph`` and ``code``)."""

    graph: Graph
    code: CompiledGraph
    spec: ArgumentSpec | None
    gradients: list[Gradient] = field(default_factory=list)
    ops: list[Any] = field(default_factory=list)
    # Some node writes in place: runs track which memory backward nodes saved.
    writes_in_place: bool = False

    def grad_executor_states(self) -> list[GraphExecutorState]:
        """The states of the backward executors of this plan's DifferentiableGraphs,
        in node order (torch's ``Code.grad_executor_states()``)."""
        return [op.backward_executor.debug_state() for op in self.ops if isinstance(op, DifferentiableGraphOp)]


@dataclass
class GraphExecutorState:
    """What ``GraphExecutor.debug_state()`` returns, as torch's GraphExecutorState:
    the executor's graph, its plans by ArgumentSpec, and the fallback plan
    (whose graph is None until an ``optimize=False`` run compiles it)."""

    graph: Graph
    execution_plans: dict[ArgumentSpec, ExecutionPlan]
    fallback: ExecutionPlan


class _Steps:
    """Times each compile step and reports it to the trace, if any."""

    def __init__(self, trace: Recorder | None, graph_of: Callable[[], Graph], which: GraphName) -> None:
        self.trace = trace
        self.graph_of = graph_of
        self.which = which

    def run(
        self,
        name: str,
        step: Callable[[], Any],
        which: GraphName | None = None,
        graph: Graph | None = None,
        noted: bool = False,
    ) -> Any:
        """Run ``step`` and record it. ``noted``: the step returns ``(result,
        notes)``, notes being the pass's annotation dataclass, which the trace
        records with the step; ``result`` is returned."""
        start = time.perf_counter()
        result = step()
        notes = None
        if noted:
            result, notes = result
        if self.trace is not None:
            self.trace.record(
                name, graph if graph is not None else self.graph_of(), which=which or self.which,
                changed=bool(result) if isinstance(result, bool) else True,
                seconds=time.perf_counter() - start, annotations=notes,
            )
        return result

    def run_pass(self, info: PassInfo, graph: Graph, *args: Any, which: GraphName | None = None, **kwargs: Any) -> Any:
        """Run the step ``info`` on ``graph`` and record it (with the pass's notes
        when tracing); a pipeline records each of its passes instead."""
        run: Callable[..., Any] = info.run  # type: ignore[assignment]
        if info.phase is Phase.PIPELINE:
            return run(graph, *args, record=self.recorder(graph, which), **kwargs)
        if self.trace is not None and info.noted is not None:
            noted = info.noted
            return self.run(info.name, lambda: noted(graph, *args, **kwargs), which, graph, noted=True)
        return self.run(info.name, lambda: run(graph, *args, **kwargs), which, graph)

    def run_all(self, steps: tuple[PassInfo, ...], graph: Graph, which: GraphName | None = None) -> None:
        """Run each step of ``steps`` on ``graph`` in order, whatever the earlier ones returned."""
        for info in steps:
            self.run_pass(info, graph, which=which)

    def recorder(self, graph: Graph, which: GraphName | None = None) -> Callable[[str, bool], None] | None:
        """A ``record(name, changed)`` callback for the pipelines' inner passes."""
        if self.trace is None:
            return None
        which = which or self.which
        last = [time.perf_counter()]

        def record(name: str, changed: bool) -> None:
            now = time.perf_counter()
            self.trace.record(name, graph, which=which, changed=changed, seconds=now - last[0])
            last[0] = now

        return record


def _may_hold_tensor(type_: Any) -> bool:
    """Whether a value of this type can be (or hold) a tensor that requires grad."""
    return type_.contains_tensor() or isinstance(type_, AnyType | TypeVar)


def needs_gradient(graph: Graph, grad_enabled: bool = True) -> bool:
    """TorchScript's needsGradient: grad mode is on and some input requires grad.

    As TorchScript's ``Type::requires_grad``, a tensor whose requires_grad is
    unknown counts as requiring it, and a container counts when a tensor it
    holds does: the elements of a ``Tensor[]`` input are not specialized, so
    such a graph is always differentiated (the DifferentiableGraphs record
    nothing at run time when no element requires grad).
    """
    if not grad_enabled:
        return False
    return any(_may_require_grad(v.type()) for v in graph.inputs())


def _may_require_grad(type_: Any) -> bool:
    if isinstance(type_, TensorType):
        return type_.requires_grad_or_true and not type_.undefined
    if isinstance(type_, ListType | OptionalType):
        return _may_require_grad(type_.elem)
    if isinstance(type_, TupleType):
        return any(_may_require_grad(t) for t in type_.elems)
    return False


def _gradient_of(node: Node) -> Gradient:
    """The Gradient packGradient stored on a DifferentiableGraph node."""
    return Gradient(
        f=node.g("Subgraph"),
        df=node.g("ReverseSubgraph"),
        f_real_outputs=node.i("f_real_outputs"),
        df_input_vjps=node.is_("df_input_vjps"),
        df_input_captured_inputs=node.is_("df_input_captured_inputs"),
        df_input_captured_outputs=node.is_("df_input_captured_outputs"),
        df_output_vjps=node.is_("df_output_vjps"),
    )


def pack_gradient(gradient: Gradient, node: Node) -> None:
    """Store a Gradient on its DifferentiableGraph node, as packGradient does.

    The node's ``Subgraph`` becomes the forward graph f and ``ReverseSubgraph``
    the backward graph df, and the Gradient's index lists become integer
    attributes, so at run time the node alone says how to run f, what to keep
    for df, and where df's gradients go.
    """
    assert gradient.df is not None
    node.g_("Subgraph", gradient.f)
    node.g_("ReverseSubgraph", gradient.df)
    node.i_("f_real_outputs", gradient.f_real_outputs)
    node.is__("df_input_vjps", gradient.df_input_vjps)
    node.is__("df_input_captured_inputs", gradient.df_input_captured_inputs)
    node.is__("df_input_captured_outputs", gradient.df_input_captured_outputs)
    node.is__("df_output_vjps", gradient.df_output_vjps)


# The executor's own steps, and the order compileSpec runs the table's steps in.
SPECIALIZE_TYPES = PassInfo("specializeTypes", specialize_types, Phase.EXECUTOR)
PACK_GRADIENT = PassInfo("packGradient", pack_gradient, Phase.EXECUTOR)
# After specializeTypes, on the graph being compiled.
PRE_AUTODIFF_STEPS: tuple[PassInfo, ...] = (
    INLINE, LOWER_GRAD_OF, SPECIALIZE_AUTOGRAD_ZERO, LOWER_SIMPLE_TUPLES, CONSTANT_POOLING, RUN_REQUIRED_PASSES,
    CONSTANT_PROPAGATION, PROPAGATE_INPUT_SHAPES, PROPAGATE_REQUIRES_GRAD, RUN_OPTIMIZATION,
)
# On each DifferentiableGraph's forward graph f, once differentiate made it.
FORWARD_GRAPH_STEPS: tuple[PassInfo, ...] = (PROPAGATE_INPUT_SHAPES, RUN_OPTIMIZATION, RUN_NONDIFF_OPTIMIZATION)
# Every step of the executor's own (the autodiff passes' records live in gradview.autodiff).
EXECUTOR_STEPS: tuple[PassInfo, ...] = (SPECIALIZE_TYPES, PACK_GRADIENT)


class _MovedTensor:
    """A Tensor whose host array was moved onto the device at ``run``'s edge:
    the device copy stands for the Tensor in this run."""

    __slots__ = ("array", "tensor")

    def __init__(self, tensor: Tensor, array: Any) -> None:
        self.tensor = tensor
        self.array = array

    @property
    def data(self) -> Any:  # what the ArgumentSpec reads
        return self.array

    @property
    def requires_grad(self) -> bool:
        return self.tensor.requires_grad


def _register(registry: TensorRegistry, value: Any) -> Any:
    """The array that runs for ``value``, registered as standing for its Tensor."""
    if isinstance(value, Tensor):
        registry.add(value)
        return value.data
    if isinstance(value, _MovedTensor):
        registry.alias(value.array, value.tensor)
        return value.array
    return value


def _unwrap(value: Any) -> Any:
    """A Tensor's array; lists and tuples of them element by element."""
    if isinstance(value, Tensor):
        return value.data
    if isinstance(value, list | tuple):
        return type(value)(_unwrap(item) for item in value)
    return value


class GraphExecutor:
    """Runs ``graph`` through a cache of plans specialized on the inputs' ArgumentSpec."""

    def __init__(
        self,
        graph: Graph,
        optimize: bool = True,
        trace: Recorder | None = None,
        autodiff_subgraph_inlining: bool = True,
        backend: str = "numpy",
        which: GraphName | None = None,
        autodiff: AutodiffMode | str | None = None,
        inline_threshold: int | None = None,
        min_group_size: int | None = None,
    ) -> None:
        if not isinstance(graph, Graph):
            hint = " (parse_ir(text) makes one from IR text)" if isinstance(graph, str | bytes) else ""
            raise TypeError(f"GraphExecutor expects a gradview.ir.Graph{hint}, but got {type(graph).__name__}")
        for name, number in (("inline_threshold", inline_threshold), ("min_group_size", min_group_size)):
            if number is not None and (not isinstance(number, int) or isinstance(number, bool)):
                raise TypeError(f"GraphExecutor's {name} expects an int or None, but got {type(number).__name__}")
        self.graph = graph
        # Which ops CreateAutodiffSubgraphs and differentiate take: PyTorch's
        # (the default) or gradview's extended set.
        self.autodiff = autodiff_mode(autodiff)
        self.which = MAIN_GRAPH if which is None else which
        self.optimize = optimize
        self.trace = trace
        self.autodiff_subgraph_inlining = autodiff_subgraph_inlining
        # InlineAutodiffSubgraphs' threshold; None: PyTorch's (5, or 1 with
        # inlining off). 0 keeps every DifferentiableGraph, however small.
        if inline_threshold is not None and inline_threshold < 0:
            raise ValueError(f"inline threshold must be 0 or more, not {inline_threshold}")
        self.inline_threshold = inline_threshold
        # CreateAutodiffSubgraphs' minimum group size; None: PyTorch's (2, or 1
        # with inlining off). 1 lets a single op (``x * w``) form a group.
        if min_group_size is not None and min_group_size < 1:
            raise ValueError(f"minimum group size must be 1 or more, not {min_group_size}")
        self.min_group_size = min_group_size
        self.backend = backend
        self._backend = get_backend(backend)
        self._xp = self._backend.xp
        self.plan_cache: dict[ArgumentSpec, ExecutionPlan] = {}
        self._spec_key = SpecKey(graph)
        self._plan_by_key: dict[tuple[Any, ...], ExecutionPlan] = {}
        # Which inputs may be lists holding Tensors (Tensor[], Any): only those are
        # searched for Tensors on every run (an int[] input is not).
        self._list_may_hold_tensors = [_may_hold_tensor(v.type()) for v in graph.inputs()]
        self.fallback: ExecutionPlan | None = None
        self.cache_hits = 0
        self.cache_misses = 0
        self._last: ExecutionPlan | None = None

    # -- running --------------------------------------------------------------
    def run(self, inputs: Sequence[Any], grad_enabled: bool | None = None) -> list[Any]:
        """Run on Tensors or Python values; tensor outputs come back as Tensors,
        connected to autograd when they require grad.

        This is the user's edge: host arrays handed in (bare, in lists, or as a
        Tensor's data) move onto the backend here; the Tensors that come out keep
        the backend's arrays (``Tensor.numpy()`` brings them to the host).
        """
        if self._xp is not numpy:
            grad_enabled = is_grad_enabled() if grad_enabled is None else grad_enabled
            inputs = [self._onto_device(value, grad_enabled) for value in inputs]
        return self.run_on_device(inputs, grad_enabled)

    def _onto_device(self, value: Any, grad_enabled: bool) -> Any:
        if isinstance(value, Tensor):
            if isinstance(value.data, numpy.ndarray):
                if value.requires_grad and grad_enabled:
                    # A recorded copy, as torch's x.to("cuda"): gradients go back to the host leaf.
                    return to_backend(value, self._backend)
                return _MovedTensor(value, self._backend.to_device(value.data))  # the Tensor stays the edge
            return value
        if isinstance(value, list | tuple):
            return type(value)(self._onto_device(item, grad_enabled) for item in value)
        return self._backend.to_device(value)

    def run_on_device(self, inputs: Sequence[Any], grad_enabled: bool | None = None) -> list[Any]:
        """``run`` on values already on the backend (the runtime's own calls: a
        backward graph run by DifferentiableGraphBackward); nothing is moved."""
        grad_enabled = is_grad_enabled() if grad_enabled is None else grad_enabled
        plan = self.plan_for(inputs, grad_enabled)
        self._last = plan
        registry: TensorRegistry | None = None
        arrays = list(inputs)
        lists = self._list_may_hold_tensors
        for index, value in enumerate(arrays):
            if type(value) is Tensor:  # the common case, first: a Tensor stands for its array
                if registry is None:
                    registry = TensorRegistry(plan.writes_in_place, self._xp)
                data = value._data
                registry._by_id[id(data)] = (value, data)
                arrays[index] = data
            elif isinstance(value, Tensor | _MovedTensor):
                if registry is None:
                    registry = TensorRegistry(plan.writes_in_place, self._xp)
                arrays[index] = _register(registry, value)
            elif (
                isinstance(value, list)
                and (index >= len(lists) or lists[index])
                and any(isinstance(v, Tensor | _MovedTensor) for v in value)
            ):
                # A Tensor[] input: its elements keep their autograd identity.
                if registry is None:
                    registry = TensorRegistry(plan.writes_in_place, self._xp)
                arrays[index] = [_register(registry, item) for item in value]
        if not plan.ops or not grad_enabled:  # nothing hooks into autograd (a backward graph, say)
            return [self._as_tensor(value, registry) for value in plan.code.call_on_device(*arrays)]
        if registry is None:
            registry = TensorRegistry(plan.writes_in_place, self._xp)
        for op in plan.ops:
            op.registry = registry
        try:
            outputs = plan.code.call_on_device(*arrays)
        finally:
            for op in plan.ops:
                op.registry = None
        return [self._as_tensor(value, registry) for value in outputs]

    def run_arrays(self, inputs: Sequence[Any], grad_enabled: bool = False) -> list[Any]:
        """The runtime's raw call (DifferentiableGraphBackward without create_graph):
        ``inputs`` are the backend's arrays and plain values, never Tensors, and the
        plan's outputs come back as they are, not wrapped in Tensors (NumPy scalars
        included). A plan that records autograd runs through ``run_on_device``."""
        plan = self.plan_for(inputs, grad_enabled)
        if plan.ops and grad_enabled:
            return [_unwrap(value) for value in self.run_on_device(inputs, grad_enabled)]
        self._last = plan
        return plan.code.call_on_device(*inputs)

    @staticmethod
    def _as_tensor(value: Any, registry: TensorRegistry | None) -> Any:
        if type(value) is numpy.ndarray:  # the common case, first
            found = registry.tensor_of(value) if registry is not None else None
            return found if found is not None else Tensor(value)
        if isinstance(value, list | tuple):  # tensors in a returned list or tuple keep their history
            return type(value)(GraphExecutor._as_tensor(item, registry) for item in value)
        if not (hasattr(value, "shape") and hasattr(value, "dtype")):
            return value
        if registry is None:
            return Tensor(value)
        found = registry.tensor_of(value)
        return found if found is not None else Tensor(value)

    def plan_for(self, inputs: Sequence[Any], grad_enabled: bool = True) -> ExecutionPlan:
        if not self.optimize:
            return self.get_or_compile_fallback()
        key = self._spec_key.of(inputs, grad_enabled)
        plan = self._plan_by_key.get(key)
        if plan is not None:
            self.cache_hits += 1
            return plan
        spec = ArgumentSpec.of(self.graph, inputs, grad_enabled)
        plan = self.plan_cache.get(spec)
        if plan is not None:  # a new key for a known spec (another array type, say)
            self.cache_hits += 1
        else:
            self.cache_misses += 1
            plan = self.compile_spec(spec)
            self.plan_cache[spec] = plan
        self._plan_by_key[key] = plan
        return plan

    @property
    def effective_inline_threshold(self) -> int:
        """The threshold InlineAutodiffSubgraphs runs with: the one given, else PyTorch's."""
        if self.inline_threshold is not None:
            return self.inline_threshold
        return AUTODIFF_SUBGRAPH_INLINE_THRESHOLD if self.autodiff_subgraph_inlining else 1

    @property
    def effective_min_group_size(self) -> int:
        """The group size CreateAutodiffSubgraphs keeps: the one given, else PyTorch's."""
        if self.min_group_size is not None:
            return self.min_group_size
        return AUTODIFF_SUBGRAPH_NODE_THRESHOLD if self.autodiff_subgraph_inlining else 1

    def get_or_compile_fallback(self) -> ExecutionPlan:
        """The unoptimized plan: only the passes every graph needs before running.

        As torch's fallback plan, it still records eager autograd: every node
        that may produce a tensor runs through its own singleton
        DifferentiableGraph (or refuses its backward naming the node), and
        records a backward node when one of its inputs requires grad.
        """
        if self.fallback is None:
            graph = self.graph.copy()
            run_required_passes(graph)
            ops: list[Any] = []
            writes_in_place = [False]

            def node_op(node: Node) -> Any:
                if (
                    node.kind() in STRUCTURAL_HANDLERS
                    or passes_values_through(node)
                    or not any(_may_hold_tensor(v.type()) for v in node.outputs())
                ):
                    return None
                op: Any = inplace_op_for(node, self.backend, True, self.autodiff_subgraph_inlining)
                if op is not None:
                    writes_in_place[0] = True
                else:
                    op = eager_op_for(node, self.backend, self.autodiff_subgraph_inlining)
                ops.append(op)
                return op

            code = compile_graph(graph, self.backend, node_ops=node_op)
            self.fallback = ExecutionPlan(graph, code, None, ops=ops, writes_in_place=writes_in_place[0])
        return self.fallback

    # -- compiling --------------------------------------------------------------
    def compile_spec(self, spec: ArgumentSpec) -> ExecutionPlan:
        copies: dict[Any, Any] = {}
        graph = self.graph.copy(copies)
        if self.trace is not None:
            self.trace.inherit_ids(copies)  # the trace shows the working copy as the same nodes
        steps = _Steps(self.trace, lambda: graph, self.which)
        steps.run_pass(SPECIALIZE_TYPES, graph, spec)
        steps.run_all(PRE_AUTODIFF_STEPS, graph)
        gradients: list[Gradient] = []
        dg_number: dict[Node, int] = {}  # DifferentiableGraph node -> k, as GraphName.forward(k) names it
        if needs_gradient(graph, spec.grad_enabled):
            diff_nodes = steps.run_pass(
                CREATE_AUTODIFF_SUBGRAPHS, graph, self.effective_min_group_size, mode=self.autodiff
            )
            dg_number.update((node, k) for k, node in enumerate(diff_nodes))
            for index, node in enumerate(diff_nodes):
                gradient = self._differentiate_node(node, index, steps)
                gradients.append(gradient)
            steps.run_pass(INLINE_AUTODIFF_SUBGRAPHS, graph, self.effective_inline_threshold)
        else:
            steps.run_pass(RUN_NONDIFF_OPTIMIZATION, graph)
        steps.run_pass(ELIMINATE_DEAD_CODE, graph)
        if gradients:
            # Nodes pasted back from a group too small to keep still carry f's
            # requires_grad=0 types; the eager fallback below reads these types
            # to decide which nodes run with autograd, so bring them up to date.
            propagate_requires_grad(graph)
        ops: list[Any] = []
        writes_in_place = [False]

        def node_op(node: Node) -> Any:
            if node.kind() == "prim::DifferentiableGraph" and node.has_attribute("ReverseSubgraph"):
                # Its df's executor is traced under the same k as f and df.
                k = dg_number.get(node, len(ops))
                # The inlining switch reaches df's executor, as TorchScript's global one does.
                op = DifferentiableGraphOp(
                    _gradient_of(node), self.backend, trace=self.trace, which=GraphName.backward_executor(k),
                    autodiff_subgraph_inlining=self.autodiff_subgraph_inlining, nested=True,
                    inline_threshold=self.inline_threshold, min_group_size=self.min_group_size,
                )
                ops.append(op)
                return op
            with_autograd = (
                node.kind() not in STRUCTURAL_HANDLERS
                and any(v.requires_grad() for v in node.outputs())
                and not passes_values_through(node)
            )
            if gradients_needed:
                # An in-place write must tell the backward nodes that saved the memory.
                inplace = inplace_op_for(node, self.backend, with_autograd, self.autodiff_subgraph_inlining)
                if inplace is not None:
                    ops.append(inplace)
                    writes_in_place[0] = True
                    return inplace
            if gradients_needed and with_autograd:
                # Outside every DifferentiableGraph (a loop body, a group inlined
                # back, an op PyTorch leaves to autograd): run it with autograd,
                # as TorchScript's eager fallback does; without a gradient, its
                # backward raises naming the node.
                eager = eager_op_for(node, self.backend, self.autodiff_subgraph_inlining)
                ops.append(eager)
                return eager
            return None

        gradients_needed = needs_gradient(self.graph_for_spec(spec), spec.grad_enabled)

        # No input check at run time: the plan is only run on inputs whose
        # ArgumentSpec key (dtype and rank of every tensor) matched, which is
        # all the check would test of them.
        code = compile_graph(graph, self.backend, check_inputs=False, node_ops=node_op)
        return ExecutionPlan(graph, code, spec, gradients, ops, writes_in_place=writes_in_place[0])

    def _differentiate_node(self, node: Node, index: int, steps: _Steps) -> Gradient:
        forward = GraphName.forward(index)
        record = self.trace.autodiff_recorder(index) if self.trace is not None else None
        gradient = differentiate(node.g("Subgraph"), record, mode=self.autodiff)
        steps.run_all(FORWARD_GRAPH_STEPS, gradient.f, forward)
        steps.run(PACK_GRADIENT.name, lambda: pack_gradient(gradient, node))
        return gradient

    def graph_for_spec(self, spec: ArgumentSpec) -> Graph:
        """The graph's inputs typed as ``spec`` says (for needsGradient)."""
        typed = self.graph.copy()
        specialize_types(typed, spec)
        return typed

    # -- introspection ------------------------------------------------------------
    def last_executed_optimized_graph(self) -> Graph | None:
        return self._last.graph if self._last is not None else None

    def graph_for(self, inputs: Sequence[Any], grad_enabled: bool | None = None) -> Graph:
        """The optimized graph of the plan these inputs run (compiled if new, not
        run), as TorchScript's ``GraphExecutor::graphFor`` and, for a function
        with one plan, ``ScriptFunction.graph_for``: each DifferentiableGraph
        node's ``Subgraph`` is its forward graph f."""
        grad_enabled = is_grad_enabled() if grad_enabled is None else grad_enabled
        return self.plan_for(inputs, grad_enabled).graph

    def debug_state(self) -> GraphExecutorState:
        """Every cached plan by its ArgumentSpec, and the fallback plan, shaped as
        torch's ``GraphExecutorState`` (``get_debug_state()``)."""
        # Before a fallback is compiled torch shows an empty plan (graph None).
        fallback = self.fallback if self.fallback is not None else ExecutionPlan(None, None, None)  # type: ignore[arg-type]
        return GraphExecutorState(self.graph, dict(self.plan_cache), fallback)

    get_debug_state = debug_state  # torch's name on a ScriptFunction
