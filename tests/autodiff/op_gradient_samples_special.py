"""The catalogue's sample calls for issue 22's special functions (Hurwitz zeta): see
op_gradient_samples.py, which imports this module at its end to add them to SAMPLES."""

from __future__ import annotations

from .op_gradient_samples import S, add, f, pos

__all__: list[str] = []

add("special_zeta", S(f(3, 4, lo=1.5, hi=3.0), pos(3, 4)))
