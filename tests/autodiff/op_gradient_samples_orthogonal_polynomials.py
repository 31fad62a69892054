"""The catalogue's sample calls for the orthogonal polynomials (ops/orthogonal_polynomials.py),
each overload: x and n tensors, x a number, n a number. Their results never require grad (see
op_gradient_samples.py, which imports this module at its end to add them to SAMPLES)."""

from __future__ import annotations

import numpy as np

from .op_gradient_samples import S, add, f

__all__: list[str] = []

_KINDS = (
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
    "legendre_polynomial_p",
)
_N = np.array([[0.0, 1.0, 2.0, 3.0], [5.0, 7.0, 9.0, 12.0], [-1.0, 4.0, 6.0, 10.0]])
for _kind in _KINDS:
    add(f"special_{_kind}", S(f(3, 4, lo=-1.5, hi=1.5), _N))
    add(f"special_{_kind}.x_scalar", S(0.3, _N))
    add(f"special_{_kind}.n_scalar", S(f(3, 4, lo=-1.5, hi=1.5), 9))
