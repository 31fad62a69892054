"""Bessel and Airy functions, as PyTorch's CPU kernels compute them.

``special_bessel_j0/j1/y0/y1``, ``special_airy_ai`` and
``special_spherical_bessel_j0`` port PyTorch's aten/src/ATen/native/Math.h
(``bessel_j0_forward`` ...): Cephes' rational approximations, with PyTorch's
own coefficients, branch points and evaluation order (``25 / (x * x)`` for
J0 but ``5 / x * (5 / x)`` for J1, Horner loops started from 0), so float64
results agree with PyTorch's to a few ulps. scipy.special's j0/y0/airy differ
from them by up to 3e-6, so they are not used here. Each branch is evaluated
over the whole array and picked with ``where``, in the order Math.h tests them.

The modified Bessel functions ``special_modified_bessel_i0/i1/k0/k1`` and the
scaled ``k0e/k1e`` are Cephes in both PyTorch and scipy.special (the same
Chebyshev series, summed in another order: within 3e-15), so they call scipy.

Float32 inputs compute in float32, as PyTorch's ``float`` kernel; bool and
integer inputs give the default float dtype (float32); PyTorch's CPU kernels
refuse float16, and so do these.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .protocol import KernelError

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
    "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "spherical_bessel_j0",
]


def _floating(xp: Any, op: str, self: Any) -> Any:
    """The input in the dtype PyTorch computes it in (integers and bools: float32)."""
    dtype = np.dtype(self.dtype)
    if dtype.kind in "biu":
        return self.astype(np.float32)
    if dtype not in (np.float32, np.float64):
        raise KernelError(f"{op}: not implemented for {dtype} tensors (PyTorch's CPU kernel refuses them too)")
    return self


def _horner(z: Any, coefficients: Sequence[float]) -> Any:
    """Math.h's ``p = 0.0; for (...) p = p * z + C[i];`` (highest power first)."""
    acc: Any = 0.0
    for c in coefficients:
        acc = acc * z + c
    return acc


# -- J0, Y0 (Math.h bessel_j0_forward, bessel_y0_forward) -------------------------------------
_J0_PP = (7.96936729297347051624e-04, 8.28352392107440799803e-02, 1.23953371646414299388e+00,
          5.44725003058768775090e+00, 8.74716500199817011941e+00, 5.30324038235394892183e+00,
          9.99999999999999997821e-01)
_J0_PQ = (9.24408810558863637013e-04, 8.56288474354474431428e-02, 1.25352743901058953537e+00,
          5.47097740330417105182e+00, 8.76190883237069594232e+00, 5.30605288235394617618e+00,
          1.00000000000000000218e+00)
_J0_QP = (-1.13663838898469149931e-02, -1.28252718670509318512e+00, -1.95539544257735972385e+01,
          -9.32060152123768231369e+01, -1.77681167980488050595e+02, -1.47077505154951170175e+02,
          -5.14105326766599330220e+01, -6.05014350600728481186e+00)
_J0_QQ = (6.43178256118178023184e+01, 8.56430025976980587198e+02, 3.88240183605401609683e+03,
          7.24046774195652478189e+03, 5.93072701187316984827e+03, 2.06209331660327847417e+03,
          2.42005740240291393179e+02)
_J0_RP = (-4.79443220978201773821e+09, 1.95617491946556577543e+12, -2.49248344360967716204e+14,
          9.70862251047306323952e+15)
_J0_RQ = (4.99563147152651017219e+02, 1.73785401676374683123e+05, 4.84409658339962045305e+07,
          1.11855537045356834862e+10, 2.11277520115489217587e+12, 3.10518229857422583814e+14,
          3.18121955943204943306e+16, 1.71086294081043136091e+18)
_Y0_YP = (1.55924367855235737965e+04, -1.46639295903971606143e+07, 5.43526477051876500413e+09,
          -9.82136065717911466409e+11, 8.75906394395366999549e+13, -3.46628303384729719441e+15,
          4.42733268572569800351e+16, -1.84950800436986690637e+16)
_Y0_YQ = (1.04128353664259848412e+03, 6.26107330137134956842e+05, 2.68919633393814121987e+08,
          8.64002487103935000337e+10, 2.02979612750105546709e+13, 3.17157752842975028269e+15,
          2.50596256172653059228e+17)
_PIO4 = 0.785398163397448309615660845819875721
_THPIO4 = 2.356194490192344928846982537459627163
_SQ2OPI = 0.797884560802865355879892119868763737
_TWOOPI = 0.636619772367581343075535053490057448


