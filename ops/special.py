"""Special functions (issue 22): Hurwitz zeta. Its kernel is Cephes (see
kernels/special.py); PyTorch's derivatives.yaml has no derivative for it, and
neither has gradview. (The Bessel functions are in ops/bessel.py.)
"""

from ..kernels import special
from .pointwise import binary_float_shapes
from .registry import kernel, no_gradient, shape_rule

_NO_DERIVATIVE = "PyTorch has no derivative for it (derivatives.yaml: not implemented)"

# -- aten::special_zeta: Hurwitz zeta; derivatives.yaml: not implemented for either input --
shape_rule("aten::special_zeta")(binary_float_shapes)
kernel("aten::special_zeta")(special.zeta)
no_gradient("aten::special_zeta", reason=_NO_DERIVATIVE)
