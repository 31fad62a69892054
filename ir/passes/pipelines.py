"""The pass pipelines of TorchScript's graph executor, in the seeds' order.

``run_required_passes`` must run before a graph can be executed;
``run_optimization`` is the generic clean-up run on every graph (and on each
differentiable subgraph's forward and backward graph); ``run_nondiff_optimization``
runs the rewrites that would confuse autodiff, so only after it.
Each returns True if any pass changed the graph, and accepts an optional
``record(name, changed)`` callback so a tracer can observe every step.
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


def _step(graph: Graph, name: str, pass_fn: Callable[[Graph], bool], record: Recorder | None) -> bool:
    changed = bool(pass_fn(graph))
    if record is not None:
        record(name, changed)
    return changed


def run_required_passes(graph: Graph, record: Recorder | None = None) -> bool:
    """RemoveExpands, CanonicalizeOps, EliminateDeadCode."""
    changed = _step(graph, "RemoveExpands", remove_expands, record)
    changed |= _step(graph, "CanonicalizeOps", canonicalize_ops, record)
    changed |= _step(graph, "EliminateDeadCode", eliminate_dead_code, record)
    return changed


def run_optimization(graph: Graph, unroll_non_constant_loops: bool = True, record: Recorder | None = None) -> bool:
    """DCE, CSE, peephole, constant propagation and pooling, loop unrolling, CSE, CheckInplace."""
    changed = _step(graph, "EliminateDeadCode", eliminate_dead_code, record)
    changed |= _step(graph, "EliminateCommonSubexpression", eliminate_common_subexpression, record)
    changed |= _step(graph, "PeepholeOptimize", peephole_optimize, record)
    changed |= _step(graph, "ConstantPropagation", constant_propagation, record)
    changed |= _step(graph, "ConstantPooling", constant_pooling, record)
    if unroll_non_constant_loops:
        unrolled = _step(graph, "UnrollLoops", unroll_loops, record)
    else:
        unrolled = _step(graph, "UnrollConstantLoops", unroll_constant_loops, record)
    if unrolled:
        changed = True
        _step(graph, "RemoveListMutation", remove_list_mutation, record)
        _step(graph, "PeepholeOptimize", peephole_optimize, record)
        _step(graph, "ConstantPropagation", constant_propagation, record)
    changed |= _step(graph, "EliminateCommonSubexpression", eliminate_common_subexpression, record)
    _step(graph, "CheckInplace", check_inplace, record)
    return changed


def run_nondiff_optimization(graph: Graph, record: Recorder | None = None) -> bool:
    """DecomposeOps, LowerSimpleTuples, BatchMM (gradview has no fuser to run after them)."""
    changed = _step(graph, "DecomposeOps", decompose_ops, record)
    changed |= _step(graph, "LowerSimpleTuples", lower_simple_tuples, record)
    changed |= _step(graph, "BatchMM", batch_mm, record)
    return changed
