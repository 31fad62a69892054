"""gradview.autodiff: symbolic differentiation as TorchScript's JIT does it."""

from gradview.ops.errors import DifferentiationError

from .autodiff_mode import DEFAULT_AUTODIFF_MODE, AutodiffMode, autodiff_mode
from .create_autodiff_subgraphs import create_autodiff_subgraphs
from .differentiable import is_differentiable, need_trim_grad
from .differentiate import differentiate
from .gradient import Gradient
from .inline_autodiff_subgraphs import inline_autodiff_subgraphs
from .specialize_autograd_zero import specialize_autograd_zero

__all__ = [
    "DifferentiationError", "Gradient", "differentiate", "is_differentiable", "need_trim_grad",
    "create_autodiff_subgraphs", "inline_autodiff_subgraphs",
]
__all__ += ["specialize_autograd_zero", "AutodiffMode", "DEFAULT_AUTODIFF_MODE", "autodiff_mode"]
