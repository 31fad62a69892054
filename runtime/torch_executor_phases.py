"""What the steps of PyTorch's own executors are, for JIT logs.

A ``PYTORCH_JIT_LOG_LEVEL`` log names the phases of TorchScript's executors
(``profiling_graph_executor_impl.cpp``, ``graph_executor.cpp``) and a few
passes gradview does not run itself. Each gets a record here with a short
text, written from PyTorch's source; the passes gradview does run keep their
docstrings (:mod:`gradview.runtime.pipeline`), and log names that are another
spelling of one of them are listed in :data:`ALIASES`.
"""

from __future__ import annotations

from gradview.autodiff.differentiate import DIFFERENTIATE
from gradview.autodiff.executor_steps import INLINE_AUTODIFF_SUBGRAPHS
from gradview.ir.passes.registry import INLINE, PassInfo, Phase

__all__ = ["TORCH_EXECUTOR_PHASES", "ALIASES"]

_NOOPT = """The profiling executor's pipeline for a graph it does not optimize.

A graph without tensors to profile (a helper TorchScript compiles for
itself, such as one that returns constants), or any graph while optimization
is off (``torch.jit.optimized_execution(False)``), gets only the passes it
needs to run: LowerGradOf, RemoveExpands, CanonicalizeOps and
EliminateDeadCode. Its plan is the ``NoOpt Graph``."""

_INSENSITIVE = """The profiling executor's first phase: the passes that need no profile.

Run once per executor, before the graph is profiled: inlining, clearing
profiling information and undefinedness, LowerGradOf, RemoveExpands,
CanonicalizeOps, DecomposeOps, constant propagation and pooling, common
subexpression and dead code elimination, the peephole optimizer,
LowerSimpleTuples and CheckInplace. The result is then instrumented with
``prim::profile`` nodes (the ``Profiled Graph``)."""

_PROFILED = """The graph as the profiling executor runs it first: instrumented.

``prim::profile`` nodes after tensor values record, on each of the first
runs (one by default), the dtype, shape, device and requires_grad seen. The
profiling phase reads them to specialize types, decide which values need
gradients and what may be undefined."""

_SENSITIVE = """The profiling executor's second phase, once the graph has been profiled.

The profiled types go onto the values (guarded by type checks), then the
pre-autodiff passes run; when something requires grad, CreateAutodiffSubgraphs
slices the DifferentiableGraphs, each is differentiated and its forward
optimized, groups too small are inlined back and the profiling nodes
removed; then the custom passes and the fuser. The result is the
``Optimized Graph``."""

_PRE_AUTODIFF = """Passes before autodiff, on the profiled graph.

specializeAutogradZero (with the profiled undefinedness of gradients),
LowerSimpleTuples, constant pooling and propagation and the required passes,
so CreateAutodiffSubgraphs sees a simplified graph."""

_OPTIMIZED = """The plan the profiling executor runs from now on.

The graph after the profiling phase: DifferentiableGraphs where autodiff
applies, guards that fall back to an unoptimized path when the inputs no
longer match what was profiled."""

_NOOPT_GRAPH = """The plan of a graph the profiling executor does not optimize.

The graph after ``runNooptPassPipeline``; it runs as it is, with autograd
recording each op."""

_CLEAR_PROFILE = """Forget any profile recorded earlier.

Removes ``prim::profile`` nodes and resets tensor types to plain ``Tensor``,
so the profile taken next starts from nothing."""

_CLEAR_UNDEFINEDNESS = """Forget what was known about undefined tensors.

Tensor types lose their "may be undefined" facts (gradients that were
zero), which the profiling phase measures again."""

_GUARD = """Guard a DifferentiableGraph's inputs.

Its inputs get the profiled types, checked by a ``prim::TypeCheck`` node;
when a later call's inputs differ, the fallback path runs instead of the
specialized forward and backward."""

_SPECIALIZE = """Move the profiled types onto the values.

Each ``prim::profile`` node is removed and the type it recorded (dtype,
shape, requires_grad) written onto the value it watched."""

_UNSPECIALIZE = """Drop profiled tensor types that no guard checks.

Outside the guarded DifferentiableGraphs, the shapes and dtypes written from
the profile are not checked at run time, so they are removed before later
passes can rely on them."""

_CUSTOM = """Passes registered by extensions (``torch::jit::RegisterPass``).

None are registered by default, so the graph usually comes out unchanged."""

_FUSION = """The fuser's turn: groups of element-wise ops compiled into one kernel.

With NNC (the TensorExpr fuser) or nvFuser enabled, fusible ops are grouped
into ``prim::TensorExprGroup`` or ``prim::CudaFusionGroup`` nodes; on CPU
fusion is usually off, so the graph comes out unchanged."""

_DIFF_NODE = """The whole graph as the executor starts optimizing one DifferentiableGraph.

The dumps that follow show that DifferentiableGraph's forward graph
(``forward k``) until its optimization finishes."""

_UNGUARDED = """A DifferentiableGraph that could not be guarded, pasted back.

Some of its inputs were never profiled (no profiling run reached them with a
tensor), so no type check can guard its specialized forward and backward:
PyTorch pastes its nodes back into the graph, where eager autograd records
them op by op."""

_COMPILE_SPEC = """The legacy executor's plan for one ArgumentSpec.

The graph after every phase of ``compileSpec`` (specialization to the
inputs' types, the required and optimization passes, autodiff where needed):
what runs for inputs of these dtypes, ranks and requires_grad flags."""

_PHASE_DOCS: dict[str, str] = {
    "runNooptPassPipeline": _NOOPT,
    "NoOpt Graph": _NOOPT_GRAPH,
    "runProfilingInsensitiveOptimizations": _INSENSITIVE,
    "Profiled Graph": _PROFILED,
    "runProfilingOptimizations": _SENSITIVE,
    "Before runProfilingOptimizations": _SENSITIVE,
    "runPreAutodiffPassPipeline": _PRE_AUTODIFF,
    "Optimized Graph": _OPTIMIZED,
    "ClearProfilingInformation": _CLEAR_PROFILE,
    "ClearUndefinedness": _CLEAR_UNDEFINEDNESS,
    "guardDifferentiableGraph": _GUARD,
    "RemoveProfileNodesAndSpecializeTypes": _SPECIALIZE,
    "RemoveTensorTypeSpecializations": _UNSPECIALIZE,
    "customPrePasses": _CUSTOM,
    "customPostPasses": _CUSTOM,
    "Fusion": _FUSION,
    "compileSpec": _COMPILE_SPEC,
    "Optimizing diff node": _DIFF_NODE,  # "Optimizing diff node 0": pass_doc drops the number
    "Could not guardDifferentiableGraph": _UNGUARDED,  # "... 2 in", likewise
}

TORCH_EXECUTOR_PHASES: tuple[PassInfo, ...] = tuple(
    PassInfo(name, None, Phase.TORCH_EXECUTOR, text=text) for name, text in _PHASE_DOCS.items()
)

# A log's name for a step -> the name gradview's own docs use.
ALIASES: dict[str, str] = {
    "inlining": INLINE.name,
    "Differentiate": DIFFERENTIATE.name,
    "InlineAutodiffSubgraphs and Removing Profiling Nodes": INLINE_AUTODIFF_SUBGRAPHS.name,
}