def _asymptotic(xp: Any, x: Any, z: Any, pq: tuple[Sequence[float], ...], shift: float, second: bool) -> Any:
    """The x > 5 expansion: ``(P cos(x - shift) - 5/x Q sin(x - shift)) sqrt(2/pi) / sqrt(x)``
    for J (``second``: the Y form, ``P sin + 5/x Q cos``), z the squared argument."""
    pp, ppq, qp, qq = (_horner(z, c) for c in pq)
    if second:
        value = pp / ppq * xp.sin(x - shift) + 5.0 / x * (qp / qq) * xp.cos(x - shift)
    else:
        value = pp / ppq * xp.cos(x - shift) - 5.0 / x * (qp / qq) * xp.sin(x - shift)
    return value * _SQ2OPI / xp.sqrt(x)


_J0_ASYMPTOTIC = (_J0_PP, _J0_PQ, _J0_QP, _J0_QQ)


def _j0(xp: Any, x: Any) -> Any:
    x = xp.where(x < 0, -x, x)
    xx = x * x
    small = 1.0 - xx / 4.0
    middle = (xx - 5.78318596294678452118e+00) * (xx - 3.04712623436620863991e+01) * _horner(xx, _J0_RP) \
        / _horner(xx, _J0_RQ)
    large = _asymptotic(xp, x, 25.0 / xx, _J0_ASYMPTOTIC, _PIO4, second=False)
    return xp.where(x <= 5.0, xp.where(x < 0.00001, small, middle), large)


def _y0_small(xp: Any, x: Any, xx: Any) -> Any:
    return _horner(xx, _Y0_YP) / _horner(xx, _Y0_YQ) + _TWOOPI * xp.log(x) * _j0(xp, x)


def _second_kind(xp: Any, op: str, self: Any, order: int) -> Any:
    """Math.h ``bessel_y0_forward``/``bessel_y1_forward``: -inf at 0, NaN below; a rational
    function plus the J term up to 5, the asymptotic expansion above."""
    x = _floating(xp, op, self)
    with np.errstate(all="ignore"):
        xx = x * x
        if order == 0:
            small, large = _y0_small(xp, x, xx), _asymptotic(xp, x, 25.0 / xx, _J0_ASYMPTOTIC, _PIO4, second=True)
        else:
            small = _y1_small(xp, x, xx)
            large = _asymptotic(xp, x, 5.0 / x * (5.0 / x), _J1_ASYMPTOTIC, _THPIO4, second=True)
        small = xp.where(x == 0, -math.inf, xp.where(x < 0, math.nan, small))
        return xp.where(x <= 5.0, small, large).astype(x.dtype, copy=False)


def bessel_j0(xp: Any, self: Any) -> Any:
    """Math.h ``bessel_j0_forward``: J0(x), even."""
    x = _floating(xp, "special_bessel_j0", self)
    with np.errstate(all="ignore"):
        return _j0(xp, x).astype(x.dtype, copy=False)


def bessel_y0(xp: Any, self: Any) -> Any:
    """Math.h ``bessel_y0_forward``: Y0(x)."""
    return _second_kind(xp, "special_bessel_y0", self, 0)


# -- J1, Y1 (Math.h bessel_j1_forward, bessel_y1_forward) -------------------------------------
_J1_PP = (7.62125616208173112003e-04, 7.31397056940917570436e-02, 1.12719608129684925192e+00,
          5.11207951146807644818e+00, 8.42404590141772420927e+00, 5.21451598682361504063e+00,
          1.00000000000000000254e+00)
_J1_PQ = (5.71323128072548699714e-04, 6.88455908754495404082e-02, 1.10514232634061696926e+00,
          5.07386386128601488557e+00, 8.39985554327604159757e+00, 5.20982848682361821619e+00,
          9.99999999999999997461e-01)
_J1_QP = (5.10862594750176621635e-02, 4.98213872951233449420e+00, 7.58238284132545283818e+01,
          3.66779609360150777800e+02, 7.10856304998926107277e+02, 5.97489612400613639965e+02,
          2.11688757100572135698e+02, 2.52070205858023719784e+01)
_J1_QQ = (7.42373277035675149943e+01, 1.05644886038262816351e+03, 4.98641058337653607651e+03,
          9.56231892404756170795e+03, 7.99704160447350683650e+03, 2.82619278517639096600e+03,
          3.36093607810698293419e+02)
_J1_RP = (-8.99971225705559398224e+08, 4.52228297998194034323e+11, -7.27494245221818276015e+13,
          3.68295732863852883286e+15)
_J1_RQ = (6.20836478118054335476e+02, 2.56987256757748830383e+05, 8.35146791431949253037e+07,
          2.21511595479792499675e+10, 4.74914122079991414898e+12, 7.84369607876235854894e+14,
          8.95222336184627338078e+16, 5.32278620332680085395e+18)
