"""Small ops of scripted PyTorch modules: implicit tensor-to-number conversions,
warnings, and questions about a tensor that have one answer on NumPy/CuPy.

Scripted ``nn`` modules guard their fast paths with these (``prim::is_nested``,
``prim::type(device)``), and call ``aten::warn`` on deprecated arguments.
"""

from __future__ import annotations

import warnings
from typing import Any

from .dtypes import dtype_name
from .protocol import KernelError

__all__ = [
    "scalar_implicit", "float_implicit", "int_implicit", "warn", "is_nested", "device_type",
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
