"""gradview.kernels: TorchScript's operators as pure functions on arrays.

Every kernel takes the array namespace ``xp`` (NumPy or CuPy) first and then
the operator's arguments in schema order, and knows nothing about graphs.
Kernels are registered under the schema's qualified name
(``"aten::add.Tensor"``); :func:`kernel_for` finds one.

Importing this package imports every kernel family, which registers them.
"""

from . import (  # noqa: F401 - imported for their registrations  # noqa: F401,I001 - reductions, shapes, indexing, losses (issue 10)
    activation_backward,
    activations,
    attention,
    autocast,
    autodiff_ops,
    broadcast_backward,  # noqa: F401,I001 - broadcast_tensors' gradient (issue 10, op catalogue)
    casts,
    convolution,
    elementwise,
    embedding,
    factories,
    gradient_helpers,
    indexing,
    inplace,
    linalg,
    linalg_extra,
    lists,
    losses,
    nn,
    normalization,
    pointwise_extra,
    pointwise_math,
    pooling,
    recurrent,
    reductions,
    reductions_extra,
    scalar_math,
    script_queries,
    shapes,
    shapes_extra,
    tuples,
    view_backward,
)
from .backend import Backend, get_backend
from .dtypes import DEFAULT_FLOAT, dtype_name, result_dtype, to_dtype
from .registry import KERNELS, KernelError, kernel_for, register

__all__ = [
    "Backend",
    "DEFAULT_FLOAT",
    "KERNELS",
    "KernelError",
    "dtype_name",
    "get_backend",
    "kernel_for",
    "register",
    "result_dtype",
    "to_dtype",
]
