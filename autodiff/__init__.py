"""gradview.autodiff: symbolic differentiation as TorchScript's JIT does it."""

from .differentiable import is_differentiable, need_trim_grad
from .differentiate import differentiate
from .gradient import Gradient
from .reverse import DifferentiationError

__all__ = ["DifferentiationError", "Gradient", "differentiate", "is_differentiable", "need_trim_grad"]
