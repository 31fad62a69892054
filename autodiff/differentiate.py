"""``differentiate(graph) -> Gradient``: TorchScript's symbolic autodiff, step by step.

The steps, in order (each a named function the trace records):

1. addReverseInline: build the backward pass as GradOf blocks in a reverse block;
2. Optimize: liftConstants, foldSizeIfNotEqual, CSE on the forward graph,
   deduplicateSizeCaptures, dead code elimination of the reverse block;
3. EliminateDeadCode on the forward graph;
4. lambdaLiftReverse: turn the reverse block into the graph ``df`` and decide
   what the forward graph ``f`` must hand over (captures);
5. packReturnValuesIntoTuple on ``df``;
6. UpdateDifferentiableGraphRequiresGrad: ``f`` runs without autograd.

``differentiate`` consumes its argument: the graph becomes ``Gradient.f``
(pass ``graph.copy()`` to keep the original).
"""

from __future__ import annotations

from collections.abc import Callable

from gradview.ir import Graph
from gradview.ir.collector import paused_gc
from gradview.ir.passes import eliminate_dead_code

from .autodiff_mode import AutodiffMode, autodiff_mode
from .gradient import Gradient
from .lambda_lift import lambda_lift_reverse, pack_return_values_into_tuple, update_requires_grad
from .optimize import OPTIMIZE_STEPS
from .reverse import ReverseDetails, add_reverse_inline

__all__ = ["differentiate", "StepRecorder"]

# record(step name, gradient, reverse details or None, changed)
StepRecorder = Callable[[str, Gradient, ReverseDetails | None, bool], None]


def differentiate(
    graph: Graph, record: StepRecorder | None = None, *, mode: AutodiffMode | str | None = None
) -> Gradient:
    """Differentiate ``graph`` (consumed) into forward ``f`` and backward ``df``.

    ``mode`` (default ``"torch"``) says which ops may be differentiated: a node
    that needs a gradient and is outside the mode's set raises
    DifferentiationError, with PyTorch's message in ``"torch"`` mode.
    """
    with paused_gc():
        return _differentiate(graph, record, autodiff_mode(mode))


def _differentiate(graph: Graph, record: StepRecorder | None, mode: AutodiffMode) -> Gradient:
    grad = Gradient(f=graph)

    def step(name: str, rev: ReverseDetails | None, changed: bool = True) -> None:
        if record is not None:
            record(name, grad, rev, changed)

    rev = add_reverse_inline(grad, mode)
    step("addReverseInline", rev)
    for name, run in OPTIMIZE_STEPS:
        changed = run(grad, rev)
        step(name, rev, bool(changed))
    changed = eliminate_dead_code(grad.f)
    step("EliminateDeadCode(f)", rev, changed)
    lambda_lift_reverse(grad, rev)
    step("lambdaLiftReverse", rev)
    assert grad.df is not None
    pack_return_values_into_tuple(grad.df)
    step("packReturnValuesIntoTuple", None)
    update_requires_grad(grad.f, False)
    step("UpdateDifferentiableGraphRequiresGrad", None)
    return grad
