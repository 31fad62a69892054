"""The casts TorchScript's autocast pass inserts: ``_autocast_to_reduced_precision``
and ``_autocast_to_full_precision``.

PyTorch decides everything from the arguments (the pass bakes whether autocast
was enabled for CUDA and for the CPU into ``cuda_enabled``/``cpu_enabled``)
and from the tensor's device. gradview's device is its backend: NumPy arrays
are CPU tensors, CuPy arrays CUDA tensors. So:

* when autocast is disabled for the backend's device (its flag is False),
  both ops are the identity and return their input unchanged;
* when it is enabled, ``_autocast_to_reduced_precision`` casts a float32
  tensor to the device's reduced dtype (``cpu_dtype`` or ``cuda_dtype``) and
  ``_autocast_to_full_precision`` casts a float16 tensor to float32; tensors
  of any other dtype (float64, integers, bool) pass through unchanged, as in
  PyTorch.

NumPy and CuPy have no bfloat16 (ScalarType 15, the usual CPU autocast dtype):
asking for it raises :class:`KernelError`.
"""

from __future__ import annotations

from typing import Any

from .dtypes import SCALAR_TYPES, to_dtype
from .protocol import KernelError

__all__ = ["autocast_to_reduced_precision", "autocast_to_full_precision"]

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
