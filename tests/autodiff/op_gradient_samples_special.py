"""The catalogue's sample calls for issue 22's special functions (modified Bessel, scaled
modified Bessel, Hurwitz zeta): see op_gradient_samples.py, which imports this module at its
end to add them to SAMPLES."""

from __future__ import annotations

from .op_gradient_samples import S, add, f, pos

__all__: list[str] = []

add("special_modified_bessel_i0 special_modified_bessel_i1", S(f(3, 4)))
add("special_modified_bessel_k0 special_modified_bessel_k1", S(pos(3, 4)))
add("special_scaled_modified_bessel_k0 special_scaled_modified_bessel_k1", S(pos(3, 4)))
add("special_zeta", S(f(3, 4, lo=1.5, hi=3.0), pos(3, 4)))
