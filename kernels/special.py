"""Special functions: Hurwitz zeta, the gamma family (lgamma, digamma, polygamma,
mvlgamma, igamma/igammac), erfinv, erfcx, the normal distribution (ndtr, ndtri,
log_ndtr), the modified Bessel I0/I1 and their scaled forms, entr, sinc,
xlogy/xlog1py, nextafter, frexp, ldexp and sgn.

Most of PyTorch's CPU kernels (aten/src/ATen/native/Math.h) are ports of Cephes,
the same routines scipy.special calls, so scipy's values are PyTorch's (to 1e-15).
Where PyTorch has code of its own, it is ported: calc_digamma and trigamma
(scipy's psi and polygamma(1) differ by up to 1e-10 relative), zeta's NaN at
q = inf, and the float32 pi in igamma's asymptotic series. They compute in double
here and round to the result dtype: the inputs' floating dtype, float32 for bool
and integer inputs, as PyTorch's ``unary_float``/``binary_float`` ops do. (The
Bessel J/Y/K and Airy functions are in kernels/bessel.py.)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .dtypes import dtype_name, result_dtype
from .protocol import KernelError


def zeta(xp: Any, self: Any, other: Any) -> Any:
    """Hurwitz zeta(x, q): scipy.special.zeta is Cephes' zeta, PyTorch's zeta in Math.h."""
    import scipy.special

    hosts = [v.get() if hasattr(v, "get") else np.asarray(v) for v in (self, other)]
    dtype = np.result_type(*hosts)
    if not np.issubdtype(dtype, np.floating):
        dtype = np.dtype(np.float32)
    value = scipy.special.zeta(hosts[0].astype(np.float64), hosts[1].astype(np.float64))
    return xp.asarray(np.asarray(value).astype(dtype))


# -- issue 22: the gamma family, error functions and the rest (see the module docstring) ----------

_PI = math.pi
_PI_FLOAT32 = float(np.float32(math.pi))  # c10::pi<float>, as igamma's asymptotic series uses it


def _host(value: Any) -> np.ndarray:
    """The array on the host (CuPy arrays are copied)."""
    return value.get() if hasattr(value, "get") else np.asarray(value)


def _float_dtype(*operands: Any) -> np.dtype:
    """The result dtype of a float op: the promoted dtype, made floating (float32 default)."""
    dtype = np.dtype(result_dtype(*operands)) if len(operands) > 1 else operands[0].dtype
    return dtype if np.issubdtype(dtype, np.floating) else np.dtype(np.float32)


def _float_op(fn: Callable[..., np.ndarray], name: str, doc: str) -> Callable[..., Any]:
    """A kernel running ``fn`` on float64 copies of its tensor inputs, in the float result dtype."""

    def run(xp: Any, *inputs: Any) -> Any:
        # Python numbers (xlogy.Scalar_Other's) promote as numbers, not as 0-d float64 arrays.
        dtype = _float_dtype(*(v if isinstance(v, (bool, int, float)) else _host(v) for v in inputs))
        hosts = [_host(v) for v in inputs]
        with np.errstate(all="ignore"):
            value = fn(*(h.astype(np.float64) for h in hosts))
        return xp.asarray(np.asarray(value).astype(dtype))

    run.__name__ = name
    run.__doc__ = doc
    return run


def _scipy(name: str) -> Callable[[np.ndarray], np.ndarray]:
    def call(*args: np.ndarray) -> np.ndarray:
        import scipy.special

        return getattr(scipy.special, name)(*args)

    return call


# -- digamma, trigamma, polygamma (Math.h's calc_digamma, trigamma, calc_polygamma) --
_PSI_10 = 2.25175258906672110764
_DIGAMMA_A = (
    8.33333333333333333333e-2, -2.10927960927960927961e-2, 7.57575757575757575758e-3,
    -4.16666666666666666667e-3, 3.96825396825396825397e-3, -8.33333333333333333333e-3,
    8.33333333333333333333e-2,
)


def _digamma_nonnegative(x: np.ndarray) -> np.ndarray:
    """calc_digamma for x > 0 (and NaN, inf): recur up to 10, then the asymptotic series."""
    x = x.copy()
    result = np.zeros_like(x)
    low = x < 10
    while low.any():
        result[low] -= 1 / x[low]
        x[low] += 1
        low = x < 10
    z = 1.0 / (x * x)
    poly = np.zeros_like(x)
    for coefficient in _DIGAMMA_A:
        poly = poly * z + coefficient
    y = np.where(x < 1.0e17, z * poly, 0.0)
    series = result + np.log(x) - (0.5 / x) - y
    return np.where(x == 10, result + _PSI_10, series)


def digamma64(x: np.ndarray) -> np.ndarray:
    """PyTorch's calc_digamma in float64: ``copysign(inf, -x)`` at 0, NaN at negative
    integers, the reflection ``psi(1 - x) - pi / tan(pi * frac(x))`` below 0."""
    negative = x < 0
    negative_integer = negative & (x == np.trunc(x))
    reflected = negative & ~negative_integer
    core = _digamma_nonnegative(np.where(negative, 1 - x, x))
    fraction = np.modf(x)[0]
    out = np.where(reflected, core - _PI / np.tan(_PI * fraction), core)
    out = np.where(negative_integer, np.nan, out)
    return np.where(x == 0, np.copysign(np.inf, -x), out)


def trigamma64(x: np.ndarray) -> np.ndarray:
    """PyTorch's trigamma (Math.h) in float64: the reflection below 1/2, six recurrence
    steps, then an asymptotic series; not Cephes' (scipy differs by up to 1e-10)."""
    below = x < 0.5
    sin_pi_x = np.sin(_PI * x)
    result = np.where(below, -(_PI * _PI) / (sin_pi_x * sin_pi_x), 0.0)
    x = np.where(below, 1 - x, x)
    for _ in range(6):
        result = result + 1 / (x * x)
        x = x + 1
    ixx = 1 / (x * x)
    result = result + (1 + 1 / (2 * x) + ixx * (1.0 / 6 - ixx * (1.0 / 30 - ixx * (1.0 / 42)))) / x
    return np.where(below, -result, result)