_Y1_YP = (1.26320474790178026440e+09, -6.47355876379160291031e+11, 1.14509511541823727583e+14,
          -8.12770255501325109621e+15, 2.02439475713594898196e+17, -7.78877196265950026825e+17)
_Y1_YQ = (5.94301592346128195359e+02, 2.35564092943068577943e+05, 7.34811944459721705660e+07,
          1.87601316108706159478e+10, 3.88231277496238566008e+12, 6.20557727146953693363e+14,
          6.87141087355300489866e+16, 3.97270608116560655612e+18)
_J1_ASYMPTOTIC = (_J1_PP, _J1_PQ, _J1_QP, _J1_QQ)


def _j1(xp: Any, x: Any) -> Any:
    negative = x < 0
    x = xp.where(negative, -x, x)  # Math.h: -bessel_j1_forward(-x)
    xx = x * x
    middle = _horner(xx, _J1_RP) / _horner(xx, _J1_RQ) * x * (xx - 1.46819706421238932572e+01) \
        * (xx - 4.92184563216946036703e+01)
    large = _asymptotic(xp, x, 5.0 / x * (5.0 / x), _J1_ASYMPTOTIC, _THPIO4, second=False)
    value = xp.where(x <= 5.0, middle, large)
    return xp.where(negative, -value, value)


def _y1_small(xp: Any, x: Any, xx: Any) -> Any:
    return x * (_horner(xx, _Y1_YP) / _horner(xx, _Y1_YQ)) + _TWOOPI * (_j1(xp, x) * xp.log(x) - 1.0 / x)


def bessel_j1(xp: Any, self: Any) -> Any:
    """Math.h ``bessel_j1_forward``: J1(x), odd."""
    x = _floating(xp, "special_bessel_j1", self)
    with np.errstate(all="ignore"):
        return _j1(xp, x).astype(x.dtype, copy=False)


def bessel_y1(xp: Any, self: Any) -> Any:
    """Math.h ``bessel_y1_forward``: Y1(x)."""
    return _second_kind(xp, "special_bessel_y1", self, 1)


# -- Airy Ai (Math.h airy_ai_forward) ---------------------------------------------------------
_AI_AN = (3.46538101525629032477e-01, 1.20075952739645805542e+01, 7.62796053615234516538e+01,
          1.68089224934630576269e+02, 1.59756391350164413639e+02, 7.05360906840444183113e+01,
          1.40264691163389668864e+01, 9.99999999999999995305e-01)
_AI_AD = (5.67594532638770212846e-01, 1.47562562584847203173e+01, 8.45138970141474626562e+01,
          1.77318088145400459522e+02, 1.64234692871529701831e+02, 7.14778400825575695274e+01,
          1.40959135607834029598e+01, 1.00000000000000000470e+00)
_AI_AFN = (-1.31696323418331795333e-01, -6.26456544431912369773e-01, -6.93158036036933542233e-01,
           -2.79779981545119124951e-01, -4.91900132609500318020e-02, -4.06265923594885404393e-03,
           -1.59276496239262096340e-04, -2.77649108155232920844e-06, -1.67787698489114633780e-08)
_AI_AFD = (1.33560420706553243746e+01, 3.26825032795224613948e+01, 2.67367040941499554804e+01,
           9.18707402907259625840e+00, 1.47529146771666414581e+00, 1.15687173795188044134e-01,
           4.40291641615211203805e-03, 7.54720348287414296618e-05, 4.51850092970580378464e-07)
_AI_AGN = (1.97339932091685679179e-02, 3.91103029615688277255e-01, 1.06579897599595591108e+00,
           9.39169229816650230044e-01, 3.51465656105547619242e-01, 6.33888919628925490927e-02,
           5.85804113048388458567e-03, 2.82851600836737019778e-04, 6.98793669997260967291e-06,
           8.11789239554389293311e-08, 3.41551784765923618484e-10)
_AI_AGD = (9.30892908077441974853e+00, 1.98352928718312140417e+01, 1.55646628932864612953e+01,
           5.47686069422975497931e+00, 9.54293611618961883998e-01, 8.64580826352392193095e-02,
           4.12656523824222607191e-03, 1.01259085116509135510e-04, 1.17166733214413521882e-06,
           4.91834570062930015649e-09)
_SQPII = 5.64189583547756286948e-01  # 1 / sqrt(pi)


