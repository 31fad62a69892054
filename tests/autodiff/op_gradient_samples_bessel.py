"""The catalogue's sample calls for the Bessel family (ops/bessel.py): J0, J1, Y0, Y1, Airy Ai,
spherical j0 and the modified Bessel functions, whose results never require grad (see
op_gradient_samples.py, which imports this module at its end to add them to SAMPLES)."""

from __future__ import annotations

from .op_gradient_samples import S, add, f, pos

__all__: list[str] = []

add("special_bessel_j0 special_bessel_j1 special_airy_ai special_spherical_bessel_j0", S(f(3, 4, lo=-8.0, hi=8.0)))
add("special_bessel_y0 special_bessel_y1", S(f(3, 4, lo=0.1, hi=8.0)))
add("special_modified_bessel_i0 special_modified_bessel_i1", S(f(3, 4)))
add("special_modified_bessel_k0 special_modified_bessel_k1", S(pos(3, 4)))
add("special_scaled_modified_bessel_k0 special_scaled_modified_bessel_k1", S(pos(3, 4)))
