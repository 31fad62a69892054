"""The orthogonal polynomials' kernels against PyTorch's CPU kernels (Math.h ports): the
closed forms at +-1 (0 and 1 shifted), the trigonometric forms above their degrees, the
recurrences, how n is cast, the Hermite limit (NaN above 512), the dtypes of the Scalar overloads."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradview.kernels import orthogonal_polynomials as kernels

from .torch_cpu import FUSED_TOLERANCE

FUNCTIONS = [
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
    "legendre_polynomial_p",
]
_X = np.concatenate([
    [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -2.0, 1.0 + 2.0**-52, 1.0 - 2.0**-53, 1e-17, 25.0, 1e10, np.inf, -np.inf, np.nan],
    np.random.default_rng(22).uniform(-3.0, 3.0, 40), np.random.default_rng(23).uniform(-0.1, 1.1, 40),
])
# Degrees around each kind's switch to the trigonometric form (4, 6, 8), truncated fractions,
# negatives, the Hermite limit (512), and what static_cast<int64_t> makes of NaN and inf.
_N = np.array([-3.0, -1.0, -0.5, 0.0, 1.0, 2.0, 2.7, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 12.0, 20.0, 100.0,
               512.0, 513.0, 1e30, np.nan, np.inf, -np.inf])


def _torch(name: str, x: object, n: object) -> np.ndarray:
    wrap = [torch.tensor(v) if isinstance(v, np.ndarray) else v for v in (x, n)]
    return getattr(torch.special, name)(*wrap).numpy()


@pytest.mark.parametrize("name", FUNCTIONS)
def test_float64_values_are_pytorchs_to_the_last_bit_on_every_branch(name: str) -> None:
    x, n = (a.ravel() for a in np.meshgrid(_X, _N, indexing="ij"))
    # Where x is NaN and n >= 2, most of Math.h's loops never run and return an uninitialised
    # variable: PyTorch's number there is whatever memory held; gradview's is NaN.
    initialised = name in ("chebyshev_polynomial_t", "hermite_polynomial_h", "hermite_polynomial_he")
    defined = ~(np.isnan(x) & (n >= 2) & (n < 2.0**63)) | initialised
    expected = _torch(name, x, n)[defined]
    got = getattr(kernels, name)(np, x, n)
    assert got.dtype == np.float64
    assert np.isnan(got[~defined]).all()
    got = got[defined]
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_allclose(got, expected, rtol=FUSED_TOLERANCE, atol=0 if FUSED_TOLERANCE == 0 else 1e-14)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_scalar_overloads_promote_as_pytorch_does(name: str) -> None:
    fn = getattr(kernels, name)
    n64, x32, ints = np.array([1.0, 4.0, 9.0]), np.array([0.3, 2.5], np.float32), np.array([1, 2])
    for x, n in [(0.3, n64), (x32, 3), (ints, 3.5), (ints, np.array([3, 4])), (2, n64)]:
        got, expected = fn(np, x, n), _torch(name, x, n)
        assert got.dtype == expected.dtype, (x, n)
        np.testing.assert_allclose(got, expected, rtol=1e-6)

