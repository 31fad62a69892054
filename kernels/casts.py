"""Copies, dtype casts and ``*_like`` constructors: contiguous, clone, detach,
type_as, the ``to`` overloads, zeros_like / empty_like / ones_like / full_like,
and the functional forms AOTAutograd's graphs use: ``_to_copy`` (always a copy;
bfloat16, which NumPy/CuPy lack, is refused), ``copy`` (``self``'s shape and
dtype, ``src`` broadcast in) and ``new_empty_strided`` (zeros).

Casts return their input unchanged when it already has the target dtype
(unless ``copy=True``), as PyTorch does; ``contiguous`` copies only a
non-contiguous array. Device arguments are accepted and ignored: arrays stay
on the backend that runs the graph. ``empty_like`` fills with zeros
(PyTorch leaves the values undefined).

Kernels call only ``xp.<function>`` and array methods, so they run on NumPy
and CuPy alike.
"""

from __future__ import annotations

from typing import Any

from .dtypes import SCALAR_TYPES, is_floating, to_dtype
from .factories import _normal, _uniform
from .protocol import KernelError
from .shapes import _cast, check_expandable

__all__: list[str] = []  # the kernels are bound to their ops in gradview.ops.casts


# -- copies, casts, *_like -----------------------------------------------------------
def contiguous(xp: Any, self: Any, memory_format: int = 0) -> Any:
    return self if self.flags.c_contiguous else self.copy(order="C")


def clone(xp: Any, self: Any, memory_format: int | None = None) -> Any:
    return self.copy()


def detach(xp: Any, self: Any) -> Any:
    """A new array object on the same memory: the runtime maps arrays to tensors by
    identity, and detach's result must be a tensor of its own, cut from autograd."""
    return self.view()


def alias(xp: Any, self: Any) -> Any:
    """A view of the whole tensor (AOTAutograd's graphs mark saved values with it):
    a new array object on the same memory, as detach's, but still in autograd."""
    return self.view()


def _dtype_or(self: Any, dtype: int | None) -> Any:
    return self.dtype if dtype is None else to_dtype(dtype)


def type_as(xp: Any, self: Any, other: Any) -> Any:
    return _cast(self, other.dtype)


def zeros_like(
    xp: Any, self: Any, dtype: int | None = None, layout: Any = None, device: Any = None,
    pin_memory: Any = None, memory_format: Any = None,
) -> Any:
    return xp.zeros(self.shape, dtype=_dtype_or(self, dtype))


def ones_like(
    xp: Any, self: Any, dtype: int | None = None, layout: Any = None, device: Any = None,
    pin_memory: Any = None, memory_format: Any = None,
) -> Any:
    return xp.ones(self.shape, dtype=_dtype_or(self, dtype))


def full_like(
    xp: Any, self: Any, fill_value: Any, dtype: int | None = None, layout: Any = None, device: Any = None,
    pin_memory: Any = None, memory_format: Any = None,
) -> Any:
    return xp.full(self.shape, fill_value, dtype=_dtype_or(self, dtype))


def new_empty_strided(
    xp: Any, self: Any, size: Any, stride: Any, dtype: int | None = None, layout: Any = None,
    device: Any = None, pin_memory: Any = None,
) -> Any:
    """Zeros of ``size`` in ``self``'s dtype unless ``dtype`` says (PyTorch leaves the values
    undefined; the strides are layout only, which NumPy arrays here do not keep)."""
    if len(size) != len(stride):
        raise KernelError(
            f"new_empty_strided: mismatch in length of strides and shape ({len(stride)} vs {len(size)})"
        )
    return xp.zeros(tuple(int(s) for s in size), dtype=_dtype_or(self, dtype))


def to_dtype_(
    xp: Any, self: Any, dtype: int, non_blocking: bool = False, copy: bool = False, memory_format: Any = None
) -> Any:
    target = to_dtype(dtype)
    return self.astype(target) if copy else _cast(self, target)


def to_other(
    xp: Any, self: Any, other: Any, non_blocking: bool = False, copy: bool = False, memory_format: Any = None
) -> Any:
    return self.astype(other.dtype) if copy else _cast(self, other.dtype)


