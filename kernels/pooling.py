"""Average pooling (fixed and adaptive windows) and its backward kernels.

* **avg_pool2d** sums every window of the zero-padded input at once
  (``sliding_window_view``) and divides by PyTorch's divisor: the window's
  size clipped to the padded input (``count_include_pad``), or the number of
  real input elements in it, or ``divisor_override``. Integer inputs divide
  with truncation toward zero, as PyTorch's integer kernels do.
* **adaptive_avg_pool1d/2d/3d** average output cell ``i`` over input rows
  ``floor(i * H / OH)`` to ``ceil((i + 1) * H / OH)``: windows of unequal
  sizes, so they are written as a 0/1 membership matrix per spatial dim and
  the pooling is ``M_h @ x @ M_w^T`` divided by the window sizes (3d: one
  dim at a time).
* The backward kernels spread each output gradient, divided the same way,
  back over its window (membership matrices again, or one strided add per
  kernel tap).

Max pooling lives in nn.py. Float16 is computed in float32 and cast back.
"""

from __future__ import annotations

from typing import Any

from .dtypes import is_floating, to_dtype
from .nn import _pool_geometry
from .protocol import KernelError

__all__ = [
    "avg_pool2d",
    "avg_pool2d_backward",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool2d_backward",
    "adaptive_avg_pool3d",
    "adaptive_avg_pool3d_backward",
    "max_pool2d_double_backward",
]


def _compute_dtype(dtype: Any) -> Any:
    return to_dtype("Float") if dtype == to_dtype("Half") else dtype


# -- avg_pool2d -------------------------------------------------------------------------------
def _avg_geometry(op: str, input: Any, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool,
                  divisor_override: Any) -> tuple[list[int], list[int], list[int], list[int]]:
    if not (is_floating(input.dtype) or input.dtype == to_dtype("Long")):
        raise KernelError(f'{op}: "avg_pool2d" is implemented for floating-point and int64 tensors, not {input.dtype}')
    if divisor_override is not None and divisor_override == 0:
        raise KernelError(f"{op}: divisor must be not zero")
    kernel, steps, pads, _, sizes = _pool_geometry(op, tuple(input.shape), kernel_size, stride, padding, 1, ceil_mode)
    return kernel, steps, pads, sizes


def _divisors(xp: Any, size: int, out: int, kernel: int, stride: int, pad: int) -> tuple[Any, Any]:
    """Per output position along one dim: the window's length within the padded
    input, and its number of real input elements (both int64 vectors)."""
    start = xp.arange(out, dtype=to_dtype("Long")) * stride - pad
    end = xp.minimum(start + kernel, size + pad)
    return end - start, xp.minimum(end, size) - xp.maximum(start, 0)


def _avg_divisor(
    xp: Any, shape: tuple[int, ...], kernel: list[int], steps: list[int], pads: list[int], sizes: list[int],
    count_include_pad: bool, divisor_override: Any,
) -> tuple[Any, Any]:
    """(divisor, inside) of shape (OH, OW): what each window's sum is divided by, and
    whether the window holds any input element (PyTorch writes 0 where it does not)."""
    (pool_h, real_h), (pool_w, real_w) = (
        _divisors(xp, shape[-2 + i], sizes[i], kernel[i], steps[i], pads[i]) for i in range(2)
    )
    inside = (real_h[:, None] > 0) & (real_w[None, :] > 0)
    if divisor_override is not None:
        divisor = xp.full((sizes[0], sizes[1]), int(divisor_override), dtype=to_dtype("Long"))
    elif count_include_pad:
        divisor = pool_h[:, None] * pool_w[None, :]
    else:
        divisor = real_h[:, None] * real_w[None, :]
    return xp.where(inside, divisor, 1), inside


def _divide(xp: Any, total: Any, divisor: Any, dtype: Any) -> Any:
    """total / divisor in ``dtype``: true division for floats, truncation toward zero for integers."""
    if is_floating(dtype):
        return total / divisor.astype(total.dtype)
    quotient = xp.abs(total) // divisor
    return xp.where(total < 0, -quotient, quotient)


def _padded_extent(size: int, out: int, kernel: int, stride: int, pad: int) -> int:
    """How far the zero-padded input must reach for every window to fit."""
    return max(size + pad, (out - 1) * stride + kernel)


def avg_pool2d(
    xp: Any, self: Any, kernel_size: Any, stride: Any = (), padding: Any = 0, ceil_mode: bool = False,
    count_include_pad: bool = True, divisor_override: Any = None,
) -> Any:
    op = "avg_pool2d"
    kernel, steps, pads, sizes = _avg_geometry(op, self, kernel_size, stride, padding, ceil_mode, divisor_override)
    dtype = self.dtype
    x = self.astype(_compute_dtype(dtype), copy=False)
    h, w = x.shape[-2:]
    rows = _padded_extent(h, sizes[0], kernel[0], steps[0], pads[0])
    cols = _padded_extent(w, sizes[1], kernel[1], steps[1], pads[1])
    widths = [(0, 0)] * (x.ndim - 2) + [(pads[0], rows - h - pads[0]), (pads[1], cols - w - pads[1])]
    windows = xp.lib.stride_tricks.sliding_window_view(xp.pad(x, widths), kernel, axis=(-2, -1))
    windows = windows[..., :: steps[0], :: steps[1], :, :][..., : sizes[0], : sizes[1], :, :]
    total = windows.sum(axis=(-2, -1))
    divisor, inside = _avg_divisor(xp, x.shape, kernel, steps, pads, sizes, count_include_pad, divisor_override)
    out = xp.where(inside, _divide(xp, total, divisor, x.dtype), 0)
    return xp.ascontiguousarray(out).astype(dtype, copy=False)


