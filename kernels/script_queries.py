"""Small ops of scripted PyTorch modules: implicit tensor-to-number conversions,
warnings, questions about a tensor that have one answer on NumPy/CuPy, and the
casts TorchScript's autocast pass inserts (the kernels of
:mod:`gradview.ops.script_queries`).

Scripted ``nn`` modules guard their fast paths with these (``prim::is_nested``,
``prim::type(device)``), and call ``aten::warn`` on deprecated arguments.
"""

from __future__ import annotations

import warnings
from typing import Any

from .dtypes import SCALAR_TYPES, dtype_name, to_dtype
from .protocol import KernelError

__all__ = [
    "scalar_implicit", "float_implicit", "int_implicit", "warn", "is_nested", "device_type",
    "autocast_to_reduced_precision", "autocast_to_full_precision",
]


def _zero_dim(a: Any) -> Any:
    if a.ndim != 0:
        raise KernelError("Cannot input a tensor of dimension other than 0 as a scalar argument")
    return a.item()


def scalar_implicit(xp: Any, a: Any) -> Any:
    """A 0-dim tensor as a Python number of its kind (bool, int or float)."""
    return _zero_dim(a)


def float_implicit(xp: Any, a: Any) -> float:
    return float(_zero_dim(a))


def int_implicit(xp: Any, a: Any) -> int:
    value = _zero_dim(a)  # PyTorch checks the dimension first
    if a.dtype.kind not in "iu":  # bool is not integral here, as in PyTorch
        raise KernelError(f"Cannot input a tensor of type {dtype_name(a.dtype)} as an integral argument")
    return int(value)


def warn(xp: Any, message: str, stacklevel: int = 2) -> None:
    """TorchScript's ``warnings.warn(message)``: a UserWarning, as PyTorch gives."""
    warnings.warn(message, UserWarning, stacklevel=2)


def is_nested(xp: Any, a: Any) -> bool:
    """NumPy and CuPy arrays are never nested tensors."""
    return False


def device_type(xp: Any, device: Any) -> str:
    """The type of a device (``"cpu"`` of ``"cpu"``, ``"cuda"`` of ``"cuda:0"``)."""
    return str(device).split(":", 1)[0]


# -- the autocast casts ------------------------------------------------------------------------
# The casts TorchScript's autocast pass inserts: ``_autocast_to_reduced_precision``
# and ``_autocast_to_full_precision``.
#
# PyTorch decides everything from the arguments (the pass bakes whether autocast
# was enabled for CUDA and for the CPU into ``cuda_enabled``/``cpu_enabled``)
# and from the tensor's device. gradview's device is its backend: NumPy arrays
# are CPU tensors, CuPy arrays CUDA tensors. So:
#
# * when autocast is disabled for the backend's device (its flag is False),
#   both ops are the identity and return their input unchanged;
# * when it is enabled, ``_autocast_to_reduced_precision`` casts a float32
#   tensor to the device's reduced dtype (``cpu_dtype`` or ``cuda_dtype``) and
#   ``_autocast_to_full_precision`` casts a float16 tensor to float32; tensors
#   of any other dtype (float64, integers, bool) pass through unchanged, as in
#   PyTorch.
#
# NumPy and CuPy have no bfloat16 (ScalarType 15, the usual CPU autocast dtype):
# asking for it raises :class:`KernelError`.

_FLOAT = to_dtype("Float")
_HALF = to_dtype("Half")


def _on_cuda(xp: Any) -> bool:
    """The backend's device: CuPy runs graphs as CUDA tensors, NumPy as CPU ones."""
    return getattr(xp, "__name__", "numpy").split(".")[0] == "cupy"


def _enabled(xp: Any, cuda_enabled: bool, cpu_enabled: bool) -> bool:
    return bool(cuda_enabled) if _on_cuda(xp) else bool(cpu_enabled)


def autocast_to_reduced_precision(
    xp: Any, self: Any, cuda_enabled: bool, cpu_enabled: bool, cuda_dtype: Any, cpu_dtype: Any,
) -> Any:
    if self.dtype != _FLOAT or not _enabled(xp, cuda_enabled, cpu_enabled):
        return self
    target = cuda_dtype if _on_cuda(xp) else cpu_dtype
    if isinstance(target, int) and target not in SCALAR_TYPES:
        raise KernelError(
            f"_autocast_to_reduced_precision: ScalarType {target} (bfloat16 is 15) has no NumPy/CuPy dtype"
        )
    return self.astype(to_dtype(target))


def autocast_to_full_precision(xp: Any, self: Any, cuda_enabled: bool, cpu_enabled: bool) -> Any:
    if self.dtype != _HALF or not _enabled(xp, cuda_enabled, cpu_enabled):
        return self
    return self.astype(_FLOAT)
