"""Every pass by the name TorchScript gives it, with the text that explains it.

The executor looks passes up here to record them in its trace, and the viewer
shows ``PassInfo.doc`` (the pass module's docstring) next to each step.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

from ..graph import Graph
from .batch_mm import batch_mm
from .canonicalize_ops import canonicalize_ops
from .check_inplace import check_inplace
from .common_subexpression_elimination import eliminate_common_subexpression
from .constant_pooling import constant_pooling
from .constant_propagation import constant_propagation
from .dead_code_elimination import eliminate_dead_code
from .decompose_ops import decompose_ops
from .inline import inline
from .loop_unrolling import unroll_constant_loops, unroll_loops
from .lower_grad_of import lower_grad_of
from .lower_simple_tuples import lower_simple_tuples
from .peephole import peephole_optimize
from .propagate_input_shapes import propagate_input_shapes
from .propagate_requires_grad import propagate_requires_grad
from .remove_expands import remove_expands
from .remove_list_mutation import remove_list_mutation

__all__ = ["PassInfo", "PASSES", "get_pass"]


@dataclass(frozen=True)
class PassInfo:
    name: str
    run: Callable[[Graph], bool]

    @property
    def doc(self) -> str:
        """The explanation a student reads: the pass module's docstring."""
        module = sys.modules[self.run.__module__]
        return (module.__doc__ or self.run.__doc__ or "").strip()


PASSES: dict[str, PassInfo] = {
    info.name: info
    for info in (
        PassInfo("EliminateDeadCode", eliminate_dead_code),
        PassInfo("EliminateCommonSubexpression", eliminate_common_subexpression),
        PassInfo("ConstantPropagation", constant_propagation),
        PassInfo("ConstantPooling", constant_pooling),
        PassInfo("PeepholeOptimize", peephole_optimize),
        PassInfo("Inline", inline),
        PassInfo("LowerSimpleTuples", lower_simple_tuples),
        PassInfo("LowerGradOf", lower_grad_of),
        PassInfo("RemoveExpands", remove_expands),
        PassInfo("CanonicalizeOps", canonicalize_ops),
        PassInfo("UnrollLoops", unroll_loops),
        PassInfo("UnrollConstantLoops", unroll_constant_loops),
        PassInfo("RemoveListMutation", remove_list_mutation),
        PassInfo("CheckInplace", check_inplace),
        PassInfo("DecomposeOps", decompose_ops),
        PassInfo("BatchMM", batch_mm),
        PassInfo("PropagateInputShapes", propagate_input_shapes),
        PassInfo("PropagateRequiresGrad", propagate_requires_grad),
    )
}


def get_pass(name: str) -> PassInfo:
    try:
        return PASSES[name]
    except KeyError:
        known = ", ".join(sorted(PASSES))
        raise KeyError(f"unknown pass {name!r}; known passes: {known}") from None
