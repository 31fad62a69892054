"""Special functions with no derivative in PyTorch: Hurwitz zeta (``special_zeta``).

PyTorch's CPU kernels (aten/src/ATen/native/Math.h) are ports of Cephes, the
same routines scipy.special calls, so scipy's values are PyTorch's. They
compute in double here and round to the inputs' floating dtype; bool and
integer inputs give the default float dtype (float32), as PyTorch's
``unary_float`` ops do. (The Bessel functions are in kernels/bessel.py.)
"""

from __future__ import annotations

from typing import Any

import numpy as np


def zeta(xp: Any, self: Any, other: Any) -> Any:
    """Hurwitz zeta(x, q): scipy.special.zeta is Cephes' zeta, PyTorch's zeta in Math.h."""
    import scipy.special

    hosts = [v.get() if hasattr(v, "get") else np.asarray(v) for v in (self, other)]
    dtype = np.result_type(*hosts)
    if not np.issubdtype(dtype, np.floating):
        dtype = np.dtype(np.float32)
    value = scipy.special.zeta(hosts[0].astype(np.float64), hosts[1].astype(np.float64))
    return xp.asarray(np.asarray(value).astype(dtype))
