"""Max and average pooling (fixed and adaptive windows) and their backward kernels.

* **max_pool2d** (with indices) stacks the kernel taps of the input padded
  with the lowest value and keeps the first maximum of each window in
  row-major order (the last NaN), as PyTorch's CPU kernel; its backward
  scatter-adds each gradient onto the element its index names.

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

The N-d pools (max and average over 1-d and 3-d
windows, adaptive max pooling, max_unpool) are at the end of this module. Float16 is
computed in float32 and cast back.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from .dtypes import is_floating, to_dtype
from .protocol import KernelError

__all__ = [
    "max_pool2d",
    "max_pool2d_with_indices",
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


def _int_list(value: Any) -> list[int]:
    return [value] if isinstance(value, int) else list(value)


def _check_shape(op: str, name: str, tensor: Any, shape: tuple[int, ...]) -> None:
    if tuple(tensor.shape) != tuple(shape):
        raise KernelError(f"{op}: {name} must have shape {list(shape)}, got {list(tensor.shape)}")


# -- max pooling -----------------------------------------------------------------
def _pair(op: str, name: str, value: Any) -> list[int]:
    items = _int_list(value)
    if len(items) == 1:
        items = items * 2
    if len(items) != 2:
        raise KernelError(f"{op}: {name} must be a single int or two ints, got {items}")
    return items


def _pool_geometry(
    op: str, shape: tuple[int, ...], kernel_size: Any, stride: Any, padding: Any, dilation: Any, ceil_mode: bool
) -> tuple[list[int], list[int], list[int], list[int], list[int]]:
    """Kernel, stride, padding, dilation and output size (rows, cols) as PyTorch computes them."""
    kernel = _pair(op, "kernel_size", kernel_size)
    steps = kernel if not _int_list(stride) else _pair(op, "stride", stride)
    pads = _pair(op, "padding", padding)
    dilations = _pair(op, "dilation", dilation)
    if len(shape) not in (3, 4) or any(s == 0 for s in shape[-3:]):
        raise KernelError(
            f"{op}: expected a 3-d (C, H, W) or 4-d (N, C, H, W) input with non-zero C, H, W, got shape {list(shape)}"
        )
    if min(kernel) <= 0:
        raise KernelError(f"{op}: kernel_size must be positive, got {kernel}")
    if min(steps) <= 0:
        raise KernelError(f"{op}: stride must be positive, got {steps}")
    if min(dilations) <= 0:
        raise KernelError(f"{op}: dilation must be positive, got {dilations}")
    if min(pads) < 0:
        raise KernelError(f"{op}: padding must be non-negative, got {pads}")
    if any(p > k // 2 for p, k in zip(pads, kernel, strict=True)):
        raise KernelError(f"{op}: padding {pads} must be at most half of kernel_size {kernel}")
    sizes = []
    for size, k, s, p, d in zip(shape[-2:], kernel, steps, pads, dilations, strict=True):
        span = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
        out = span // s + 1
        if ceil_mode and (out - 1) * s >= size + p:
            out -= 1  # the last window would start in the padding
        if out < 1:
            raise KernelError(
                f"{op}: the output would be empty for input size {list(shape[-2:])}, "
                f"kernel_size {kernel}, stride {steps}, padding {pads}, dilation {dilations}"
            )
        sizes.append(out)
    return kernel, steps, pads, dilations, sizes


def _max_pool2d(
    xp: Any, op: str, input: Any, kernel_size: Any, stride: Any, padding: Any, dilation: Any, ceil_mode: bool
) -> tuple[Any, Any]:
    if input.dtype == to_dtype("Bool"):
        raise KernelError(f"{op}: bool tensors are not supported")
    (kh, kw), (sh, sw), (ph, pw), (dh, dw), (oh, ow) = _pool_geometry(
        op, tuple(input.shape), kernel_size, stride, padding, dilation, ceil_mode
    )
    x = input if input.ndim == 4 else input[None]
    n, c, h, w = x.shape
    # Pad with the lowest value, far enough that every window fits.
    rows = max(h + ph, (oh - 1) * sh + (kh - 1) * dh + 1)
    cols = max(w + pw, (ow - 1) * sw + (kw - 1) * dw + 1)
    floating = is_floating(x.dtype)
    lowest = -math.inf if floating else xp.iinfo(x.dtype).min
    padded = xp.full((n, c, rows, cols), lowest, dtype=x.dtype)
    padded[:, :, ph : ph + h, pw : pw + w] = x
    valid = xp.zeros((rows, cols), dtype=bool)
    valid[ph : ph + h, pw : pw + w] = True
    windows, valids = [], []
    for i in range(kh):
        for j in range(kw):
            r = slice(i * dh, i * dh + (oh - 1) * sh + 1, sh)
            q = slice(j * dw, j * dw + (ow - 1) * sw + 1, sw)
            windows.append(padded[:, :, r, q])
            valids.append(valid[r, q])
    stack = xp.stack(windows)  # (kh*kw, N, C, OH, OW), window positions in row-major order
    inside = xp.stack(valids)[:, None, None]
    values = xp.max(stack, axis=0)
    # PyTorch scans a window in row-major order and keeps the first maximum
    # (the first element inside the input when all are -inf), but the last NaN.
    position = xp.argmax(inside & (stack == values[None]), axis=0)
    if floating:
        nan = stack != stack
        last_nan = (len(windows) - 1) - xp.argmax(xp.flip(nan, axis=0), axis=0)
        position = xp.where(xp.any(nan, axis=0), last_nan, position)
    row = xp.arange(oh).reshape(oh, 1) * sh - ph + (position // kw) * dh
    col = xp.arange(ow).reshape(1, ow) * sw - pw + (position % kw) * dw
    indices = (row * w + col).astype(to_dtype("Long"), copy=False)
    if input.ndim == 3:
        values, indices = values[0], indices[0]
    return values, indices


def max_pool2d_with_indices(
    xp: Any,
    self: Any,
    kernel_size: Any,
    stride: Any = (),
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
) -> tuple[Any, Any]:
    """(values, indices); indices are flat positions h * W + w within each input plane."""
    return _max_pool2d(xp, "max_pool2d_with_indices", self, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d(
    xp: Any,
    self: Any,
    kernel_size: Any,
    stride: Any = (),
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
) -> Any:
    return _max_pool2d(xp, "max_pool2d", self, kernel_size, stride, padding, dilation, ceil_mode)[0]


def max_pool2d_with_indices_backward(
    xp: Any,
    grad_output: Any,
    self: Any,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    ceil_mode: bool,
    indices: Any,
) -> Any:
    """Scatter-add each output gradient onto the input element its index names."""
    op = "max_pool2d_with_indices_backward"
    _, _, _, _, (oh, ow) = _pool_geometry(op, tuple(self.shape), kernel_size, stride, padding, dilation, ceil_mode)
    expected = (*self.shape[:-2], oh, ow)
    _check_shape(op, "grad_output", grad_output, expected)
    _check_shape(op, "indices", indices, expected)
    if not is_floating(grad_output.dtype):
        raise KernelError(f"{op}: expected floating-point tensors, got {grad_output.dtype}")
    h, w = self.shape[-2:]
    planes = math.prod(self.shape[:-2])
    offsets = (xp.arange(planes, dtype=to_dtype("Long")) * (h * w)).reshape(planes, 1)
    flat = (indices.reshape(planes, oh * ow).astype(to_dtype("Long"), copy=False) + offsets).reshape(-1)
    weights = grad_output.reshape(-1).astype(to_dtype("Double"), copy=False)
    total = xp.bincount(flat, weights=weights, minlength=planes * h * w)
    return total.reshape(self.shape).astype(grad_output.dtype, copy=False)


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


# -- N-d pooling: max_pool1d/3d (+ indices), avg_pool1d/3d, adaptive_max_pool1d/2d/3d, max_unpool ----
# One implementation for 1, 2 and 3 spatial dims, with ATen's conventions: a window is scanned
# in row-major order and keeps its first maximum (strictly greater replaces) but its last NaN;
# indices are flat positions within each input plane; average pooling adds the window's
# elements one by one in that order and divides by ATen's divisor.
def _ints(op: str, name: str, value: Any, dims: int, default: list[int] | None = None) -> list[int]:
    items = [int(v) for v in value] if isinstance(value, (list, tuple)) else [int(value)]
    if not items and default is not None:
        return list(default)
    if len(items) == 1:
        items = items * dims
    if len(items) != dims:
        raise KernelError(f"{op}: {name} must be a single int or {dims} ints, got {items}")
    return items


def _check_pool_input(op: str, input: Any, dims: int) -> None:
    if input.ndim not in (dims + 1, dims + 2) or any(s == 0 for s in input.shape[-(dims + 1):]):
        raise KernelError(
            f"{op}: expected a {dims + 1}-d or {dims + 2}-d input with non-zero channel and spatial sizes, "
            f"got shape {list(input.shape)}"
        )


def pool_geometry_nd(
    op: str, input: Any, dims: int, kernel_size: Any, stride: Any, padding: Any, dilation: Any, ceil_mode: bool,
) -> tuple[list[int], list[int], list[int], list[int], list[int]]:
    """Kernel, stride, padding, dilation and output sizes, as ATen's pooling_output_shape."""
    _check_pool_input(op, input, dims)
    kernel = _ints(op, "kernel_size", kernel_size, dims)
    steps = _ints(op, "stride", stride, dims, default=kernel)
    pads = _ints(op, "padding", padding, dims)
    dilations = _ints(op, "dilation", dilation, dims)
    if min(kernel) <= 0 or min(steps) <= 0 or min(dilations) <= 0:
        raise KernelError(f"{op}: kernel_size, stride and dilation must be positive, got {kernel}, {steps}, {dilations}")
    sizes = []
    for size, k, s, p, d in zip(input.shape[-dims:], kernel, steps, pads, dilations, strict=True):
        if p < 0 or p > ((k - 1) * d + 1) // 2:
            raise KernelError(f"{op}: pad should be at most half of effective kernel size, but got pad={p}, "
                              f"kernel_size={k} and dilation={d}")
        out = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
        if ceil_mode and (out - 1) * s >= size + p:
            out -= 1  # the last window would start in the padding
        if out < 1:
            raise KernelError(f"{op}: the output would be empty for input {list(input.shape)}")
        sizes.append(out)
    return kernel, steps, pads, dilations, sizes


