"""gradview.kernels: the array code behind TorchScript's operators.

Every kernel takes the array namespace ``xp`` (NumPy or CuPy) first and then
the operator's arguments in schema order, and knows nothing about graphs or
op names: ``gradview.ops`` binds each overload (``"aten::add.Tensor"``) to its
kernel, next to the op's shape rule and gradient. One module per op family,
plus the backend, PyTorch's dtype rules and the kernel protocol.
"""

from .backend import Backend, get_backend
from .dtypes import DEFAULT_FLOAT, dtype_name, result_dtype, to_dtype
from .protocol import KernelError

__all__ = [
    "Backend",
    "DEFAULT_FLOAT",
    "KernelError",
    "dtype_name",
    "get_backend",
    "result_dtype",
    "to_dtype",
]