def to_device(
    xp: Any, self: Any, device: Any, dtype: int, non_blocking: bool = False, copy: bool = False,
    memory_format: Any = None,
) -> Any:
    return to_dtype_(xp, self, dtype, non_blocking, copy)


def to_prim_device(
    xp: Any, self: Any, device: Any, dtype: int | None = None, non_blocking: bool = False, copy: bool = False
) -> Any:
    target = _dtype_or(self, dtype)
    return self.astype(target) if copy else _cast(self, target)


def to_prim_dtype(
    xp: Any, self: Any, dtype: int | None = None, non_blocking: bool = False, copy: bool = False
) -> Any:
    return to_prim_device(xp, self, None, dtype, non_blocking, copy)


def to_dtype_layout(
    xp: Any, self: Any, dtype: int | None = None, layout: int | None = None, device: Any = None,
    pin_memory: bool | None = None, non_blocking: bool = False, copy: bool = False, memory_format: Any = None,
) -> Any:
    """``x.to(dtype=..., device=...)`` written with keywords: ``layout`` may only be strided."""
    if layout not in (None, 0):  # torch.strided is layout 0
        raise KernelError(f"to: only the strided layout is supported, got layout {layout}")
    return to_prim_device(xp, self, device, dtype, non_blocking, copy)


def to_prim_other(xp: Any, self: Any, non_blocking: bool = False, copy: bool = False) -> Any:
    return self.copy() if copy else self


# -- AOTAutograd's functional forms: _to_copy, copy ------------------------------------------
# ScalarTypes PyTorch has and NumPy/CuPy do not, named for the refusal.
_NO_ARRAY_DTYPE = {8: "ComplexHalf", 15: "BFloat16"}


def to_copy(
    xp: Any, self: Any, dtype: int | None = None, layout: int | None = None, device: Any = None,
    pin_memory: bool | None = None, non_blocking: bool = False, memory_format: Any = None,
) -> Any:
    """``_to_copy``: always a new array, converted to ``dtype`` (the input's when None).

    A dtype NumPy/CuPy cannot hold (bfloat16, the CPU autocast dtype) is refused, never
    computed in another dtype: the results would silently differ from PyTorch's."""
    if layout not in (None, 0):  # torch.strided is layout 0
        raise KernelError(f"_to_copy: only the strided layout is supported, got layout {layout}")
    if dtype is not None and dtype not in SCALAR_TYPES:
        name = _NO_ARRAY_DTYPE.get(dtype, f"ScalarType {dtype}")
        raise KernelError(
            f"_to_copy: gradview cannot compute in {name} (NumPy/CuPy have no such dtype); "
            "run the model without autocast, or in float32/float16"
        )
    return self.astype(self.dtype if dtype is None else to_dtype(dtype))


def copy(xp: Any, self: Any, src: Any, non_blocking: bool = False) -> Any:
    """The functional ``copy`` AOTAutograd writes for ``z[:, :2] = src``: a new array with
    ``self``'s shape and dtype holding ``src`` broadcast into it (``self``'s values unused)."""
    check_expandable("copy", src.shape, self.shape)
    out = xp.empty(self.shape, dtype=self.dtype)
    out[...] = src  # broadcasts, and casts to self's dtype as copy_ does
    return out


# -- rand_like, randn_like: gradview's seeded draws (kernels/factories.py), never PyTorch's values ---
def _random_dtype(op: str, self: Any, dtype: int | None) -> Any:
    out = self.dtype if dtype is None else to_dtype(dtype)
    if not is_floating(out) or out.kind == "c":
        raise KernelError(f"{op}: needs a floating-point result dtype, got {out} (pass a floating dtype)")
    return out


def rand_like(
    xp: Any, self: Any, dtype: int | None = None, layout: Any = None, device: Any = None,
    pin_memory: Any = None, memory_format: Any = None,
) -> Any:
    """Uniform on [0, 1): values rounding up to 1 in a narrower dtype are clamped below it."""
    return _uniform(xp, "rand_like", self.shape, _random_dtype("rand_like", self, dtype))


def randn_like(
    xp: Any, self: Any, dtype: int | None = None, layout: Any = None, device: Any = None,
    pin_memory: Any = None, memory_format: Any = None,
) -> Any:
    return _normal(xp, "randn_like", self.shape, _random_dtype("randn_like", self, dtype))