def avg_pool2d_backward(
    xp: Any, grad_output: Any, self: Any, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool,
    count_include_pad: bool, divisor_override: Any,
) -> Any:
    """Each output gradient, divided by its window's divisor, added to every real input element of the window."""
    op = "avg_pool2d_backward"
    kernel, steps, pads, sizes = _avg_geometry(op, self, kernel_size, stride, padding, ceil_mode, divisor_override)
    expected = (*self.shape[:-2], *sizes)
    if tuple(grad_output.shape) != expected:
        raise KernelError(f"{op}: expected grad_output of shape {list(expected)}, got {list(grad_output.shape)}")
    dtype = grad_output.dtype
    g = grad_output.astype(_compute_dtype(dtype), copy=False)
    divisor, inside = _avg_divisor(xp, self.shape, kernel, steps, pads, sizes, count_include_pad, divisor_override)
    share = xp.where(inside, g / divisor.astype(g.dtype), 0)
    h, w = self.shape[-2:]
    rows = _padded_extent(h, sizes[0], kernel[0], steps[0], pads[0])
    cols = _padded_extent(w, sizes[1], kernel[1], steps[1], pads[1])
    grad = xp.zeros((*self.shape[:-2], rows, cols), dtype=g.dtype)
    last_row, last_col = (sizes[0] - 1) * steps[0] + 1, (sizes[1] - 1) * steps[1] + 1
    for i in range(kernel[0]):  # one strided add per kernel tap
        for j in range(kernel[1]):
            grad[..., i : i + last_row : steps[0], j : j + last_col : steps[1]] += share
    grad = grad[..., pads[0] : pads[0] + h, pads[1] : pads[1] + w]
    return xp.ascontiguousarray(grad).astype(dtype, copy=False)


# -- adaptive average pooling ---------------------------------------------------------------------
def _membership(xp: Any, size: int, out: int, dtype: Any) -> tuple[Any, Any]:
    """(M, counts): M[i, h] = 1 where input h is in output cell i's window; counts = window sizes."""
    cells = xp.arange(out, dtype=to_dtype("Long"))
    start = (cells * size) // out
    end = ((cells + 1) * size + out - 1) // out
    positions = xp.arange(size, dtype=to_dtype("Long"))
    member = (positions[None, :] >= start[:, None]) & (positions[None, :] < end[:, None])
    return member.astype(dtype), (end - start).astype(dtype)


def _check_adaptive(op: str, input: Any, output_size: Any, dims: int) -> list[int]:
    sizes = [output_size] if isinstance(output_size, int) else list(output_size)
    if len(sizes) != dims:
        raise KernelError(f"{op}: output_size must be {dims}, got {sizes}")
    if any(s < 0 for s in sizes):
        raise KernelError(f"{op}: elements of output_size must be greater than or equal to 0, got {sizes}")
    if input.ndim not in (dims + 1, dims + 2):
        raise KernelError(f"{op}: expected a {dims + 1}-D or {dims + 2}-D tensor, but got {list(input.shape)}")
    if any(s == 0 for s in input.shape[1:]):
        raise KernelError(
            f"{op}: expected input to have non-zero size for non-batch dimensions, but input has sizes {list(input.shape)}"
        )
    if not is_floating(input.dtype):
        name = "adaptive_avg_pool3d" if dims == 3 else "adaptive_avg_pool2d"
        raise KernelError(f'{op}: "{name}" is not implemented for {input.dtype} tensors')
    return sizes


def _adaptive_2d(xp: Any, x: Any, sizes: list[int]) -> Any:
    """Adaptive average of the last two dims of x (float) to ``sizes``."""
    m_h, n_h = _membership(xp, x.shape[-2], sizes[0], x.dtype)
    m_w, n_w = _membership(xp, x.shape[-1], sizes[1], x.dtype)
    total = xp.einsum("ih,...hw,jw->...ij", m_h, x, m_w, optimize=True)
    return total / (n_h[:, None] * n_w[None, :])


def adaptive_avg_pool2d(xp: Any, self: Any, output_size: Any) -> Any:
    sizes = _check_adaptive("adaptive_avg_pool2d", self, output_size, 2)
    dtype = self.dtype
    out = _adaptive_2d(xp, self.astype(_compute_dtype(dtype), copy=False), sizes)
    return xp.ascontiguousarray(out).astype(dtype, copy=False)


