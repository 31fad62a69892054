"""C's fma and libm's exp, log and acos on NumPy arrays, against exact rational arithmetic
and Python's math module (the C library)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from gradview.kernels.c_math import fma, libm


def _exact(a: float, b: float, c: float) -> float:
    return float(Fraction(a) * Fraction(b) + Fraction(c))


@pytest.mark.parametrize("scale", [1.0, 1e-150, 1e150, 1e304])
def test_fma_rounds_once_even_where_the_sum_cancels_the_product(scale: float) -> None:
    rng = np.random.default_rng(int(math.log10(scale)) + 400)
    a, b = rng.standard_normal(2000) * scale, rng.uniform(-4.0, 4.0, 2000)
    c = -a * b * (1.0 + rng.standard_normal(2000) * 1e-9)  # nearly cancelling: where two roundings show
    c[::3] = rng.standard_normal(c[::3].size) * scale
    expected = np.array([_exact(*v) for v in zip(a.tolist(), b.tolist(), c.tolist(), strict=True)])
    np.testing.assert_array_equal(fma(np, a, b, c), expected)
    np.testing.assert_array_equal(fma(np, b, a, c), expected)


def test_fma_of_infinities_nan_and_float32_is_the_plain_expression() -> None:
    got = fma(np, np.array([np.inf, 0.0, np.nan, 1e300]), np.array([1.0, np.inf, 1.0, 1e10]), 1.0)
    np.testing.assert_array_equal(got, [np.inf, np.nan, np.nan, np.inf])
    half = fma(np, np.float32([1.5]), np.float32([2.0]), 0.25)
    assert half.dtype == np.float32 and half[0] == 3.25


@pytest.mark.parametrize(("name", "fn", "points"), [
    ("exp", math.exp, np.linspace(-745.0, 709.0, 20001)),
    ("log", math.log, np.geomspace(1e-300, 1e300, 20001)),
    ("acos", math.acos, np.linspace(-1.0, 1.0, 20001)),
])
def test_libm_is_the_c_librarys_function(name: str, fn: object, points: np.ndarray) -> None:
    expected = np.array([fn(v) for v in points.tolist()])  # type: ignore[operator]
    np.testing.assert_array_equal(libm(np, name, points), expected)


def test_libm_outside_the_domain_gives_numpys_inf_and_nan() -> None:
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(libm(np, "exp", np.array([710.0, np.nan, -np.inf])), [np.inf, np.nan, 0.0])
        np.testing.assert_array_equal(libm(np, "log", np.array([0.0, -1.0, np.inf])), [-np.inf, np.nan, np.inf])
        np.testing.assert_array_equal(libm(np, "acos", np.array([1.5, np.nan])), [np.nan, np.nan])
    assert libm(np, "exp", np.array(0.0)) == 1.0