def _airy_negative(xp: Any, x: Any) -> Any:
    """x < -2.09: the oscillating asymptotic expansion."""
    zeta = -2.0 * x * xp.sqrt(-x) / 3.0
    z = 1.0 / zeta
    zz = z * z
    afn, afd, agn, agd = (_horner(zz, c) for c in (_AI_AFN, _AI_AFD, _AI_AGN, _AI_AGD))
    t = zeta + 0.25 * math.pi
    return _SQPII / xp.sqrt(xp.sqrt(-x)) * (xp.sin(t) * (1.0 + z * z * afn / afd) - xp.cos(t) * (z * agn / agd))


def _airy_positive(xp: Any, x: Any) -> Any:
    """x >= 2.09: the decaying asymptotic expansion (Math.h keeps it up to 8.32 too)."""
    zeta = 2.0 * x * xp.sqrt(x) / 3.0
    an, ad = (_horner(1.0 / zeta, c) for c in (_AI_AN, _AI_AD))
    return _SQPII * (an / ad) / (2.0 * xp.sqrt(xp.sqrt(x)) * xp.exp(zeta))


def _airy_series(xp: Any, x: Any, active: Any) -> Any:
    """|x| < 2.09: the Maclaurin series f, g, summed until the term is below epsilon; each
    element stops at its own term, as Math.h's loop does."""
    eps = float(np.finfo(x.dtype).eps)
    f, g, k, m, n = (xp.ones_like(x), x, xp.ones_like(x), xp.ones_like(x), x)
    z = x * x * x
    active = active.copy()
    while bool(active.any()):
        m2 = m * z
        k2 = k + 1.0
        m2 = m2 / k2
        n2 = n * z
        k2 = k2 + 1.0
        n2 = n2 / k2
        m2 = m2 / k2
        f2 = f + m2
        k2 = k2 + 1.0
        n2 = n2 / k2
        g2 = g + n2
        f, g, k, m, n = (xp.where(active, new, old) for new, old in ((f2, f), (g2, g), (k2, k), (m2, m), (n2, n)))
        active = active & (xp.abs(m2 / f2) > eps)
    return 0.355028053887817239260 * f - 0.258819403792806798405 * g


def airy_ai(xp: Any, self: Any) -> Any:
    """Math.h ``airy_ai_forward``: Ai(x); NaN at +-inf, 0 above 103.892."""
    x = _floating(xp, "special_airy_ai", self)
    with np.errstate(all="ignore"):
        negative, positive = x < -2.09, x >= 2.09
        value = _airy_series(xp, x, ~(negative | positive) & ~xp.isnan(x))
        value = xp.where(positive, _airy_positive(xp, x), value)
        value = xp.where(negative, _airy_negative(xp, x), value)
        value = xp.where(x > 103.892, 0.0, value)
        return xp.where(xp.isinf(x), math.nan, value).astype(x.dtype, copy=False)


# -- spherical j0 (Math.h spherical_bessel_j0_forward) ----------------------------------------
def spherical_bessel_j0(xp: Any, self: Any) -> Any:
    """Math.h ``spherical_bessel_j0_forward``: sin(x)/x, its Taylor series below |x| = 0.5."""
    x = _floating(xp, "special_spherical_bessel_j0", self)
    with np.errstate(all="ignore"):
        xx = x * x
        series = 1.0 + xx * (-1.0 / 6.0 + xx * (1.0 / 120.0 + xx * (-1.0 / 5040.0 + xx * (
            1.0 / 362880.0 + xx * (-1.0 / 39916800.0 + xx * (1.0 / 6227020800.0))))))
        value = xp.where(xp.abs(x) < 0.5, series, xp.sin(x) / x)
        return xp.where(xp.isinf(x), 0.0, value).astype(x.dtype, copy=False)


# -- modified Bessel functions (Cephes, via scipy.special) ------------------------------------
def _scipy_unary(name: str) -> Callable[[Any, Any], Any]:
    """A kernel applying scipy.special's ``name`` elementwise, keeping float dtypes."""

    def run(xp: Any, self: Any) -> Any:
        import scipy.special

        host = self.get() if hasattr(self, "get") else np.asarray(self)
        dtype = host.dtype if np.issubdtype(host.dtype, np.floating) else np.dtype(np.float32)
        value = getattr(scipy.special, name)(host.astype(np.float64))
        return xp.asarray(np.asarray(value).astype(dtype))

    run.__name__ = name
    run.__doc__ = f"scipy.special.{name} (Cephes, as PyTorch's CPU kernel), in the input's float dtype."
    return run


modified_bessel_i0 = _scipy_unary("i0")
modified_bessel_i1 = _scipy_unary("i1")
modified_bessel_k0 = _scipy_unary("k0")
modified_bessel_k1 = _scipy_unary("k1")
scaled_modified_bessel_k0 = _scipy_unary("k0e")
scaled_modified_bessel_k1 = _scipy_unary("k1e")
