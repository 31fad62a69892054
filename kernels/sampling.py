"""Resampling: upsampling (nearest, nearest-exact, linear, bilinear, trilinear, bicubic),
and im2col/col2im (``unfold``/``fold``), as PyTorch's CPU kernels compute them.

**Upsampling** is separable: along each spatial dim, output ``i`` reads a few input
elements with weights, from ATen's UpSample.h:

* the scale is ``(in - 1) / (out - 1)`` with ``align_corners`` (0 for one output),
  else ``1 / scale_factor`` when a positive scale factor is given, else ``in / out``;
* linear modes read ``src = scale * (i + 0.5) - 0.5`` (clamped at 0; ``scale * i`` with
  ``align_corners``), the element ``floorf(src)`` (rounded to float32 first, as ATen's
  ``floorf`` does) and the next one, with weights ``1 - l`` and ``l``;
* bicubic reads four elements around it (indices clamped to the input) with Keys'
  cubic convolution weights, ``A = -0.75``, and no clamp of ``src`` at 0;
* nearest reads ``floorf(i * scale)`` and nearest-exact ``floorf((i + 0.5) * scale)``
  with the scale in float32 (``compute_scales_value<float>``); nearest copies when the
  sizes are equal and halves the index when the output is twice the input.

The forward applies each dim's weights in turn; the backward adds each output gradient,
times its weights, onto the elements it read, in output order.

**im2col** lays every ``kh x kw`` window (dilated, of the zero-padded input) out as a
column: rows ``c * kh * kw + i * kw + j``, columns the windows in row-major order.
**col2im** adds the columns back, tap by tap (ATen's loop order).
"""

from __future__ import annotations

from typing import Any

import numpy

from .dtypes import is_floating
from .protocol import KernelError

__all__: list[str] = []

_CUBIC_A = -0.75


