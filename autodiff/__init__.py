"""gradview.autodiff: symbolic differentiation as TorchScript's JIT does it."""

from gradview.ops.errors import DifferentiationError

from .autodiff_mode import DEFAULT_AUTODIFF_MODE, AutodiffMode, autodiff_mode
from .create_autodiff_subgraphs import (
    AutodiffSubgraphNotes,
    OutsideCause,
    create_autodiff_subgraphs,
    create_autodiff_subgraphs_with_notes,
)
from .differentiable import is_differentiable, need_trim_grad
from .differentiate import differentiate
from .gradient import Gradient
from .inline_autodiff_subgraphs import (
    DEFAULT_INLINE_THRESHOLD,
    InlinedSubgraphNotes,
    inline_autodiff_subgraphs,
    inline_autodiff_subgraphs_with_notes,
)
from .specialize_autograd_zero import (
    AutogradZeroNotes,
    specialize_autograd_zero,
    specialize_autograd_zero_with_notes,
)

__all__ = [
    "DifferentiationError", "Gradient", "differentiate", "is_differentiable", "need_trim_grad",
    "create_autodiff_subgraphs", "inline_autodiff_subgraphs",
]
__all__ += ["specialize_autograd_zero", "AutodiffMode", "DEFAULT_AUTODIFF_MODE", "autodiff_mode"]
# The passes' annotations for the viewer, returned with their results.
__all__ += [
    "AutodiffSubgraphNotes", "AutogradZeroNotes", "InlinedSubgraphNotes", "DEFAULT_INLINE_THRESHOLD", "OutsideCause",
    "create_autodiff_subgraphs_with_notes", "inline_autodiff_subgraphs_with_notes",
    "specialize_autograd_zero_with_notes",
]