def adaptive_avg_pool1d(xp: Any, self: Any, output_size: Any) -> Any:
    """(N, C, L) or (C, L): the 2-d pooling of a height-1 input, as PyTorch computes it."""
    sizes = _check_adaptive("adaptive_avg_pool1d", self, output_size, 1)
    dtype = self.dtype
    x = self.astype(_compute_dtype(dtype), copy=False)[..., None, :]
    out = _adaptive_2d(xp, x, [1, sizes[0]])[..., 0, :]
    return xp.ascontiguousarray(out).astype(dtype, copy=False)


def adaptive_avg_pool2d_backward(xp: Any, grad_output: Any, self: Any) -> Any:
    """Spread each output gradient evenly over its window; the output size is grad_output's."""
    op = "_adaptive_avg_pool2d_backward"
    if grad_output.ndim != self.ndim or tuple(grad_output.shape[:-2]) != tuple(self.shape[:-2]):
        raise KernelError(
            f"{op}: expected grad_output with the input's leading dims {list(self.shape[:-2])}, "
            f"got {list(grad_output.shape)}"
        )
    _check_adaptive(op, self, list(grad_output.shape[-2:]), 2)
    dtype = grad_output.dtype
    g = grad_output.astype(_compute_dtype(dtype), copy=False)
    m_h, n_h = _membership(xp, self.shape[-2], g.shape[-2], g.dtype)
    m_w, n_w = _membership(xp, self.shape[-1], g.shape[-1], g.dtype)
    share = g / (n_h[:, None] * n_w[None, :])
    grad = xp.einsum("ih,...ij,jw->...hw", m_h, share, m_w, optimize=True)
    return xp.ascontiguousarray(grad).astype(dtype, copy=False)


def _adaptive_3d(xp: Any, x: Any, sizes: list[int]) -> Any:
    """Adaptive average of the last three dims of x (float) to ``sizes``: one dim at a time
    (contract it with its window membership, divide by the window sizes)."""
    for offset, out in enumerate(sizes):
        axis = x.ndim - 3 + offset
        member, counts = _membership(xp, x.shape[axis], out, x.dtype)
        pooled = xp.moveaxis(xp.tensordot(x, member, axes=([axis], [1])), -1, axis)
        x = pooled / counts.reshape((-1,) + (1,) * (2 - offset))
    return x


def adaptive_avg_pool3d(xp: Any, self: Any, output_size: Any) -> Any:
    """(N, C, D, H, W) or (C, D, H, W): output cell (i, j, k) averages its window of each dim."""
    sizes = _check_adaptive("adaptive_avg_pool3d", self, output_size, 3)
    dtype = self.dtype
    out = _adaptive_3d(xp, self.astype(_compute_dtype(dtype), copy=False), sizes)
    return xp.ascontiguousarray(out).astype(dtype, copy=False)


def adaptive_avg_pool3d_backward(xp: Any, grad_output: Any, self: Any) -> Any:
    """Spread each output gradient evenly over its window; the output size is grad_output's."""
    op = "_adaptive_avg_pool3d_backward"
    if grad_output.ndim != self.ndim or tuple(grad_output.shape[:-3]) != tuple(self.shape[:-3]):
        raise KernelError(
            f"{op}: expected grad_output with the input's leading dims {list(self.shape[:-3])}, "
            f"got {list(grad_output.shape)}"
        )
    _check_adaptive(op, self, list(grad_output.shape[-3:]), 3)
    dtype = grad_output.dtype
    g = grad_output.astype(_compute_dtype(dtype), copy=False)
    for offset in range(3):
        axis = g.ndim - 3 + offset
        member, counts = _membership(xp, self.shape[axis], g.shape[axis], g.dtype)
        share = g / counts.reshape((-1,) + (1,) * (2 - offset))
        g = xp.moveaxis(xp.tensordot(share, member, axes=([axis], [0])), -1, axis)
    return xp.ascontiguousarray(g).astype(dtype, copy=False)


def max_pool2d_double_backward(
    xp: Any, grad: Any, self: Any, kernel_size: Any, stride: Any, padding: Any, dilation: Any, ceil_mode: bool,
    indices: Any,
) -> Any:
    """The gradient of max_pool2d_with_indices_backward with respect to its grad_output:
    ``grad`` (the input's shape) read at every window's maximum, the shape of ``indices``
    (PyTorch's max_pool_double_backward)."""
    op = "max_pool2d_double_backward"
    if tuple(grad.shape) != tuple(self.shape):
        raise KernelError(f"{op}: expected grad of the input's shape {list(self.shape)}, got {list(grad.shape)}")
    if tuple(indices.shape[:-2]) != tuple(self.shape[:-2]):
        raise KernelError(f"{op}: indices of shape {list(indices.shape)} do not match the input {list(self.shape)}")
    planes = grad.reshape(-1, self.shape[-2] * self.shape[-1]) if grad.size else grad.reshape(0, 1)
    positions = indices.reshape(planes.shape[0], -1).astype(to_dtype("Long"), copy=False)
    return xp.take_along_axis(planes, positions, axis=1).reshape(indices.shape)