# -- the per-dim source indices and weights ------------------------------------------------------
def _linear_scale(in_size: int, out_size: int, align_corners: bool, scale: float | None) -> float:
    """area_pixel_compute_scale, in double."""
    if align_corners:
        return (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else in_size / out_size


def _float_scale(in_size: int, out_size: int, scale: float | None) -> Any:
    """compute_scales_value<float>: nearest's scale, in float32."""
    if scale is not None and scale > 0:
        return numpy.float32(1.0 / scale)
    return numpy.float32(numpy.float32(in_size) / numpy.float32(out_size))


def _floorf(values: Any) -> Any:
    """C's floorf of a double: rounded to float32 first."""
    return numpy.floor(numpy.asarray(values, dtype=numpy.float64).astype(numpy.float32)).astype(numpy.int64)


def _cubic_weights(t: Any) -> list[Any]:
    """get_cubic_upsample_coefficients: Keys' kernel at ``t + 1, t, 1 - t, 2 - t``."""
    a = _CUBIC_A

    def near(x: Any) -> Any:  # cubic_convolution1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: Any) -> Any:  # cubic_convolution2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1.0), near(t), near(1.0 - t), far((1.0 - t) + 1.0)]


def axis_taps(mode: str, in_size: int, out_size: int, align_corners: bool, scale: float | None) -> tuple[Any, Any]:
    """(indices, weights), each (out_size, taps): what output ``i`` reads along one dim."""
    i = numpy.arange(out_size)
    if mode in ("nearest", "nearest-exact"):
        if mode == "nearest" and out_size == in_size:
            src = i
        elif mode == "nearest" and out_size == 2 * in_size:
            src = i >> 1
        else:
            s = _float_scale(in_size, out_size, scale)
            product = i.astype(numpy.float32) * s if mode == "nearest" else (i + 0.5) * numpy.float64(s)
            src = numpy.minimum(_floorf(product), in_size - 1)
        return src.reshape(-1, 1), numpy.ones((out_size, 1))
    s = _linear_scale(in_size, out_size, align_corners, scale)
    cubic = mode == "cubic"
    real = s * i if align_corners else s * (i + 0.5) - 0.5
    if not cubic and not align_corners:
        real = numpy.where(real < 0, 0.0, real)
    index = numpy.minimum(_floorf(real), in_size - 1)
    lam = numpy.minimum(numpy.maximum(real - index, 0.0), 1.0)
    if cubic:
        indices = numpy.stack([numpy.clip(index - 1 + j, 0, in_size - 1) for j in range(4)], axis=1)
        return indices, numpy.stack(_cubic_weights(lam), axis=1)
    following = index + numpy.where(index < in_size - 1, 1, 0)
    return numpy.stack([index, following], axis=1), numpy.stack([1.0 - lam, lam], axis=1)


# -- upsampling ----------------------------------------------------------------------------------
def _output_sizes(op: str, input: Any, dims: int, output_size: Any, scale_factors: Any) -> list[int]:
    if output_size is not None and scale_factors is not None:
        raise KernelError(f"{op}: must specify exactly one of output_size and scale_factors")
    if output_size is not None:
        sizes = [int(s) for s in output_size]
    elif scale_factors is not None:
        if len(scale_factors) != dims:
            raise KernelError(f"{op}: expected {dims} scale factors, got {list(scale_factors)}")
        sizes = [int(n * f) for n, f in zip(input.shape[-dims:], scale_factors, strict=True)]
    else:
        raise KernelError(f"{op}: must specify exactly one of output_size and scale_factors")
    if len(sizes) != dims:
        raise KernelError(f"{op}: expected output_size of {dims} elements, got {sizes}")
    return sizes


def _check_upsample(op: str, input: Any, dims: int, sizes: list[int]) -> None:
    if input.ndim != dims + 2:
        raise KernelError(f"{op}: expected a {dims + 2}-d input (N, C, spatial...), got shape {list(input.shape)}")
    if not is_floating(input.dtype):
        raise KernelError(f"{op}: not implemented for {input.dtype} tensors")
    if min(input.shape[2:], default=1) <= 0 or min(sizes) <= 0:
        raise KernelError(f"{op}: input and output sizes should be greater than 0, but got input "
                          f"{list(input.shape[2:])} and output {sizes}")


def upsample(
    xp: Any, op: str, mode: str, input: Any, dims: int, sizes: list[int], align_corners: bool, scales: list[Any],
) -> Any:
    _check_upsample(op, input, dims, sizes)
    out = input
    for k in range(dims):
        axis = 2 + k
        indices, weights = axis_taps(mode, input.shape[axis], sizes[k], align_corners, scales[k])
        shape = [1] * out.ndim
        shape[axis] = sizes[k]
        total = None
        for t in range(indices.shape[1]):
            term = xp.take(out, xp.asarray(indices[:, t]), axis=axis)
            if mode not in ("nearest", "nearest-exact"):
                term = term * xp.asarray(weights[:, t].reshape(shape), dtype=input.dtype)
            total = term if total is None else total + term
        out = total
    return xp.ascontiguousarray(out)


def upsample_backward(
    xp: Any, op: str, mode: str, grad: Any, input_shape: tuple[int, ...], dims: int, align_corners: bool,
    scales: list[Any],
) -> Any:
    sizes = list(grad.shape[-dims:])
    g = grad
    for k in reversed(range(dims)):
        axis = 2 + k
        in_size = input_shape[axis]
        indices, weights = axis_taps(mode, in_size, sizes[k], align_corners, scales[k])
        moved = xp.moveaxis(g, axis, 0)
        result = xp.zeros((in_size,) + moved.shape[1:], dtype=grad.dtype)
        for t in range(indices.shape[1]):
            w = xp.asarray(weights[:, t].reshape((-1,) + (1,) * (moved.ndim - 1)), dtype=grad.dtype)
            contribution = moved if mode in ("nearest", "nearest-exact") else moved * w
            numpy.add.at(result, indices[:, t], contribution) if xp is numpy else xp.add.at(
                result, xp.asarray(indices[:, t]), contribution)
        g = xp.moveaxis(result, 0, axis)
    return xp.ascontiguousarray(g)


# The overloads: ``name`` (per-dim scales after the sizes) and ``name.vec`` (output_size or
# scale_factors), each with its backward taking the forward's arguments after the gradient.
UPSAMPLE_OPS = {
    # name: (mode, spatial dims, takes align_corners)
    "upsample_nearest1d": ("nearest", 1, False), "upsample_nearest2d": ("nearest", 2, False),
    "upsample_nearest3d": ("nearest", 3, False), "_upsample_nearest_exact1d": ("nearest-exact", 1, False),
    "_upsample_nearest_exact2d": ("nearest-exact", 2, False), "_upsample_nearest_exact3d": ("nearest-exact", 3, False),
    "upsample_linear1d": ("linear", 1, True), "upsample_bilinear2d": ("linear", 2, True),
    "upsample_trilinear3d": ("linear", 3, True), "upsample_bicubic2d": ("cubic", 2, True),
}


def _unpack(name: str, vec: bool, args: tuple[Any, ...]) -> tuple[Any, bool, list[Any], Any]:
    """(output_size, align_corners, per-dim scales, scale_factors) from an overload's arguments."""
    mode, dims, aligned = UPSAMPLE_OPS[name]
    rest = list(args)
    output_size = rest.pop(0) if rest else None
    align_corners = bool(rest.pop(0)) if aligned else False
    if vec:
        factors = rest.pop(0) if rest else None
        scales = list(factors) if factors is not None else [None] * dims
        return output_size, align_corners, scales, factors
    scales = (rest + [None] * dims)[:dims]
    return output_size, align_corners, scales, None


def upsample_kernels(name: str, vec: bool) -> tuple[Any, Any]:
    """(forward, backward) array functions of ``aten::name`` (``.vec`` when ``vec``)."""
    mode, dims, _ = UPSAMPLE_OPS[name]
    op = f"{name}.vec" if vec else name

    def forward(xp: Any, input: Any, *args: Any) -> Any:
        output_size, align_corners, scales, factors = _unpack(name, vec, args)
        sizes = _output_sizes(op, input, dims, output_size, factors if vec else None)
        return upsample(xp, op, mode, input, dims, sizes, align_corners, scales)

    def backward(xp: Any, grad: Any, input: Any, *args: Any) -> Any:
        output_size, align_corners, scales, factors = _unpack(name, vec, args)
        sizes = _output_sizes(op, input, dims, output_size, factors if vec else None)
        if list(grad.shape[-dims:]) != sizes or tuple(grad.shape[:2]) != tuple(input.shape[:2]):
            raise KernelError(f"{op} backward: expected grad of shape {list(input.shape[:2]) + sizes}, "
                              f"got {list(grad.shape)}")
        return upsample_backward(xp, op, mode, grad, tuple(input.shape), dims, align_corners, scales)

    forward.__name__ = forward.__qualname__ = name + ("_vec" if vec else "")
    backward.__name__ = backward.__qualname__ = name + ("_vec" if vec else "") + "_backward"
    return forward, backward


# -- im2col, col2im ------------------------------------------------------------------------------
def _pair(op: str, name: str, value: Any) -> list[int]:
    items = [int(v) for v in value] if isinstance(value, (list, tuple)) else [int(value)]
    items = items * 2 if len(items) == 1 else items
    if len(items) != 2:
        raise KernelError(f"{op}: {name} must be one or two ints, got {items}")
    return items


def _unfold_geometry(
    op: str, height: int, width: int, kernel_size: Any, dilation: Any, padding: Any, stride: Any
) -> tuple[list[int], list[int], list[int], list[int], int, int]:
    k, d, p, s = (_pair(op, n, v) for n, v in
                  (("kernel_size", kernel_size), ("dilation", dilation), ("padding", padding), ("stride", stride)))
    if min(k) <= 0 or min(d) <= 0 or min(s) <= 0 or min(p) < 0:
        raise KernelError(f"{op}: kernel_size, dilation and stride must be positive and padding non-negative, "
                          f"got {k}, {d}, {s}, {p}")
    oh = (height + 2 * p[0] - (d[0] * (k[0] - 1) + 1)) // s[0] + 1
    ow = (width + 2 * p[1] - (d[1] * (k[1] - 1) + 1)) // s[1] + 1
    if oh < 1 or ow < 1:
        raise KernelError(f"{op}: given input with spatial size ({height}, {width}), kernel_size {k}, dilation {d}, "
                          f"padding {p}, calculated shape of the array of sliding blocks is ({oh}, {ow}), "
                          f"which is too small (non-positive)")
    return k, d, p, s, oh, ow


def im2col(xp: Any, self: Any, kernel_size: Any, dilation: Any, padding: Any, stride: Any) -> Any:
    op = "im2col"
    if self.ndim not in (3, 4):
        raise KernelError(f"{op}: expected a 3-d or 4-d input, got shape {list(self.shape)}")
    x = self if self.ndim == 4 else self[None]
    n, c, h, w = x.shape
    k, d, p, s, oh, ow = _unfold_geometry(op, h, w, kernel_size, dilation, padding, stride)
    padded = xp.pad(x, [(0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])])
    taps = []
    for i in range(k[0]):
        for j in range(k[1]):
            taps.append(padded[:, :, i * d[0]: i * d[0] + (oh - 1) * s[0] + 1: s[0],
                               j * d[1]: j * d[1] + (ow - 1) * s[1] + 1: s[1]])
    cols = xp.stack(taps, axis=2).reshape(n, c * k[0] * k[1], oh * ow)
    return cols if self.ndim == 4 else cols[0]


