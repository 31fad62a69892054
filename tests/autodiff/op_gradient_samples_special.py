"""The catalogue's sample calls for issue 22's special functions (ops/special.py): see
op_gradient_samples.py, which imports this module at its end to add them to SAMPLES."""

from __future__ import annotations

import torch

from .op_gradient_samples import S, add, f, pos

__all__: list[str] = []

add("special_zeta", S(f(3, 4, lo=1.5, hi=3.0), pos(3, 4)))

# -- the gamma family, error functions, Bessel I0/I1, xlogy and friends --
add("digamma lgamma special_entr", S(pos(3, 4)))
add("polygamma", S(2, pos(3, 4)))
add("mvlgamma", S(f(3, 4, lo=2.5, hi=4.0), 3))
add("erfinv special_ndtri", S(f(3, 4, lo=0.05, hi=0.95)))
add("i0 special_i0e special_i1 special_i1e", S(f(3, 4, lo=-3.0, hi=3.0)))
add("special_ndtr special_log_ndtr special_erfcx sinc frexp.Tensor", S(f(3, 4, lo=-2.0, hi=2.0)))


def _sgn_materialized(x: torch.Tensor) -> torch.Tensor:
    """torch.sgn, whose real backward is an efficient ZeroTensor NumPy cannot read:
    adding ``0 * x`` gives the same values and a plain zero gradient."""
    return torch.sgn(x) + 0 * x


add("sgn", S(f(3, 4, lo=-2.0, hi=2.0), torch=_sgn_materialized))
add("igamma igammac", S(pos(3, 4), pos(3, 4), frozen=(0,)))
add("xlogy.Tensor special_xlog1py", S(f(3, 4), pos(3, 4)))
add("xlogy.Scalar_Self special_xlog1py.self_scalar", S(1.5, pos(3, 4)))
add("xlogy.Scalar_Other", S(f(3, 4), 2.0))
add("special_xlog1py.other_scalar", S(f(3, 4), 0.5))
add("nextafter ldexp.Tensor", S(f(3, 4), f(3, 4)))
