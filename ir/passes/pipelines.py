"""The pass pipelines of TorchScript's graph executor, in the seeds' order.

``run_required_passes`` must run before a graph can be executed;
``run_optimization`` is the generic clean-up run on every graph (and on each
differentiable subgraph's forward and backward graph); ``run_nondiff_optimization``
runs the rewrites that would confuse autodiff, so only after it.
Each returns True if any pass changed the graph, and accepts an optional
``record(name, changed)`` callback so a tracer can observe every step. The
steps are data: tuples of the passes' records that ``_run_steps`` runs in order.
"""

from __future__ import annotations

from collections.abc import Callable

from ..graph import Graph
from .registry import (
    BATCH_MM,
    CANONICALIZE_OPS,
    CHECK_INPLACE,
    CONSTANT_POOLING,
    CONSTANT_PROPAGATION,
    DECOMPOSE_OPS,
    ELIMINATE_COMMON_SUBEXPRESSION,
    ELIMINATE_DEAD_CODE,
    LOWER_SIMPLE_TUPLES,
    PEEPHOLE_OPTIMIZE,
    REMOVE_EXPANDS,
    REMOVE_LIST_MUTATION,
    UNROLL_CONSTANT_LOOPS,
    UNROLL_LOOPS,
    PassInfo,
    Phase,
)

__all__ = [
    "run_required_passes", "run_optimization", "run_nondiff_optimization", "Recorder", "PIPELINES",
    "REQUIRED_PASSES", "OPTIMIZATION_PASSES", "AFTER_UNROLLING_PASSES", "CLOSING_OPTIMIZATION_PASSES",
    "NONDIFF_PASSES", "RUN_REQUIRED_PASSES", "RUN_OPTIMIZATION", "RUN_NONDIFF_OPTIMIZATION",
]

Recorder = Callable[[str, bool], None]
# A pipeline step is the pass's record (registry.py): the name a recorder sees, and the pass.
Steps = tuple[PassInfo, ...]

REQUIRED_PASSES: Steps = (REMOVE_EXPANDS, CANONICALIZE_OPS, ELIMINATE_DEAD_CODE)
# run_optimization: these, then one loop-unrolling pass (the steps after
# unrolling only when it changed something), then the closing steps.
OPTIMIZATION_PASSES: Steps = (
    ELIMINATE_DEAD_CODE, ELIMINATE_COMMON_SUBEXPRESSION, PEEPHOLE_OPTIMIZE, CONSTANT_PROPAGATION, CONSTANT_POOLING,
)
AFTER_UNROLLING_PASSES: Steps = (REMOVE_LIST_MUTATION, PEEPHOLE_OPTIMIZE, CONSTANT_PROPAGATION)
# CheckInplace changes nothing: it raises or returns False.
CLOSING_OPTIMIZATION_PASSES: Steps = (ELIMINATE_COMMON_SUBEXPRESSION, CHECK_INPLACE)
NONDIFF_PASSES: Steps = (DECOMPOSE_OPS, LOWER_SIMPLE_TUPLES, BATCH_MM)


def _run_steps(graph: Graph, steps: Steps, record: Recorder | None) -> bool:
    """Run every step in order, whatever the earlier ones returned; True if any changed the graph."""
    changed = False
    for step in steps:
        step_changed = bool(step.run(graph))  # type: ignore[misc]
        if record is not None:
            record(step.name, step_changed)
        changed |= step_changed
    return changed


def run_required_passes(graph: Graph, record: Recorder | None = None) -> bool:
    """RemoveExpands, CanonicalizeOps, EliminateDeadCode."""
    return _run_steps(graph, REQUIRED_PASSES, record)


def run_optimization(graph: Graph, unroll_non_constant_loops: bool = True, record: Recorder | None = None) -> bool:
    """DCE, CSE, peephole, constant propagation and pooling, loop unrolling, CSE, CheckInplace."""
    changed = _run_steps(graph, OPTIMIZATION_PASSES, record)
    unroll = UNROLL_LOOPS if unroll_non_constant_loops else UNROLL_CONSTANT_LOOPS
    if _run_steps(graph, (unroll,), record):
        changed = True
        _run_steps(graph, AFTER_UNROLLING_PASSES, record)
    changed |= _run_steps(graph, CLOSING_OPTIMIZATION_PASSES, record)
    return changed


def run_nondiff_optimization(graph: Graph, record: Recorder | None = None) -> bool:
    """DecomposeOps, LowerSimpleTuples, BatchMM (gradview has no fuser to run after them)."""
    return _run_steps(graph, NONDIFF_PASSES, record)


# The pipelines by the names PyTorch's JIT logs give them. The executor runs them
# as steps whose inner passes are recorded (``run(graph, record=...)``).
RUN_REQUIRED_PASSES = PassInfo("runRequiredPasses", run_required_passes, Phase.PIPELINE)
RUN_OPTIMIZATION = PassInfo("runOptimization", run_optimization, Phase.PIPELINE)
RUN_NONDIFF_OPTIMIZATION = PassInfo("runNondiffOptimization", run_nondiff_optimization, Phase.PIPELINE)
PIPELINES: Steps = (RUN_REQUIRED_PASSES, RUN_OPTIMIZATION, RUN_NONDIFF_OPTIMIZATION)