def col2im(
    xp: Any, self: Any, output_size: Any, kernel_size: Any, dilation: Any, padding: Any, stride: Any
) -> Any:
    op = "col2im"
    if self.ndim not in (2, 3):
        raise KernelError(f"{op}: expected a 2-d or 3-d input, got shape {list(self.shape)}")
    cols = self if self.ndim == 3 else self[None]
    h, w = _pair(op, "output_size", output_size)
    k, d, p, s, oh, ow = _unfold_geometry(op, h, w, kernel_size, dilation, padding, stride)
    n, rows, blocks = cols.shape
    if rows % (k[0] * k[1]) or blocks != oh * ow:
        raise KernelError(f"{op}: expected an input of shape (N, C * {k[0] * k[1]}, {oh * ow}), got {list(self.shape)}")
    c = rows // (k[0] * k[1])
    taps = cols.reshape(n, c, k[0], k[1], oh, ow)
    padded = xp.zeros((n, c, h + 2 * p[0], w + 2 * p[1]), dtype=self.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            padded[:, :, i * d[0]: i * d[0] + (oh - 1) * s[0] + 1: s[0],
                   j * d[1]: j * d[1] + (ow - 1) * s[1] + 1: s[1]] += taps[:, :, i, j]
    image = padded[:, :, p[0]: p[0] + h, p[1]: p[1] + w]
    image = xp.ascontiguousarray(image)
    return image if self.ndim == 3 else image[0]
