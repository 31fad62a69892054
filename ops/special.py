"""Special functions (issue 22): modified Bessel and scaled modified
Bessel functions. Their kernels are Cephes (see kernels/special.py);
PyTorch's derivatives.yaml has no derivative for any of them, and neither
has gradview. Shapes are the unary float rule: the input's sizes, in a
floating dtype.

The Bessel functions J0/J1/Y0/Y1 and Airy's Ai are not here yet: PyTorch's kernels
(Math.h bessel_j0_forward, airy_ai_forward) differ from scipy's by up to 3e-6, so
they need a port of PyTorch's code, not scipy.
"""

from ..kernels import special
from .pointwise import binary_float_shapes, unary_float_shapes
from .registry import kernel, no_gradient, shape_rule

_NO_DERIVATIVE = "PyTorch has no derivative for it (derivatives.yaml: not implemented)"

_UNARY = {
    "aten::special_modified_bessel_i0": special.modified_bessel_i0,
    "aten::special_modified_bessel_i1": special.modified_bessel_i1,
    "aten::special_modified_bessel_k0": special.modified_bessel_k0,
    "aten::special_modified_bessel_k1": special.modified_bessel_k1,
    "aten::special_scaled_modified_bessel_k0": special.scaled_modified_bessel_k0,
    "aten::special_scaled_modified_bessel_k1": special.scaled_modified_bessel_k1,
}

shape_rule(*_UNARY)(unary_float_shapes)
for _name, _fn in _UNARY.items():
    kernel(_name)(_fn)
no_gradient(*_UNARY, reason=_NO_DERIVATIVE)

# -- aten::special_zeta: Hurwitz zeta; derivatives.yaml: not implemented for either input --
shape_rule("aten::special_zeta")(binary_float_shapes)
kernel("aten::special_zeta")(special.zeta)
no_gradient("aten::special_zeta", reason=_NO_DERIVATIVE)
