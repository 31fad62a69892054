"""The Bessel family's kernels against PyTorch's CPU kernels (Math.h ports): every branch,
its boundaries, zeros, infinities and NaN; the dtypes PyTorch gives and refuses."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special
import torch

from gradview.kernels import bessel
from gradview.kernels.protocol import KernelError

from .torch_cpu import FUSED_TOLERANCE

FUNCTIONS = [
    "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "airy_ai", "spherical_bessel_j0", "modified_bessel_i0",
    "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1",
]
# Math.h's branch points (J/Y at 5, J0's series below 1e-5, Airy at +-2.09, 8.32 and 103.892,
# spherical j0 at 0.5, I at 8, K at 2), either side of them, zeros, infinities and NaN.
_EDGES = [0.0, -0.0, 1e-300, 9.99e-6, 1e-5, 0.5, 0.49999999, 1.0, 2.0, 2.0000001, 2.09, -2.09, 2.0899999,
          -2.0900001, 2.404825557695773, 5.0, -5.0, 5.000000001, 4.999999999, 8.0, -8.0, 8.0000001,
          8.3203353, 8.3203354, 25.0, 103.892, 103.8921, 500.0, 1e10, 1e300, np.inf, -np.inf, np.nan]
POINTS = np.concatenate([np.array(_EDGES), np.random.default_rng(22).uniform(-30.0, 30.0, 2000)])


def _torch(name: str, x: np.ndarray) -> np.ndarray:
    return getattr(torch.special, name)(torch.tensor(x)).numpy()


@pytest.mark.parametrize("name", FUNCTIONS)
def test_float64_values_are_pytorchs_to_the_last_bit_on_every_branch(name: str) -> None:
    expected = _torch(name, POINTS)
    got = getattr(bessel, name)(np, POINTS)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_allclose(got, expected, rtol=FUSED_TOLERANCE, atol=0 if FUSED_TOLERANCE == 0 else 1e-14)


@pytest.mark.parametrize(("name", "at"), [("bessel_j0", 5.001), ("bessel_y0", 5.001), ("airy_ai", -2.091)])
def test_follows_pytorchs_own_approximation_where_scipys_differs(name: str, at: float) -> None:
    x = np.array([at])
    theirs = scipy.special.airy(x)[0] if name == "airy_ai" else getattr(scipy.special, name[-2:])(x)
    expected = _torch(name, x)
    assert abs(theirs - expected)[0] > 1e-7
    np.testing.assert_allclose(getattr(bessel, name)(np, x), expected, rtol=1e-14)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_float32_computes_in_float32_and_integers_in_the_default_float(name: str) -> None:
    x32 = np.linspace(-9.0, 9.0, 37, dtype=np.float32)
    got = getattr(bessel, name)(np, x32)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, _torch(name, x32), rtol=1e-4, atol=1e-6)
    ints = np.arange(-3, 4)
    assert getattr(bessel, name)(np, ints).dtype == _torch(name, ints).dtype == np.float32


def test_half_is_refused_as_pytorchs_cpu_kernel_refuses_it() -> None:
    with pytest.raises(KernelError, match="special_bessel_j0: not implemented for float16"):
        bessel.bessel_j0(np, np.ones(3, np.float16))
