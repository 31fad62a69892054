"""Every pass by the name TorchScript gives it, with the text that explains it.

Each step a trace can record is one :class:`PassInfo` record: its name, the
function that runs it and which phase of the pipeline it belongs to; its docs
are the function's and its module's docstrings. The generic graph passes are
defined here; ``autodiff`` and ``runtime`` add their own steps beside the code
that runs them, and ``gradview.runtime.pipeline`` composes the whole table that
the executor, the viewer's docs and the CLI read. Code names a step by its
record (``ELIMINATE_DEAD_CODE``), never by a string.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

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

__all__ = [
    "PassInfo", "Phase", "PASSES", "get_pass", "BATCH_MM", "CANONICALIZE_OPS", "CHECK_INPLACE",
    "CONSTANT_POOLING", "CONSTANT_PROPAGATION", "DECOMPOSE_OPS", "ELIMINATE_COMMON_SUBEXPRESSION",
    "ELIMINATE_DEAD_CODE", "INLINE", "LOWER_GRAD_OF", "LOWER_SIMPLE_TUPLES", "PEEPHOLE_OPTIMIZE",
    "PROPAGATE_INPUT_SHAPES", "PROPAGATE_REQUIRES_GRAD", "REMOVE_EXPANDS", "REMOVE_LIST_MUTATION",
    "UNROLL_CONSTANT_LOOPS", "UNROLL_LOOPS",
]


class Phase(StrEnum):
    """Where a step runs, which says what its function takes."""

    PASS = "pass"  # a graph pass: ``run(graph) -> changed``, on any graph
    PIPELINE = "pipeline"  # a sequence of passes, as PyTorch's JIT logs name it
    EXECUTOR = "executor"  # a step of the executor's compileSpec, on the graph it compiles
    DIFFERENTIATE = "differentiate"  # a step of differentiate, on the forward graph and the reverse block
    TORCH_EXECUTOR = "torch executor"  # a phase of PyTorch's executors that only JIT logs show
    LOADER = "loader"  # a step a loader records (the input, AOTAutograd's graphs)


@dataclass(frozen=True)
class PassInfo:
    """One step: its name in a trace, the function that runs it, its phase.

    ``noted`` is the variant of ``run`` that also returns the annotations the
    viewer shows (``(result, notes)``), worked out only when tracing; ``text``
    explains a step that is no function of gradview's (a phase of PyTorch's
    executors, the input).
    """

    name: str
    run: Callable[..., Any] | None
    phase: Phase = Phase.PASS
    noted: Callable[..., Any] | None = None
    text: str = ""

    @property
    def doc(self) -> str:
        """The explanation a student reads: the pass module's docstring (or ``text``)."""
        if self.run is None:
            return self.text
        module = sys.modules[self.run.__module__]
        return (module.__doc__ or self.run.__doc__ or "").strip()


ELIMINATE_DEAD_CODE = PassInfo("EliminateDeadCode", eliminate_dead_code)
ELIMINATE_COMMON_SUBEXPRESSION = PassInfo("EliminateCommonSubexpression", eliminate_common_subexpression)
CONSTANT_PROPAGATION = PassInfo("ConstantPropagation", constant_propagation)
CONSTANT_POOLING = PassInfo("ConstantPooling", constant_pooling)
PEEPHOLE_OPTIMIZE = PassInfo("PeepholeOptimize", peephole_optimize)
INLINE = PassInfo("Inline", inline)
LOWER_SIMPLE_TUPLES = PassInfo("LowerSimpleTuples", lower_simple_tuples)
LOWER_GRAD_OF = PassInfo("LowerGradOf", lower_grad_of)
REMOVE_EXPANDS = PassInfo("RemoveExpands", remove_expands)
CANONICALIZE_OPS = PassInfo("CanonicalizeOps", canonicalize_ops)
UNROLL_LOOPS = PassInfo("UnrollLoops", unroll_loops)
UNROLL_CONSTANT_LOOPS = PassInfo("UnrollConstantLoops", unroll_constant_loops)
REMOVE_LIST_MUTATION = PassInfo("RemoveListMutation", remove_list_mutation)
CHECK_INPLACE = PassInfo("CheckInplace", check_inplace)
DECOMPOSE_OPS = PassInfo("DecomposeOps", decompose_ops)
BATCH_MM = PassInfo("BatchMM", batch_mm)
PROPAGATE_INPUT_SHAPES = PassInfo("PropagateInputShapes", propagate_input_shapes)
PROPAGATE_REQUIRES_GRAD = PassInfo("PropagateRequiresGrad", propagate_requires_grad)

PASSES: dict[str, PassInfo] = {
    info.name: info
    for info in (
        ELIMINATE_DEAD_CODE, ELIMINATE_COMMON_SUBEXPRESSION, CONSTANT_PROPAGATION, CONSTANT_POOLING,
        PEEPHOLE_OPTIMIZE, INLINE, LOWER_SIMPLE_TUPLES, LOWER_GRAD_OF, REMOVE_EXPANDS, CANONICALIZE_OPS,
        UNROLL_LOOPS, UNROLL_CONSTANT_LOOPS, REMOVE_LIST_MUTATION, CHECK_INPLACE, DECOMPOSE_OPS, BATCH_MM,
        PROPAGATE_INPUT_SHAPES, PROPAGATE_REQUIRES_GRAD,
    )
}


def get_pass(name: str) -> PassInfo:
    try:
        return PASSES[name]
    except KeyError:
        known = ", ".join(sorted(PASSES))
        raise KeyError(f"unknown pass {name!r}; known passes: {known}") from None
