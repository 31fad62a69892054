"""The special functions' kernels against PyTorch's CPU kernels, where the op_db sweep
cannot look: whole ranges of arguments (not a few random samples), the branches and edge
values of the code ported from Math.h, the asymptotic regime of igamma, result dtypes, and
the inputs PyTorch refuses."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradview.kernels import special
from gradview.kernels.protocol import KernelError

_rng = np.random.default_rng(22)
# Random values on both sides of 0 and of the recurrence thresholds, plus the edges.
_EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, -1e-300, 10.0, 0.5, -1.0, -2.0, -2.5]
_X = np.concatenate([_rng.uniform(-20, 20, 4000), _rng.uniform(-3, 3, 4000), np.arange(-10, 30, 0.5), _EDGES])


def _bits(ours: np.ndarray, theirs: torch.Tensor) -> None:
    np.testing.assert_array_equal(ours, theirs.numpy())  # NaN == NaN here, -0.0 == 0.0


def _close(ours: np.ndarray, theirs: torch.Tensor) -> None:
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-12, atol=1e-14)


def test_digamma_is_pytorchs_calc_digamma_to_the_bit_where_scipy_is_1e_11_away() -> None:
    ours = special.digamma(np, _X)
    _close(ours, torch.digamma(torch.tensor(_X)))
    edges = special.digamma(np, np.array([0.0, -0.0, -3.0, -np.inf, np.inf]))
    np.testing.assert_array_equal(edges, [-np.inf, np.inf, np.nan, np.nan, np.inf])


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_polygamma_follows_math_h(n: int) -> None:
    """n = 1 is PyTorch's own trigamma (scipy's differs by 1e-10); n >= 2 goes through
    zeta, NaN at +inf as Math.h's zeta gives."""
    _close(special.polygamma(np, n, _X), torch.polygamma(n, torch.tensor(_X)))


def test_trigamma_matches_pytorch_bit_for_bit_on_most_values() -> None:
    x = _rng.uniform(-20, 20, 4000)
    same = special.polygamma(np, 1, x) == torch.polygamma(1, torch.tensor(x)).numpy()
    assert same.mean() > 0.99


def test_igamma_keeps_pytorchs_float32_pi_in_its_asymptotic_series() -> None:
    """For a > 20 and x close to a, PyTorch divides by sqrt(2 * c10::pi<float> * a):
    scipy's gammainc is 1e-9 away there; gradview reproduces PyTorch."""
    a = _rng.uniform(20, 400, 4000)
    x = a * _rng.uniform(0.8, 1.2, 4000)
    for ours, theirs in ((special.igamma, torch.igamma), (special.igammac, torch.igammac)):
        _close(ours(np, a, x), theirs(torch.tensor(a), torch.tensor(x)))


def test_igamma_edges_are_scipys_and_pytorchs() -> None:
    a = np.array([0.0, 0.0, 1.0, np.inf, np.inf, 1.0, -1.0, np.nan, 2.0])
    x = np.array([0.0, 1.0, 0.0, 1.0, np.inf, np.inf, 1.0, 1.0, np.nan])
    for ours, theirs in ((special.igamma, torch.igamma), (special.igammac, torch.igammac)):
        _bits(ours(np, a, x), theirs(torch.tensor(a), torch.tensor(x)))


@pytest.mark.parametrize(
    "name, theirs",
    [
        ("lgamma", torch.lgamma), ("erfinv", torch.erfinv), ("i0", torch.i0), ("i0e", torch.special.i0e),
        ("i1", torch.special.i1), ("i1e", torch.special.i1e), ("ndtr", torch.special.ndtr),
        ("log_ndtr", torch.special.log_ndtr), ("erfcx", torch.special.erfcx), ("entr", torch.special.entr),
        ("sinc", torch.sinc), ("ndtri", torch.special.ndtri), ("sgn", torch.sgn),
    ],
)
def test_unary_functions_over_their_range(name: str, theirs: object) -> None:
    x = _X / 20 if name in ("erfinv", "ndtri") else _X  # their domains are [-1, 1] and [0, 1]
    _close(getattr(special, name)(np, x), theirs(torch.tensor(x)))  # type: ignore[operator]


@pytest.mark.parametrize("name, theirs", [("xlogy", torch.xlogy), ("xlog1py", torch.special.xlog1py)])
def test_x_log_y_is_zero_at_x_zero_unless_y_is_nan(name: str, theirs: object) -> None:
    x = np.array([0.0, 0.0, 0.0, 2.0, 0.0, -1.5])
    y = np.array([0.0, -3.0, np.nan, np.nan, np.inf, 0.5])
    _bits(getattr(special, name)(np, x, y), theirs(torch.tensor(x), torch.tensor(y)))  # type: ignore[operator]


@pytest.mark.parametrize("p", [1, 3, 5])
def test_mvlgamma_sums_lgamma_over_pytorchs_offsets(p: int) -> None:
    x = _rng.uniform(p, p + 10, 500)
    _close(special.mvlgamma(np, x, p), torch.mvlgamma(torch.tensor(x), p))


def test_mvlgamma_refuses_elements_at_or_below_half_p_minus_one() -> None:
    with pytest.raises(KernelError, match=r"All elements must be greater than \(p-1\)/2"):
        special.mvlgamma(np, np.array([3.0, 1.0]), 3)


def test_frexp_and_ldexp_round_trip_with_pytorchs_dtypes() -> None:
    mantissa, exponent = special.frexp(np, _X)
    theirs = torch.frexp(torch.tensor(_X))
    _bits(mantissa, theirs.mantissa)
    _bits(exponent, theirs.exponent)
    assert exponent.dtype == np.int32
    powers = _rng.integers(-20, 20, _X.shape)
    _bits(special.ldexp(np, _X, powers), torch.ldexp(torch.tensor(_X), torch.tensor(powers)))
    assert special.ldexp(np, np.array([1, 2]), np.array([2, 3])).dtype == np.float32  # pow(2., int) is float


def test_nextafter_steps_one_ulp() -> None:
    x, y = _rng.uniform(-2, 2, 100), _rng.uniform(-2, 2, 100)
    _bits(special.nextafter(np, x, y), torch.nextafter(torch.tensor(x), torch.tensor(y)))


@pytest.mark.parametrize("dtype", [np.int64, np.bool_, np.float32])
def test_float_functions_of_integers_and_bools_are_float32(dtype: type) -> None:
    x = np.array([1, 0, 1]).astype(dtype)
    for name in ("digamma", "lgamma", "erfinv", "i0", "i1e", "ndtr", "log_ndtr", "entr", "sinc"):
        assert getattr(special, name)(np, x).dtype == np.float32, name
    assert special.xlogy(np, x, x).dtype == np.float32
    assert special.xlogy(np, x, 2.0).dtype == np.float32  # a Python number promotes weakly
    assert special.polygamma(np, 2, x).dtype == np.float32
    assert special.sgn(np, x).dtype == x.dtype


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: special.igamma(np, np.array([1, 2]), np.array([2, 3])), "\"igamma_cpu\" not implemented for 'Long'"),
        (lambda: special.nextafter(np, np.array([1]), np.array([2])), "\"nextafter_cpu\" not implemented for 'Long'"),
        (lambda: special.frexp(np, np.array([1, 2])), "only supports floating-point dtypes"),
        (lambda: special.polygamma(np, -1, np.array([1.0])), "does not support negative n"),
    ],
)
def test_inputs_pytorch_refuses_are_refused_in_its_words(call: object, message: str) -> None:
    with pytest.raises(KernelError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call()  # type: ignore[operator]
