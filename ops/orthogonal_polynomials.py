"""Orthogonal polynomials (issue 22): Chebyshev T, U, V, W and their shifted forms,
Hermite H and He, Laguerre L and Legendre P, each of ``x`` and the degree ``n``.

Every kind has three overloads: both tensors, ``x_scalar`` (x a Python number)
and ``n_scalar``. Their kernels port PyTorch's Math.h (see
kernels/orthogonal_polynomials.py). Shapes are the binary float rule: the
operands broadcast, their promoted dtype made floating. PyTorch's
derivatives.yaml marks x and n ``non_differentiable``: the results never
require grad, and neither do gradview's.
"""

from ..kernels import orthogonal_polynomials
from .pointwise import binary_float_shapes
from .registry import kernel, no_gradient, shape_rule

_NON_DIFFERENTIABLE = "PyTorch marks x and n non_differentiable (derivatives.yaml): its result never requires grad"

_KINDS = (
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
    "legendre_polynomial_p",
)

for _kind in _KINDS:
    _overloads = tuple(f"aten::special_{_kind}{suffix}" for suffix in ("", ".x_scalar", ".n_scalar"))
    shape_rule(f"aten::special_{_kind}")(binary_float_shapes)
    kernel(*_overloads)(getattr(orthogonal_polynomials, _kind))
    no_gradient(*_overloads, reason=_NON_DIFFERENTIABLE, non_differentiable=True)