def _polygamma64(n: int, x: np.ndarray) -> np.ndarray:
    """calc_polygamma: digamma for n = 0, trigamma for 1, else (-1)^(n+1) n! zeta(n+1, x)."""
    import scipy.special

    if n == 0:
        return digamma64(x)
    if n == 1:
        return trigamma64(x)
    sign = 1.0 if n % 2 else -1.0
    zeta = scipy.special.zeta(float(n + 1), x)
    # Math.h's zeta(s, inf) reaches 0 * inf in its Euler-Maclaurin tail: NaN (scipy: 0).
    zeta = np.where(x == np.inf, np.nan, zeta)
    return sign * math.exp(math.lgamma(n + 1.0)) * zeta


digamma = _float_op(digamma64, "digamma", "digamma(x): PyTorch's calc_digamma (Math.h), ported.")


def polygamma(xp: Any, n: int, self: Any) -> Any:
    """polygamma(n, x): Math.h's branches (digamma, trigamma, zeta); n must be >= 0."""
    if n < 0:
        raise KernelError("polygamma(n, x) does not support negative n.")
    return _float_op(lambda x: _polygamma64(n, x), "polygamma", "")(xp, self)


def _lgamma64(x: np.ndarray) -> np.ndarray:
    """C's lgamma: scipy's gammaln agrees to 1e-15, except lgamma(-inf), which is +inf."""
    import scipy.special

    return np.where(x == -np.inf, np.inf, scipy.special.gammaln(x))


lgamma = _float_op(_lgamma64, "lgamma", "lgamma(x): log|Gamma(x)| as C's lgamma, which PyTorch calls.")


