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
from gradview.ir.passes.registry import PassInfo, Phase

from .autodiff_mode import AutodiffMode, autodiff_mode
from .gradient import Gradient
from .lambda_lift import lambda_lift_reverse, pack_return_values_into_tuple, update_requires_grad
from .optimize import OPTIMIZE_STEPS
from .reverse import ReverseDetails, add_reverse_inline

__all__ = ["differentiate", "StepRecorder", "DIFFERENTIATE", "DIFFERENTIATE_STEPS"]

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

    def step(info: PassInfo, rev: ReverseDetails | None, changed: bool = True) -> None:
        if record is not None:
            record(info.name, grad, rev, changed)

    rev = add_reverse_inline(grad, mode)
    step(ADD_REVERSE_INLINE, rev)
    for info in OPTIMIZE_STEPS:
        changed = info.run(grad, rev)  # type: ignore[misc]
        step(info, rev, bool(changed))
    changed = eliminate_dead_code(grad.f)
    step(ELIMINATE_DEAD_CODE_F, rev, changed)
    lambda_lift_reverse(grad, rev)
    step(LAMBDA_LIFT_REVERSE, rev)
    assert grad.df is not None
    pack_return_values_into_tuple(grad.df)
    step(PACK_RETURN_VALUES_INTO_TUPLE, None)
    update_requires_grad(grad.f, False)
    step(UPDATE_REQUIRES_GRAD, None)
    return grad


# differentiate's steps as the trace names them, in order (OPTIMIZE_STEPS: optimize.py).
ADD_REVERSE_INLINE = PassInfo("addReverseInline", add_reverse_inline, Phase.DIFFERENTIATE)
ELIMINATE_DEAD_CODE_F = PassInfo("EliminateDeadCode(f)", eliminate_dead_code, Phase.DIFFERENTIATE)
LAMBDA_LIFT_REVERSE = PassInfo("lambdaLiftReverse", lambda_lift_reverse, Phase.DIFFERENTIATE)
PACK_RETURN_VALUES_INTO_TUPLE = PassInfo("packReturnValuesIntoTuple", pack_return_values_into_tuple, Phase.DIFFERENTIATE)
UPDATE_REQUIRES_GRAD = PassInfo("UpdateDifferentiableGraphRequiresGrad", update_requires_grad, Phase.DIFFERENTIATE)
DIFFERENTIATE_STEPS: tuple[PassInfo, ...] = (
    ADD_REVERSE_INLINE, *OPTIMIZE_STEPS, ELIMINATE_DEAD_CODE_F, LAMBDA_LIFT_REVERSE, PACK_RETURN_VALUES_INTO_TUPLE,
    UPDATE_REQUIRES_GRAD,
)
# The whole of it, as PyTorch's JIT logs name it.
DIFFERENTIATE = PassInfo("differentiate", differentiate, Phase.PIPELINE)
