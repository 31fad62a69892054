"""The autodiff passes the executor's compileSpec runs, as pipeline records.

Each record names the pass as TorchScript's trace does and carries both
variants: ``run`` and ``noted`` (which also returns the viewer's annotations,
worked out only when tracing). ``gradview.runtime.pipeline`` composes them with
the generic passes and the executor's own steps.
"""

from __future__ import annotations

from gradview.ir.passes.registry import PassInfo, Phase

from .create_autodiff_subgraphs import (
    create_autodiff_subgraphs,
    create_autodiff_subgraphs_with_notes,
)
from .differentiate import DIFFERENTIATE, DIFFERENTIATE_STEPS
from .inline_autodiff_subgraphs import (
    inline_autodiff_subgraphs,
    inline_autodiff_subgraphs_with_notes,
)
from .specialize_autograd_zero import specialize_autograd_zero, specialize_autograd_zero_with_notes

__all__ = ["SPECIALIZE_AUTOGRAD_ZERO", "CREATE_AUTODIFF_SUBGRAPHS", "INLINE_AUTODIFF_SUBGRAPHS", "AUTODIFF_STEPS"]

SPECIALIZE_AUTOGRAD_ZERO = PassInfo(
    "specializeAutogradZero", specialize_autograd_zero, Phase.EXECUTOR, specialize_autograd_zero_with_notes
)
CREATE_AUTODIFF_SUBGRAPHS = PassInfo(
    "CreateAutodiffSubgraphs", create_autodiff_subgraphs, Phase.EXECUTOR, create_autodiff_subgraphs_with_notes
)
INLINE_AUTODIFF_SUBGRAPHS = PassInfo(
    "InlineAutodiffSubgraphs", inline_autodiff_subgraphs, Phase.EXECUTOR, inline_autodiff_subgraphs_with_notes
)

# Every autodiff record, in the order the docs list them.
AUTODIFF_STEPS: tuple[PassInfo, ...] = (
    SPECIALIZE_AUTOGRAD_ZERO, CREATE_AUTODIFF_SUBGRAPHS, INLINE_AUTODIFF_SUBGRAPHS, *DIFFERENTIATE_STEPS, DIFFERENTIATE,
)
