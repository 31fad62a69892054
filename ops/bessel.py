"""Bessel and Airy functions (issue 22): J0, J1, Y0, Y1, Airy Ai, the spherical j0,
the modified Bessel functions I0, I1, K0, K1 and the scaled K0, K1.

Their kernels port PyTorch's Math.h (see kernels/bessel.py). Shapes are the
unary float rule: the input's sizes, in a floating dtype. PyTorch's
derivatives.yaml marks their input ``non_differentiable``: autograd records
nothing, so their results never require grad, and neither do gradview's.
"""

from ..kernels import bessel
from .pointwise import unary_float_shapes
from .registry import kernel, no_gradient, shape_rule

_NON_DIFFERENTIABLE = "PyTorch marks its input non_differentiable (derivatives.yaml): its result never requires grad"

_UNARY = {
    "aten::special_bessel_j0": bessel.bessel_j0,
    "aten::special_bessel_j1": bessel.bessel_j1,
    "aten::special_bessel_y0": bessel.bessel_y0,
    "aten::special_bessel_y1": bessel.bessel_y1,
    "aten::special_airy_ai": bessel.airy_ai,
    "aten::special_spherical_bessel_j0": bessel.spherical_bessel_j0,
    "aten::special_modified_bessel_i0": bessel.modified_bessel_i0,
    "aten::special_modified_bessel_i1": bessel.modified_bessel_i1,
    "aten::special_modified_bessel_k0": bessel.modified_bessel_k0,
    "aten::special_modified_bessel_k1": bessel.modified_bessel_k1,
    "aten::special_scaled_modified_bessel_k0": bessel.scaled_modified_bessel_k0,
    "aten::special_scaled_modified_bessel_k1": bessel.scaled_modified_bessel_k1,
}

shape_rule(*_UNARY)(unary_float_shapes)
for _name, _fn in _UNARY.items():
    kernel(_name)(_fn)
no_gradient(*_UNARY, reason=_NON_DIFFERENTIABLE, non_differentiable=True)