def _taps(kernel: list[int]) -> list[tuple[int, ...]]:
    return list(itertools.product(*(range(k) for k in kernel)))


def _flat_index(xp: Any, coords: list[Any], shape: tuple[int, ...]) -> Any:
    index = coords[0]
    for c, size in zip(coords[1:], shape[1:], strict=True):
        index = index * size + c
    return index.astype(to_dtype("Long"), copy=False)


def _select_max(xp: Any, stack: Any, inside: Any) -> tuple[Any, Any]:
    """(values, tap position) over axis 0: the first maximum, the last NaN (ATen's scan)."""
    values = xp.max(stack, axis=0)
    position = xp.argmax(inside & (stack == values[None]), axis=0)
    if is_floating(stack.dtype):
        nan = stack != stack
        last_nan = (stack.shape[0] - 1) - xp.argmax(xp.flip(nan, axis=0), axis=0)
        position = xp.where(xp.any(nan, axis=0), last_nan, position)
    return values, position


def max_pool_nd_with_indices(
    xp: Any, op: str, input: Any, dims: int, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
    ceil_mode: bool,
) -> tuple[Any, Any]:
    if not (is_floating(input.dtype) or input.dtype == to_dtype("Long")):
        raise KernelError(f"{op}: not implemented for {input.dtype} tensors")
    kernel, steps, pads, dilations, sizes = pool_geometry_nd(
        op, input, dims, kernel_size, stride, padding, dilation, ceil_mode
    )
    spatial = tuple(input.shape[-dims:])
    extents = [max(n + p, (o - 1) * s + (k - 1) * d + 1)
               for n, o, k, s, p, d in zip(spatial, sizes, kernel, steps, pads, dilations, strict=True)]
    lowest = -math.inf if is_floating(input.dtype) else xp.iinfo(input.dtype).min
    padded = xp.full(tuple(input.shape[:-dims]) + tuple(extents), lowest, dtype=input.dtype)
    valid = xp.zeros(tuple(extents), dtype=bool)
    region = tuple(slice(p, p + n) for p, n in zip(pads, spatial, strict=True))
    padded[(Ellipsis, *region)] = input
    valid[region] = True
    windows, valids = [], []
    for tap in _taps(kernel):
        cut = tuple(slice(t * d, t * d + (o - 1) * s + 1, s)
                    for t, d, o, s in zip(tap, dilations, sizes, steps, strict=True))
        windows.append(padded[(Ellipsis, *cut)])
        valids.append(valid[cut])
    values, position = _select_max(xp, xp.stack(windows), xp.stack(valids)[(slice(None),) + (None,) * (input.ndim - dims)])
    coords = []
    stride_of_tap = 1
    for axis in reversed(range(dims)):
        tap = (position // stride_of_tap) % kernel[axis]
        stride_of_tap *= kernel[axis]
        origin = (xp.arange(sizes[axis]) * steps[axis] - pads[axis]).reshape(
            (sizes[axis],) + (1,) * (dims - 1 - axis))
        coords.insert(0, origin + tap * dilations[axis])
    return values, _flat_index(xp, coords, spatial)


def max_pool1d_with_indices(
    xp: Any, self: Any, kernel_size: Any, stride: Any = (), padding: Any = 0, dilation: Any = 1,
    ceil_mode: bool = False,
) -> tuple[Any, Any]:
    return max_pool_nd_with_indices(xp, "max_pool1d", self, 1, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool1d(
    xp: Any, self: Any, kernel_size: Any, stride: Any = (), padding: Any = 0, dilation: Any = 1,
    ceil_mode: bool = False,
) -> Any:
    return max_pool1d_with_indices(xp, self, kernel_size, stride, padding, dilation, ceil_mode)[0]


def max_pool3d_with_indices(
    xp: Any, self: Any, kernel_size: Any, stride: Any = (), padding: Any = 0, dilation: Any = 1,
    ceil_mode: bool = False,
) -> tuple[Any, Any]:
    return max_pool_nd_with_indices(xp, "max_pool3d", self, 3, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool3d(
    xp: Any, self: Any, kernel_size: Any, stride: Any = (), padding: Any = 0, dilation: Any = 1,
    ceil_mode: bool = False,
) -> Any:
    return max_pool3d_with_indices(xp, self, kernel_size, stride, padding, dilation, ceil_mode)[0]


def pool_indices_backward(xp: Any, grad: Any, self: Any, indices: Any, dims: int) -> Any:
    """Each output gradient added onto the input element its index names, in output order
    (ATen's max and adaptive-max pooling backward)."""
    op = "pool_indices_backward"
    if tuple(grad.shape) != tuple(indices.shape):
        raise KernelError(f"{op}: grad of shape {list(grad.shape)} does not match indices {list(indices.shape)}")
    plane = math.prod(self.shape[-dims:])
    planes = math.prod(self.shape[:-dims])
    flat = indices.reshape(planes, math.prod(indices.shape[-dims:])).astype(to_dtype("Long"), copy=False)
    if flat.size and (xp.min(flat) < 0 or xp.max(flat) >= plane):
        raise KernelError(f"{op}: found an invalid max index")
    flat = (flat + (xp.arange(planes, dtype=to_dtype("Long")) * plane).reshape(planes, 1)).reshape(-1)
    weights = grad.reshape(-1).astype(to_dtype("Double"), copy=False)
    total = xp.bincount(flat, weights=weights, minlength=planes * plane)
    return total.reshape(self.shape).astype(grad.dtype, copy=False)


def _avg_nd(
    xp: Any, op: str, input: Any, dims: int, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool,
    count_include_pad: bool, divisor_override: Any,
) -> tuple[list[int], list[int], list[int], list[int], Any, Any]:
    """Geometry, divisor and ``inside`` (the window holds an input element) per output cell."""
    if divisor_override is not None and divisor_override == 0:
        raise KernelError(f"{op}: divisor must be not zero")
    kernel, steps, pads, _, sizes = pool_geometry_nd(op, input, dims, kernel_size, stride, padding, 1, ceil_mode)
    pool = real = None
    for axis in range(dims):
        size = input.shape[input.ndim - dims + axis]
        p, r = _divisors(xp, size, sizes[axis], kernel[axis], steps[axis], pads[axis])
        shape = (sizes[axis],) + (1,) * (dims - 1 - axis)
        p, r = p.reshape(shape), r.reshape(shape)
        pool, real = (p, r) if pool is None else (pool * p, real * r)
    inside = real > 0
    if divisor_override is not None:
        divisor = xp.full(real.shape, int(divisor_override), dtype=to_dtype("Long"))
    else:
        divisor = pool if count_include_pad else real
    return kernel, steps, pads, sizes, xp.where(inside, divisor, 1), inside


def avg_pool_nd(
    xp: Any, op: str, input: Any, dims: int, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool,
    count_include_pad: bool, divisor_override: Any,
) -> Any:
    if not is_floating(input.dtype):
        raise KernelError(f"{op}: not implemented for {input.dtype} tensors")
    kernel, steps, pads, sizes, divisor, inside = _avg_nd(
        xp, op, input, dims, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
    )
    x = input.astype(_compute_dtype(input.dtype), copy=False)
    spatial = tuple(x.shape[-dims:])
    extents = [_padded_extent(n, o, k, s, p) for n, o, k, s, p in zip(spatial, sizes, kernel, steps, pads, strict=True)]
    widths = [(0, 0)] * (x.ndim - dims) + [(p, e - n - p) for p, e, n in zip(pads, extents, spatial, strict=True)]
    padded = xp.pad(x, widths)
    total = None
    for tap in _taps(kernel):  # added one by one, in the window's row-major order
        cut = tuple(slice(t, t + (o - 1) * s + 1, s) for t, o, s in zip(tap, sizes, steps, strict=True))
        window = padded[(Ellipsis, *cut)]
        total = window if total is None else total + window
    out = xp.where(inside, total / divisor.astype(x.dtype), 0)
    return xp.ascontiguousarray(out).astype(input.dtype, copy=False)


def avg_pool_nd_backward(
    xp: Any, op: str, grad_output: Any, input: Any, dims: int, kernel_size: Any, stride: Any, padding: Any,
    ceil_mode: bool, count_include_pad: bool, divisor_override: Any,
) -> Any:
    """Each output gradient over its divisor, added to every real input element of its window."""
    kernel, steps, pads, sizes, divisor, inside = _avg_nd(
        xp, op, input, dims, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
    )
    expected = (*input.shape[:-dims], *sizes)
    if tuple(grad_output.shape) != expected:
        raise KernelError(f"{op}: expected grad_output of shape {list(expected)}, got {list(grad_output.shape)}")
    g = grad_output.astype(_compute_dtype(grad_output.dtype), copy=False)
    share = xp.where(inside, g / divisor.astype(g.dtype), 0)
    spatial = tuple(input.shape[-dims:])
    extents = [_padded_extent(n, o, k, s, p) for n, o, k, s, p in zip(spatial, sizes, kernel, steps, pads, strict=True)]
    grad = xp.zeros((*input.shape[:-dims], *extents), dtype=g.dtype)
    for tap in _taps(kernel):
        cut = tuple(slice(t, t + (o - 1) * s + 1, s) for t, o, s in zip(tap, sizes, steps, strict=True))
        grad[(Ellipsis, *cut)] += share
    region = tuple(slice(p, p + n) for p, n in zip(pads, spatial, strict=True))
    return xp.ascontiguousarray(grad[(Ellipsis, *region)]).astype(grad_output.dtype, copy=False)


def avg_pool1d(
    xp: Any, self: Any, kernel_size: Any, stride: Any = (), padding: Any = 0, ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Any:
    return avg_pool_nd(xp, "avg_pool1d", self, 1, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool3d(
    xp: Any, self: Any, kernel_size: Any, stride: Any = (), padding: Any = 0, ceil_mode: bool = False,
    count_include_pad: bool = True, divisor_override: Any = None,
) -> Any:
    return avg_pool_nd(
        xp, "avg_pool3d", self, 3, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
    )


def avg_pool3d_backward(
    xp: Any, grad_output: Any, self: Any, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool,
    count_include_pad: bool, divisor_override: Any,
) -> Any:
    return avg_pool_nd_backward(xp, "avg_pool3d_backward", grad_output, self, 3, kernel_size, stride, padding,
                                ceil_mode, count_include_pad, divisor_override)


def avg_pool1d_backward(
    xp: Any, grad_output: Any, self: Any, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool,
    count_include_pad: bool,
) -> Any:
    return avg_pool_nd_backward(xp, "avg_pool1d_backward", grad_output, self, 1, kernel_size, stride, padding,
                                ceil_mode, count_include_pad, None)


def adaptive_max_pool_nd(xp: Any, op: str, input: Any, dims: int, output_size: Any) -> tuple[Any, Any]:
    """Output cell ``i`` takes the maximum over input rows ``floor(i H / OH)`` to ``ceil((i + 1) H / OH)``
    (per dim), with its flat index; ATen's scan conventions."""
    if not is_floating(input.dtype):
        raise KernelError(f"{op}: not implemented for {input.dtype} tensors")
    _check_pool_input(op, input, dims)
    sizes = _ints(op, "output_size", output_size, dims)
    if min(sizes) < 0:
        raise KernelError(f"{op}: output_size must be non-negative, got {sizes}")
    spatial = tuple(input.shape[-dims:])
    lead = tuple(input.shape[:-dims])
    values = xp.empty(lead + tuple(sizes), dtype=input.dtype)
    indices = xp.empty(lead + tuple(sizes), dtype=to_dtype("Long"))
    bounds = [[(o * n // out, -(-(o + 1) * n // out)) for o in range(out)] for n, out in zip(spatial, sizes, strict=True)]
    for cell in itertools.product(*(range(out) for out in sizes)):
        ranges = [bounds[a][c] for a, c in enumerate(cell)]
        window = input[(Ellipsis, *(slice(lo, hi) for lo, hi in ranges))]
        shape = window.shape[-dims:]
        flat = window.reshape(lead + (-1,))
        stack = xp.moveaxis(flat, -1, 0)
        value, position = _select_max(xp, stack, xp.ones((stack.shape[0],) + (1,) * len(lead), dtype=bool))
        coords = list(xp.unravel_index(position, shape))
        values[(Ellipsis, *cell)] = value
        indices[(Ellipsis, *cell)] = _flat_index(xp, [c + lo for c, (lo, _) in zip(coords, ranges, strict=True)],
                                                 spatial)
    return values, indices


def adaptive_max_pool1d(xp: Any, self: Any, output_size: Any) -> tuple[Any, Any]:
    return adaptive_max_pool_nd(xp, "adaptive_max_pool1d", self, 1, output_size)


def adaptive_max_pool2d(xp: Any, self: Any, output_size: Any) -> tuple[Any, Any]:
    return adaptive_max_pool_nd(xp, "adaptive_max_pool2d", self, 2, output_size)


def adaptive_max_pool3d(xp: Any, self: Any, output_size: Any) -> tuple[Any, Any]:
    return adaptive_max_pool_nd(xp, "adaptive_max_pool3d", self, 3, output_size)


def _unpool(xp: Any, op: str, self: Any, indices: Any, output_size: Any, dims: int) -> Any:
    sizes = _ints(op, "output_size", output_size, dims)
    if tuple(self.shape) != tuple(indices.shape):
        raise KernelError(f"{op}: expected shape of indices to be same as that of the input, got "
                          f"{list(indices.shape)} and {list(self.shape)}")
    if self.ndim not in (dims + 1, dims + 2):
        raise KernelError(f"{op}: expected a {dims + 1}-d or {dims + 2}-d input, got shape {list(self.shape)}")
    lead = tuple(self.shape[:-dims])
    plane = math.prod(sizes)
    planes = math.prod(lead)
    flat = indices.reshape(planes, math.prod(indices.shape[-dims:])).astype(to_dtype("Long"), copy=False)
    if flat.size and (xp.min(flat) < 0 or xp.max(flat) >= plane):
        bad = int(flat[(flat < 0) | (flat >= plane)][0])
        raise KernelError(f"{op}: found an invalid max index: {bad} (output volumes are of size {sizes})")
    out = xp.zeros((planes, plane), dtype=self.dtype)
    rows = xp.broadcast_to(xp.arange(planes).reshape(planes, 1), flat.shape)
    out[rows.reshape(-1), flat.reshape(-1)] = self.reshape(-1)  # in order: the last write wins, as ATen's loop
    return out.reshape(lead + tuple(sizes))


def max_unpool2d(xp: Any, self: Any, indices: Any, output_size: Any) -> Any:
    return _unpool(xp, "max_unpool2d", self, indices, output_size, 2)


def max_unpool3d(xp: Any, self: Any, indices: Any, output_size: Any, stride: Any = (), padding: Any = ()) -> Any:
    return _unpool(xp, "max_unpool3d", self, indices, output_size, 3)


def unpool_backward(xp: Any, grad: Any, indices: Any, dims: int) -> Any:
    """max_pool_double_backward: ``grad`` read at each index (the input's shape)."""
    planes = math.prod(grad.shape[:-dims])
    flat = grad.reshape(planes, -1)
    positions = indices.reshape(planes, -1).astype(to_dtype("Long"), copy=False)
    return xp.take_along_axis(flat, positions, axis=1).reshape(indices.shape)


# -- fractional max pooling (ATen's FractionalMaxPool2d.cpp / 3d.cpp) ------------------------------
# Each (batch, channel) plane reads its own samples u in [0, 1): 2-d's u[0] places the windows
# along W and u[1] along H; 3-d's u[0], u[1], u[2] along T, H, W. ATen's generate_intervals
# computes, in the input's dtype, alpha = (in - pool) / (out - 1) and the window starts
# int((i + u) * alpha) - int(u * alpha) for i < out - 1 (C casts: truncation), the last
# window flush with the end (in - pool). A window keeps its first maximum in row-major order
# and its last NaN (starting from -inf at the window's first element, as ATen's scan).
_FRACTIONAL_SAMPLE_OF_DIM = {2: (1, 0), 3: (0, 1, 2)}


def _fractional_starts(xp: Any, samples: Any, size: int, out: int, pool: int) -> Any:
    """ATen's generate_intervals for every plane at once: (planes, out) window starts."""
    starts = xp.full((samples.shape[0], out), size - pool, dtype=to_dtype("Long"))
    if out > 1:
        dtype = samples.dtype
        alpha = xp.asarray(size - pool, dtype=dtype) / xp.asarray(out - 1, dtype=dtype)
        u = samples[:, None]
        step = xp.arange(out - 1).astype(dtype)[None, :]
        starts[:, :-1] = ((step + u) * alpha).astype(to_dtype("Long")) - (u * alpha).astype(to_dtype("Long"))
    return starts


def _check_fractional(op: str, input: Any, dims: int, kernel: list[int], sizes: list[int], samples: Any) -> None:
    """ATen's checks, in its order (2-d allows out + pool - 1 == in, 3-d does not)."""
    if not is_floating(input.dtype):
        raise KernelError(f"{op}: not implemented for {input.dtype} tensors (it needs floating point)")
    if input.ndim not in (dims + 1, dims + 2):
        raise KernelError(f"{op}(): Expected {dims + 1}D or {dims + 2}D tensor, but got: {list(input.shape)}")
    if any(s == 0 for s in input.shape[input.ndim - dims - 1:]):
        raise KernelError(f"{op}(): Expected input to have non-zero size for non-batch dimensions, "
                          f"but got {list(input.shape)}")
    if min(kernel) < 0 or min(sizes) < 0:
        raise KernelError(f"{op}(): kernel_size and output_size must be non-negative, got {kernel} and {sizes}")
    names = ("time", "height", "width")[3 - dims:]
    for name, size, out, pool in zip(names, input.shape[-dims:], sizes, kernel, strict=True):
        if out + pool - 1 > size or (dims == 3 and out + pool - 1 == size):
            raise KernelError(f"{op}(): pool {name} {pool} too large relative to input {name} {size}")
    if samples.dtype != input.dtype:
        raise KernelError(f"{op}: Expect _random_samples to have the same dtype as input")
    if samples.ndim != 3:
        raise KernelError(f"{op}: Expect _random_samples to have 3 dimensions, got {samples.ndim}")
    batch, channels = (input.shape[0], input.shape[1]) if input.ndim == dims + 2 else (1, input.shape[0])
    if samples.shape[0] < batch:
        raise KernelError(f"{op}: Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != channels:
        raise KernelError(f"{op}: Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != dims:
        raise KernelError(f"{op}: Expect _random_samples.size(2) equals to {dims}; got {samples.shape[2]}.")


def _fractional_max_pool(
    xp: Any, op: str, input: Any, dims: int, kernel_size: Any, output_size: Any, random_samples: Any,
) -> tuple[Any, Any]:
    kernel = _ints(op, "kernel_size", kernel_size, dims)
    sizes = _ints(op, "output_size", output_size, dims)
    _check_fractional(op, input, dims, kernel, sizes, random_samples)
    x = input if input.ndim == dims + 2 else input[None]
    spatial = tuple(x.shape[2:])
    planes = x.shape[0] * x.shape[1]
    samples = random_samples[: x.shape[0]].reshape(planes, dims)
    coords = []
    for d in range(dims):
        starts = _fractional_starts(xp, samples[:, _FRACTIONAL_SAMPLE_OF_DIM[dims][d]], spatial[d], sizes[d], kernel[d])
        taps = starts[:, :, None] + xp.arange(max(kernel[d], 1))[None, None, :]
        shape = [planes] + [1] * (2 * dims)
        shape[1 + d], shape[1 + dims + d] = sizes[d], taps.shape[2]
        coords.append(taps.reshape(shape))
    taps_per_window = math.prod(max(k, 1) for k in kernel)
    full = (planes, *sizes, *(max(k, 1) for k in kernel))
    flat = xp.broadcast_to(_flat_index(xp, coords, spatial), full).reshape(planes, math.prod(sizes), taps_per_window)
    out_shape = tuple(input.shape[:-dims]) + tuple(sizes)
    if flat.size == 0:
        return xp.empty(out_shape, dtype=input.dtype), xp.empty(out_shape, dtype=to_dtype("Long"))
    if math.prod(kernel) == 0:  # no element is read: -inf at the window's start, as ATen's scan
        return xp.full(out_shape, -math.inf, dtype=input.dtype), flat[:, :, 0].reshape(out_shape)
    values = xp.take_along_axis(x.reshape(planes, -1, 1), flat.reshape(planes, -1, 1), axis=1).reshape(flat.shape)
    _, position = _select_max(xp, xp.moveaxis(values, -1, 0), xp.asarray(True))
    pick = position[:, :, None]
    output = xp.take_along_axis(values, pick, axis=2).reshape(out_shape)
    return output, xp.take_along_axis(flat, pick, axis=2).reshape(out_shape)


def fractional_max_pool2d(xp: Any, self: Any, kernel_size: Any, output_size: Any, random_samples: Any) -> tuple[Any, Any]:
    """(output, int64 indices: flat positions h * W + w within each input plane)."""
    return _fractional_max_pool(xp, "fractional_max_pool2d", self, 2, kernel_size, output_size, random_samples)


def fractional_max_pool3d(xp: Any, self: Any, kernel_size: Any, output_size: Any, random_samples: Any) -> tuple[Any, Any]:
    """(output, int64 indices: flat positions (t * H + h) * W + w within each input plane)."""
    return _fractional_max_pool(xp, "fractional_max_pool3d", self, 3, kernel_size, output_size, random_samples)


def _fractional_backward(
    xp: Any, op: str, dims: int, grad_output: Any, self: Any, output_size: Any, indices: Any,
) -> Any:
    """Each output gradient added onto the input element its index names, in output order."""
    sizes = _ints(op, "output_size", output_size, dims)
    if grad_output.ndim != self.ndim or list(grad_output.shape[-dims:]) != sizes:
        raise KernelError(f"{op}(): gradOutput of shape {list(grad_output.shape)} does not match "
                          f"output_size {sizes}")
    return pool_indices_backward(xp, grad_output, self, indices, dims)


def fractional_max_pool2d_backward(
    xp: Any, grad_output: Any, self: Any, kernel_size: Any, output_size: Any, indices: Any,
) -> Any:
    return _fractional_backward(xp, "fractional_max_pool2d_backward", 2, grad_output, self, output_size, indices)


def fractional_max_pool3d_backward(
    xp: Any, grad_output: Any, self: Any, kernel_size: Any, output_size: Any, indices: Any,
) -> Any:
    return _fractional_backward(xp, "fractional_max_pool3d_backward", 3, grad_output, self, output_size, indices)
