"""Special functions with no derivative in PyTorch: modified Bessel
functions (``special_modified_bessel_i0/i1/k0/k1``) and the scaled ``k0e/k1e``.

PyTorch's CPU kernels (aten/src/ATen/native/Math.h) are ports of Cephes, the
same routines scipy.special calls, so scipy's values are PyTorch's. They
compute in double here and round to the input's floating dtype; bool and
integer inputs give the default float dtype (float32), as PyTorch's
``unary_float`` ops do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def _unary(name: str) -> Callable[[Any, Any], Any]:
    """A kernel applying scipy.special's ``name`` elementwise, keeping float dtypes."""

    def run(xp: Any, self: Any) -> Any:
        import scipy.special

        host = self.get() if hasattr(self, "get") else np.asarray(self)
        dtype = host.dtype if np.issubdtype(host.dtype, np.floating) else np.dtype(np.float32)
        fn = getattr(scipy.special, name)
        value = fn(host.astype(np.float64))
        return xp.asarray(np.asarray(value).astype(dtype))

    run.__name__ = name
    run.__doc__ = f"scipy.special.{name} (Cephes, as PyTorch's CPU kernel), in the input's float dtype."
    return run


modified_bessel_i0 = _unary("i0")
modified_bessel_i1 = _unary("i1")
modified_bessel_k0 = _unary("k0")
modified_bessel_k1 = _unary("k1")
scaled_modified_bessel_k0 = _unary("k0e")
scaled_modified_bessel_k1 = _unary("k1e")


def zeta(xp: Any, self: Any, other: Any) -> Any:
    """Hurwitz zeta(x, q): scipy.special.zeta is Cephes' zeta, PyTorch's zeta in Math.h."""
    import scipy.special

    hosts = [v.get() if hasattr(v, "get") else np.asarray(v) for v in (self, other)]
    dtype = np.result_type(*hosts)
    if not np.issubdtype(dtype, np.floating):
        dtype = np.dtype(np.float32)
    value = scipy.special.zeta(hosts[0].astype(np.float64), hosts[1].astype(np.float64))
    return xp.asarray(np.asarray(value).astype(dtype))
