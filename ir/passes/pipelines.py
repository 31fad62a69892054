"""The pass pipelines of TorchScript's graph executor, in the seeds' order.

``run_required_passes`` must run before a graph can be executed;
``run_optimization`` is the generic clean-up run on every graph (and on each
differentiable subgraph's forward and backward graph); ``run_nondiff_optimization``
runs the rewrites that would confuse autodiff, so only after it.
Each returns True if any pass changed the graph, and accepts an optional
``record(name, changed)`` callback so a tracer can observe every step. The
steps are data: tuples of ``(name, pass)`` that ``_run_steps`` runs in order.
"""

from __future__ import annotations

from collections.abc import Callable

from ..graph import Graph
from .batch_mm import batch_mm
from .canonicalize_ops import canonicalize_ops
from .check_inplace import check_inplace
from .common_subexpression_elimination import eliminate_common_subexpression
from .constant_pooling import constant_pooling
from .constant_propagation import constant_propagation
from .dead_code_elimination import eliminate_dead_code
from .decompose_ops import decompose_ops
from .loop_unrolling import unroll_constant_loops, unroll_loops
from .lower_simple_tuples import lower_simple_tuples
from .peephole import peephole_optimize
from .remove_expands import remove_expands
from .remove_list_mutation import remove_list_mutation

__all__ = ["run_required_passes", "run_optimization", "run_nondiff_optimization", "Recorder"]

Recorder = Callable[[str, bool], None]
# A pipeline step: the name a recorder sees, and the pass.
Step = tuple[str, Callable[[Graph], bool]]

REQUIRED_PASSES: tuple[Step, ...] = (
    ("RemoveExpands", remove_expands),
    ("CanonicalizeOps", canonicalize_ops),
    ("EliminateDeadCode", eliminate_dead_code),
)
# run_optimization: these, then one loop-unrolling pass (the steps after
# unrolling only when it changed something), then the closing steps.
OPTIMIZATION_PASSES: tuple[Step, ...] = (
    ("EliminateDeadCode", eliminate_dead_code),
    ("EliminateCommonSubexpression", eliminate_common_subexpression),
    ("PeepholeOptimize", peephole_optimize),
    ("ConstantPropagation", constant_propagation),
    ("ConstantPooling", constant_pooling),
)
AFTER_UNROLLING_PASSES: tuple[Step, ...] = (
    ("RemoveListMutation", remove_list_mutation),
    ("PeepholeOptimize", peephole_optimize),
    ("ConstantPropagation", constant_propagation),
)
CLOSING_OPTIMIZATION_PASSES: tuple[Step, ...] = (
    ("EliminateCommonSubexpression", eliminate_common_subexpression),
    ("CheckInplace", check_inplace),  # changes nothing: it raises or returns False
)
NONDIFF_PASSES: tuple[Step, ...] = (
    ("DecomposeOps", decompose_ops),
    ("LowerSimpleTuples", lower_simple_tuples),
    ("BatchMM", batch_mm),
)


def _run_steps(graph: Graph, steps: tuple[Step, ...], record: Recorder | None) -> bool:
    """Run every step in order, whatever the earlier ones returned; True if any changed the graph."""
    changed = False
    for name, pass_fn in steps:
        step_changed = bool(pass_fn(graph))
        if record is not None:
            record(name, step_changed)
        changed |= step_changed
    return changed


def run_required_passes(graph: Graph, record: Recorder | None = None) -> bool:
    """RemoveExpands, CanonicalizeOps, EliminateDeadCode."""
    return _run_steps(graph, REQUIRED_PASSES, record)


def run_optimization(graph: Graph, unroll_non_constant_loops: bool = True, record: Recorder | None = None) -> bool:
    """DCE, CSE, peephole, constant propagation and pooling, loop unrolling, CSE, CheckInplace."""
    changed = _run_steps(graph, OPTIMIZATION_PASSES, record)
    if unroll_non_constant_loops:
        unroll: Step = ("UnrollLoops", unroll_loops)
    else:
        unroll = ("UnrollConstantLoops", unroll_constant_loops)
    if _run_steps(graph, (unroll,), record):
        changed = True
        _run_steps(graph, AFTER_UNROLLING_PASSES, record)
    changed |= _run_steps(graph, CLOSING_OPTIMIZATION_PASSES, record)
    return changed


def run_nondiff_optimization(graph: Graph, record: Recorder | None = None) -> bool:
    """DecomposeOps, LowerSimpleTuples, BatchMM (gradview has no fuser to run after them)."""
    return _run_steps(graph, NONDIFF_PASSES, record)