def mvlgamma(xp: Any, self: Any, p: int) -> Any:
    """The multivariate log-gamma as ATen's ``mvlgamma``: ``sum_i lgamma(x - i/2)`` over
    ``arange(-p/2 + 1/2, 1/2, 1/2)``, plus ``p (p - 1) log(pi) / 4``; every element must
    exceed ``(p - 1) / 2`` (PyTorch's check)."""
    import scipy.special

    if p < 1:
        raise KernelError("p has to be greater than or equal to 1")
    host = _host(self)
    dtype = _float_dtype(host)
    x = host.astype(np.float64)
    if not (x > 0.5 * (p - 1)).all():
        raise KernelError("All elements must be greater than (p-1)/2")
    total = np.zeros_like(x)
    for offset in np.arange(-p / 2 + 0.5, 0.5, 0.5):
        total = total + scipy.special.gammaln(x + offset)
    return xp.asarray((total + p * (p - 1) * math.log(_PI) / 4).astype(dtype))


# -- erfinv: torch 2.13's CPU kernel agrees with scipy's erfinv to 5e-16, while a port of
# Math.h's calc_erfinv (Pavlis' rational guess and two Newton steps) is 3e-13 away from it.
erfinv = _float_op(_scipy("erfinv"), "erfinv", "erfinv(y): scipy's erfinv (within 5e-16 of PyTorch's CPU kernel).")

# -- modified Bessel functions of the first kind: Cephes' chbevl series (scipy is Cephes) --
i0 = _float_op(_scipy("i0"), "i0", "I0(x): Cephes' i0, PyTorch's calc_i0.")
i0e = _float_op(_scipy("i0e"), "i0e", "exp(-|x|) I0(x): Cephes' i0e, PyTorch's calc_i0e.")
i1 = _float_op(_scipy("i1"), "i1", "I1(x): Cephes' i1, PyTorch's calc_i1.")
i1e = _float_op(_scipy("i1e"), "i1e", "exp(-|x|) I1(x): Cephes' i1e, PyTorch's calc_i1e.")

# -- the normal distribution and erfcx --
ndtr = _float_op(_scipy("ndtr"), "ndtr", "The standard normal CDF (to 1e-16 of PyTorch's erf-based calc_ndtr).")
ndtri = _float_op(_scipy("ndtri"), "ndtri", "The normal CDF's inverse: Cephes' ndtri, PyTorch's calc_ndtri.")
log_ndtr = _float_op(_scipy("log_ndtr"), "log_ndtr", "log of the normal CDF (erfcx-based in both tails).")
erfcx = _float_op(_scipy("erfcx"), "erfcx", "exp(x^2) erfc(x): the Faddeeva package's erfcx, as PyTorch's calc_erfcx.")


def _entr64(x: np.ndarray) -> np.ndarray:
    """ATen's entr: ``-x log x`` for x > 0, 0 at 0, -inf below 0, NaN kept."""
    out = np.where(x > 0, -x * np.log(np.where(x > 0, x, 1.0)), np.where(x == 0, 0.0, -np.inf))
    return np.where(np.isnan(x), x, out)


entr = _float_op(_entr64, "entr", _entr64.__doc__ or "")


def _sinc64(x: np.ndarray) -> np.ndarray:
    """ATen's sinc: 1 at 0, else ``sin(pi x) / (pi x)`` with the product rounded once."""
    product = _PI * x
    return np.where(x == 0, 1.0, np.sin(product) / np.where(x == 0, 1.0, product))


sinc = _float_op(_sinc64, "sinc", _sinc64.__doc__ or "")


# -- xlogy, xlog1py: 0 where x == 0 (unless y is NaN) --
def _x_times(log: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    def run(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        out = np.where(x == 0, 0.0, x * log(y))
        return np.where(np.isnan(y), np.nan, out)

    return run


xlogy = _float_op(_x_times(np.log), "xlogy", "x * log(y), 0 where x == 0 unless y is NaN (ATen's xlogy).")
xlog1py = _float_op(_x_times(np.log1p), "xlog1py", "x * log1p(y), 0 where x == 0 unless y is NaN (ATen's xlog1py).")


# -- igamma, igammac: the regularized incomplete gamma functions --
def _igamma_asymptotic(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Where Math.h (like scipy) uses the uniform asymptotic series (a ~ x, a > 20)."""
    with np.errstate(all="ignore"):
        ratio = np.abs(x - a) / a
        return ((a > 20) & (a < 200) & (ratio < 0.3)) | ((a > 200) & (ratio < 4.5 / np.sqrt(a)))


def _incomplete_gamma(name: str, sgn: float) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """scipy's gammainc/gammaincc (Cephes' igam/igamc, PyTorch's calc_igamma/igammac),
    with one PyTorch quirk put back: its asymptotic series divides the correction term
    by ``sqrt(2 * c10::pi<float> * a)``, the float32 pi, where scipy uses the double
    pi (1e-9 relative). The term is recovered from scipy's result and rescaled."""

    def run(a: np.ndarray, x: np.ndarray) -> np.ndarray:
        import scipy.special

        a, x = np.broadcast_arrays(a, x)
        out = np.array(getattr(scipy.special, name)(a, x), dtype=np.float64)
        region = _igamma_asymptotic(a, x)
        if region.any():
            ar, xr = a[region], x[region]
            sigma = (xr - ar) / ar
            eta = np.sign(xr / ar - 1) * np.sqrt(-2 * (np.log1p(sigma) - sigma))
            leading = 0.5 * scipy.special.erfc(sgn * eta * np.sqrt(ar / 2))
            correction = (out[region] - leading) * np.sqrt(2 * _PI * ar) / np.sqrt(2 * _PI_FLOAT32 * ar)
            out[region] = leading + correction
        return out

    return run


def _floating_only(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` refusing bool and integer inputs, as PyTorch's CPU kernel does."""

    def run(xp: Any, *inputs: Any) -> Any:
        dtype = np.dtype(result_dtype(*(_host(v) for v in inputs)))
        if not np.issubdtype(dtype, np.floating):
            raise KernelError(f"\"{name}_cpu\" not implemented for '{dtype_name(dtype)}'")
        return fn(xp, *inputs)

    run.__name__ = name
    run.__doc__ = fn.__doc__
    return run


igamma = _floating_only("igamma", _float_op(_incomplete_gamma("gammainc", -1.0), "igamma", "The regularized lower incomplete gamma P(a, x)."))
igammac = _floating_only("igammac", _float_op(_incomplete_gamma("gammaincc", 1.0), "igammac", "The regularized upper incomplete gamma Q(a, x)."))
nextafter = _floating_only("nextafter", _float_op(np.nextafter, "nextafter", "The next float after self towards other (C's nextafter)."))


def frexp(xp: Any, self: Any) -> tuple[Any, Any]:
    """(mantissa, exponent) with ``self = mantissa * 2**exponent``, |mantissa| in [0.5, 1);
    the exponent is int32; PyTorch refuses non-floating inputs."""
    if not np.issubdtype(np.dtype(self.dtype), np.floating):
        raise KernelError("torch.frexp() only supports floating-point dtypes")
    mantissa, exponent = xp.frexp(self)
    return mantissa, exponent.astype(xp.int32)


def ldexp(xp: Any, self: Any, other: Any) -> Any:
    """ATen's ldexp: ``mul(self, pow(2., other))`` with that op's dtypes: an integer
    ``other`` gives float32 powers of two, and the product promotes with ``self``."""
    power_dtype = other.dtype if np.issubdtype(np.dtype(other.dtype), np.floating) else np.dtype(np.float32)
    power = xp.exp2(other.astype(power_dtype))
    dtype = np.dtype(result_dtype(self, power))
    return (self.astype(dtype) * power.astype(dtype)).astype(dtype, copy=False)


def sgn(xp: Any, self: Any) -> Any:
    """sgn of a real tensor is sign: -1, 0 or 1 in the input's dtype, 0 for NaN (ATen's
    sign; NumPy's is NaN), bools unchanged."""
    if self.dtype == xp.bool_:
        return self.copy()
    signs = xp.sign(self)
    if np.issubdtype(np.dtype(self.dtype), np.floating):
        signs = xp.where(xp.isnan(self), 0, signs)
    return signs.astype(self.dtype, copy=False)
