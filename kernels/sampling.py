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

``_upsample_bilinear2d_aa`` (antialiased) widens the triangle filter by the scale when
downsampling and normalizes each output's weights (``_compute_indices_min_size_weights_aa``),
resampling the width first, then the height.

**im2col** lays every ``kh x kw`` window (dilated, of the zero-padded input) out as a
column: rows ``c * kh * kw + i * kw + j``, columns the windows in row-major order.
**col2im** adds the columns back, tap by tap (ATen's loop order).
"""

from __future__ import annotations

import math
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


def _floorf(xp: Any, values: Any) -> Any:
    """C's floorf of a double: rounded to float32 first."""
    return xp.floor(values.astype(xp.float32)).astype(xp.int64)


def add_at(xp: Any, target: Any, index: Any, values: Any) -> None:
    """``target[index] += values``, repeated indices adding up in order (CuPy: scatter_add)."""
    adder = getattr(xp.add, "at", None)
    if adder is not None:
        adder(target, index, values)
    else:  # pragma: no cover - CuPy without ufunc.at
        import cupyx  # type: ignore[import-not-found]

        cupyx.scatter_add(target, index, values)


def _cubic_weights(t: Any) -> list[Any]:
    """get_cubic_upsample_coefficients: Keys' kernel at ``t + 1, t, 1 - t, 2 - t``."""
    a = _CUBIC_A

    def near(x: Any) -> Any:  # cubic_convolution1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: Any) -> Any:  # cubic_convolution2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1.0), near(t), near(1.0 - t), far((1.0 - t) + 1.0)]


def axis_taps(
    xp: Any, mode: str, in_size: int, out_size: int, align_corners: bool, scale: float | None
) -> tuple[Any, Any]:
    """(indices, weights), each (out_size, taps): what output ``i`` reads along one dim."""
    i = xp.arange(out_size)
    if mode in ("nearest", "nearest-exact"):
        if mode == "nearest" and out_size == in_size:
            src = i
        elif mode == "nearest" and out_size == 2 * in_size:
            src = i >> 1
        else:
            s = _float_scale(in_size, out_size, scale)
            product = i.astype(xp.float32) * s if mode == "nearest" else (i + 0.5) * float(s)
            src = xp.minimum(_floorf(xp, product), in_size - 1)
        return src.reshape(-1, 1), xp.ones((out_size, 1))
    s = _linear_scale(in_size, out_size, align_corners, scale)
    cubic = mode == "cubic"
    real = s * i if align_corners else s * (i + 0.5) - 0.5
    if not cubic and not align_corners:
        real = xp.where(real < 0, 0.0, real)
    index = xp.minimum(_floorf(xp, real), in_size - 1)
    lam = xp.minimum(xp.maximum(real - index, 0.0), 1.0)
    if cubic:
        indices = xp.stack([xp.clip(index - 1 + j, 0, in_size - 1) for j in range(4)], axis=1)
        return indices, xp.stack(_cubic_weights(lam), axis=1)
    following = index + xp.where(index < in_size - 1, 1, 0)
    return xp.stack([index, following], axis=1), xp.stack([1.0 - lam, lam], axis=1)


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
        indices, weights = axis_taps(xp, mode, input.shape[axis], sizes[k], align_corners, scales[k])
        shape = [1] * out.ndim
        shape[axis] = sizes[k]
        total = None
        for t in range(indices.shape[1]):
            term = xp.take(out, indices[:, t], axis=axis)
            if mode not in ("nearest", "nearest-exact"):
                term = term * weights[:, t].reshape(shape).astype(input.dtype)
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
        indices, weights = axis_taps(xp, mode, in_size, sizes[k], align_corners, scales[k])
        moved = xp.moveaxis(g, axis, 0)
        result = xp.zeros((in_size,) + moved.shape[1:], dtype=grad.dtype)
        for t in range(indices.shape[1]):
            w = weights[:, t].reshape((-1,) + (1,) * (moved.ndim - 1)).astype(grad.dtype)
            contribution = moved if mode in ("nearest", "nearest-exact") else moved * w
            add_at(xp, result, indices[:, t], contribution)
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
    "_upsample_bilinear2d_aa": ("antialiased linear", 2, True),
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
        if mode == "antialiased linear":
            _check_upsample(op, input, dims, sizes)
            return upsample_bilinear2d_aa_forward(xp, input, sizes, align_corners, scales, op)
        return upsample(xp, op, mode, input, dims, sizes, align_corners, scales)

    def backward(xp: Any, grad: Any, input: Any, *args: Any) -> Any:
        output_size, align_corners, scales, factors = _unpack(name, vec, args)
        sizes = _output_sizes(op, input, dims, output_size, factors if vec else None)
        if list(grad.shape[-dims:]) != sizes or tuple(grad.shape[:2]) != tuple(input.shape[:2]):
            raise KernelError(f"{op} backward: expected grad of shape {list(input.shape[:2]) + sizes}, "
                              f"got {list(grad.shape)}")
        if mode == "antialiased linear":
            return upsample_bilinear2d_aa_grad(xp, grad, tuple(input.shape), align_corners, scales)
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


# -- grid_sampler_2d/3d (ATen's GridSampler.cpp and GridSamplerKernel.cpp) ------------------------
# Modes: 0 bilinear (trilinear in 3-d), 1 nearest, 2 bicubic (2-d only); padding: 0 zeros,
# 1 border, 2 reflection. Grid coordinates are (x, y[, z]) for (W, H[, D]).
_BILINEAR, _NEAREST, _BICUBIC = 0, 1, 2
_ZEROS, _BORDER, _REFLECTION = 0, 1, 2


def _unnormalize(coord: Any, size: int, align_corners: bool) -> tuple[Any, float]:
    """(pixel coordinate, its derivative): ``[-1, 1]`` to ``[0, size - 1]`` or ``[-0.5, size - 0.5]``."""
    if align_corners:
        return ((coord + 1) / 2) * (size - 1), (size - 1) / 2
    return ((coord + 1) * size - 1) / 2, size / 2


def _clip(xp: Any, coord: Any, size: int) -> tuple[Any, Any]:
    """clip_coordinates_set_grad: the borders count as outside (derivative 0 there)."""
    limit = float(size - 1)
    inside = (coord > 0) & (coord < limit)
    return xp.minimum(limit, xp.maximum(coord, 0.0)), xp.where(inside, 1.0, 0.0)


def _reflect(xp: Any, coord: Any, twice_low: int, twice_high: int) -> tuple[Any, Any]:
    if twice_low == twice_high:
        return xp.zeros_like(coord), xp.zeros_like(coord)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    shifted = coord - low
    sign = xp.where(shifted < 0, -1.0, 1.0)
    value = xp.abs(shifted)
    extra = xp.fmod(value, span)
    flips = xp.floor(value / span)
    even = xp.fmod(flips, 2) == 0
    return xp.where(even, extra + low, span - extra + low), xp.where(even, sign, -sign)


def _pad_coordinates(xp: Any, coord: Any, size: int, padding: int, align_corners: bool) -> tuple[Any, Any]:
    """compute_coordinates (with its derivative): border clips, reflection reflects then clips;
    non-finite or huge coordinates become -100 (outside)."""
    grad = xp.ones_like(coord)
    if padding == _BORDER:
        coord, grad = _clip(xp, coord, size)
    elif padding == _REFLECTION:
        twice = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        coord, grad_reflect = _reflect(xp, coord, *twice)
        coord, grad_clip = _clip(xp, coord, size)
        grad = grad_reflect * grad_clip
    bad = ~xp.isfinite(coord) | (coord > 2147483646) | (coord < -2147483648)
    return xp.where(bad, -100.0, coord), grad


def _source_index(xp: Any, coord: Any, size: int, padding: int, align_corners: bool) -> tuple[Any, Any]:
    coord, scale = _unnormalize(coord, size, align_corners)
    coord, grad = _pad_coordinates(xp, coord, size, padding, align_corners)
    return coord, grad * scale


def _check_grid(op: str, input: Any, grid: Any, mode: int, padding: int) -> int:
    dims = input.ndim - 2
    if dims not in (2, 3) or grid.ndim != input.ndim or grid.shape[-1] != dims or grid.shape[0] != input.shape[0]:
        raise KernelError(f"{op}: expected a 4-d or 5-d input with a grid of the same rank, last dim 2 or 3 and "
                          f"the same batch; got input {list(input.shape)} and grid {list(grid.shape)}")
    if mode not in (_BILINEAR, _NEAREST, _BICUBIC) or (mode == _BICUBIC and dims == 3):
        raise KernelError(f"{op}: interpolation mode {mode} is not supported for {dims}-d inputs")
    if padding not in (_ZEROS, _BORDER, _REFLECTION):
        raise KernelError(f"{op}: padding mode {padding} is not supported")
    if not is_floating(input.dtype) or not is_floating(grid.dtype):
        raise KernelError(f"{op}: expected floating point input and grid")
    return dims


def _read(xp: Any, input: Any, corner: list[Any], sizes: list[int]) -> tuple[Any, Any]:
    """(values (N, C, *out), in-bounds mask (N, *out)) at integer corner coordinates (x, y[, z])."""
    dims = len(sizes)
    inside = None
    for c, size in zip(corner, sizes[::-1], strict=True):
        ok = (c >= 0) & (c < size)
        inside = ok if inside is None else inside & ok
    safe = [xp.where(inside, c, 0).astype(xp.int64) for c in corner]
    n = input.shape[0]
    batch = xp.arange(n).reshape((n,) + (1,) * (safe[0].ndim - 1))
    spatial_index = tuple(safe[dims - 1 - k] for k in range(dims))  # (z,) y, x
    moved = xp.moveaxis(input, 1, -1)  # (N, *in, C)
    picked = moved[(batch,) + spatial_index]  # (N, *out, C)
    values = xp.moveaxis(picked, -1, 1) * xp.expand_dims(inside, 1)
    return values, inside


def _corners(dims: int) -> list[tuple[int, ...]]:
    """Corner offsets (x, y[, z]), x fastest: nw, ne, sw, se (then the bottom ones in 3-d)."""
    return [tuple((k >> d) & 1 for d in range(dims)) for k in range(2 ** dims)]


def _linear_factors(coords: list[Any], base: list[Any], offset: tuple[int, ...]) -> list[Any]:
    """Per dim, ``(i0 + 1) - x`` for the near corner and ``x - i0`` for the far one."""
    return [(b + 1) - c if o == 0 else c - b for c, b, o in zip(coords, base, offset, strict=True)]


def _cubic_grads(t: Any) -> list[Any]:
    """get_cubic_coefficients_grad: the derivatives of the four cubic weights."""
    a = _CUBIC_A
    x0, x1, x2, x3 = -1 - t, -t, 1 - t, 2 - t
    return [(-3 * a * x0 - 10 * a) * x0 - 8 * a, (-3 * (a + 2) * x1 - 2 * (a + 3)) * x1,
            (3 * (a + 2) * x2 - 2 * (a + 3)) * x2, (3 * a * x3 - 10 * a) * x3 + 8 * a]


def grid_sample(xp: Any, input: Any, grid: Any, mode: int, padding: int, align_corners: bool) -> Any:
    op = "grid_sampler"
    dims = _check_grid(op, input, grid, mode, padding)
    sizes = list(input.shape[2:])  # (D,) H, W
    axis_sizes = sizes[::-1]  # W, H(, D) for the grid's x, y(, z)
    if mode == _BICUBIC:
        return _bicubic(xp, input, grid, padding, align_corners, None)[0]
    coords = [_source_index(xp, grid[..., k], axis_sizes[k], padding, align_corners)[0] for k in range(dims)]
    if mode == _NEAREST:
        return _read(xp, input, [xp.rint(c) for c in coords], sizes)[0]
    base = [xp.floor(c) for c in coords]
    out = None
    for offset in _corners(dims):
        corner = [b + o for b, o in zip(base, offset, strict=True)]
        values, _ = _read(xp, input, corner, sizes)
        factors = _linear_factors(coords, base, offset)
        weight = factors[0]
        for f in factors[1:]:
            weight = weight * f
        term = values * xp.expand_dims(weight, 1)
        out = term if out is None else out + term
    return out


def _scatter(xp: Any, target: Any, taps: list[tuple[list[Any], Any, Any]]) -> None:
    """Add each tap's contribution (N, C, *out) at its corner (when in bounds): per channel,
    in output order and, for one output, tap by tap (ATen's loops)."""
    n, c = target.shape[:2]
    dims = len(taps[0][0])
    plane = math.prod(target.shape[2:])
    flats, insides, contributions = [], [], []
    for corner, inside, contribution in taps:
        flat = xp.zeros(inside.shape, dtype=xp.int64)
        for k in reversed(range(dims)):  # (z,) y, x, row-major
            size = target.shape[2 + (dims - 1 - k)]
            flat = flat * size + xp.where(inside, corner[k], 0).astype(xp.int64)
        flats.append(flat)
        insides.append(inside)
        contributions.append(contribution)
    flat = xp.stack(flats, axis=-1)
    inside = xp.stack(insides, axis=-1)
    batch = xp.arange(n).reshape((n,) + (1,) * (inside.ndim - 1))
    contribution = xp.stack(contributions, axis=-1)
    for channel in range(c):
        index = ((batch * c + channel) * plane + flat)[inside]
        add_at(xp, target.reshape(-1), index, contribution[:, channel][inside])


def grid_sample_backward(
    xp: Any, grad_output: Any, input: Any, grid: Any, mode: int, padding: int, align_corners: bool,
    output_mask: Any,
) -> tuple[Any, Any]:
    """(input gradient, grid gradient), as ATen's backward kernels accumulate them."""
    op = "grid_sampler_backward"
    dims = _check_grid(op, input, grid, mode, padding)
    expected = (grid.shape[0], input.shape[1]) + tuple(grid.shape[1:-1])
    if tuple(grad_output.shape) != expected:
        raise KernelError(f"{op}: expected grad_output of shape {list(expected)}, got {list(grad_output.shape)}")
    sizes = list(input.shape[2:])
    axis_sizes = sizes[::-1]
    want_input = output_mask is None or bool(output_mask[0])
    grad_input = xp.zeros_like(input) if want_input else None
    if mode == _BICUBIC:
        _, grad_grid, grad_input = _bicubic(xp, input, grid, padding, align_corners, (grad_output, grad_input))
        return grad_input, grad_grid
    pairs = [_source_index(xp, grid[..., k], axis_sizes[k], padding, align_corners) for k in range(dims)]
    coords, mults = [p[0] for p in pairs], [p[1] for p in pairs]
    grad_grid = xp.zeros_like(grid)
    if mode == _NEAREST:
        if want_input:
            corner = [xp.rint(c) for c in coords]
            _, inside = _read(xp, input, corner, sizes)
            _scatter(xp, grad_input, [(corner, inside, grad_output)])
        return grad_input, grad_grid
    base = [xp.floor(c) for c in coords]
    partial = [xp.zeros(grid.shape[:-1], dtype=grid.dtype) for _ in range(dims)]
    terms = []
    for offset in _corners(dims):
        corner = [b + o for b, o in zip(base, offset, strict=True)]
        values, inside = _read(xp, input, corner, sizes)
        factors = _linear_factors(coords, base, offset)
        weight = factors[0]
        for f in factors[1:]:
            weight = weight * f
        terms.append((corner, inside, weight, values, factors, offset))
    channels = input.shape[1]
    for channel in range(channels):  # ATen: per output position, channels in order, corners in order
        g = grad_output[:, channel]
        for _, inside, _, values, factors, offset in terms:
            val = values[:, channel]
            for k in range(dims):
                product = val
                for j in range(dims):
                    if j != k:
                        product = product * factors[j]
                step = xp.where(inside, product * g, 0.0)
                partial[k] = partial[k] + step if offset[k] == 1 else partial[k] - step
    if want_input:
        _scatter(xp, grad_input, [(corner, inside, grad_output * xp.expand_dims(weight, 1))
                                  for corner, inside, weight, _, _, _ in terms])
    for k in range(dims):
        grad_grid[..., k] = mults[k] * partial[k]
    return grad_input, grad_grid


def _bicubic(
    xp: Any, input: Any, grid: Any, padding: int, align_corners: bool, backward: tuple[Any, Any] | None,
) -> tuple[Any, Any, Any]:
    """(output, grid gradient, input gradient) of 2-d bicubic sampling: sixteen taps, each read
    through the padding (get_value_bounded), Keys' weights with A = -0.75."""
    height, width = input.shape[2:]
    (ix, gx_mult), (iy, gy_mult) = (_unnormalize(grid[..., 0], width, align_corners),
                                    _unnormalize(grid[..., 1], height, align_corners))
    x0, y0 = xp.floor(ix), xp.floor(iy)
    tx, ty = ix - x0, iy - y0
    cx, cy = _cubic_weights(tx), _cubic_weights(ty)

    def tap(i: int, j: int) -> tuple[list[Any], Any, Any]:
        x = _pad_coordinates(xp, x0 - 1 + i, width, padding, align_corners)[0]
        y = _pad_coordinates(xp, y0 - 1 + j, height, padding, align_corners)[0]
        corner = [xp.trunc(x), xp.trunc(y)]
        values, inside = _read(xp, input, corner, [height, width])
        return corner, values, inside

    taps = {(i, j): tap(i, j) for i in range(4) for j in range(4)}
    if backward is None:
        rows = []
        for j in range(4):
            row = None
            for i in range(4):
                term = xp.expand_dims(cx[i], 1) * taps[(i, j)][1]
                row = term if row is None else row + term
            rows.append(row)
        out = None
        for j in range(4):
            term = xp.expand_dims(cy[j], 1) * rows[j]
            out = term if out is None else out + term
        return out, None, None
    grad_output, grad_input = backward
    gcx, gcy = _cubic_grads(tx), _cubic_grads(ty)
    gx = xp.zeros(grid.shape[:-1], dtype=grid.dtype)
    gy = xp.zeros(grid.shape[:-1], dtype=grid.dtype)
    for channel in range(input.shape[1]):
        g = grad_output[:, channel]
        for i in range(4):
            for j in range(4):
                val = taps[(i, j)][1][:, channel]
                gx = gx - val * gcx[i] * cy[j] * g
                gy = gy - val * gcy[j] * cx[i] * g
    if grad_input is not None:
        _scatter(xp, grad_input, [
            (taps[(i, j)][0], taps[(i, j)][2], grad_output * xp.expand_dims(cx[i], 1) * xp.expand_dims(cy[j], 1))
            for i in range(4) for j in range(4)
        ])
    grad_grid = xp.stack([gx_mult * gx, gy_mult * gy], axis=-1)
    return None, grad_grid, grad_input


# -- _upsample_bilinear2d_aa (UpSampleKernel.cpp, antialias=True) ----------------------------------
def _aa_axis(in_size: int, out_size: int, align_corners: bool, scale: float | None) -> tuple[list[int], list[list[float]]]:
    """(first index, weights (out, max taps)): ATen's _compute_indices_min_size_weights_aa with
    the triangle filter, its support widened by the scale when downsampling, normalized (host
    numbers: they depend on the sizes only)."""
    s = _linear_scale(in_size, out_size, align_corners, scale)
    support = (2 * 0.5) * s if s >= 1.0 else 2 * 0.5
    taps = int(math.ceil(support)) * 2 + 1
    invscale = 1.0 / s if s >= 1.0 else 1.0
    starts, weights = [], []
    for i in range(out_size):
        center = s * (i + 0.5)
        xmin = max(int(center - support + 0.5), 0)
        xsize = min(max(min(int(center + support + 0.5), in_size) - xmin, 0), taps)
        row = [max(0.0, 1.0 - abs((j + xmin - center + 0.5) * invscale)) for j in range(xsize)]
        total = 0.0
        for w in row:
            total += w
        if total != 0.0:
            row = [w / total for w in row]
        starts.append(xmin)
        weights.append(row + [0.0] * (taps - xsize))
    return starts, weights


def _aa_taps(input_shape: tuple[int, ...], sizes: list[int], align_corners: bool, scales: list[Any]) -> list[Any]:
    return [_aa_axis(input_shape[2 + k], sizes[k], align_corners, scales[k]) for k in range(2)]


def upsample_bilinear2d_aa_forward(
    xp: Any, input: Any, sizes: list[int], align_corners: bool, scales: list[Any], op: str
) -> Any:
    """Width first, then height (dims whose size does not change are left as they are); each
    output adds its weighted inputs one by one."""
    axes = _aa_taps(tuple(input.shape), sizes, align_corners, scales)
    out = input
    for k in (1, 0):
        axis = 2 + k
        if input.shape[axis] == sizes[k]:
            continue
        starts, weights = axes[k]
        total = None
        for j in range(len(weights[0]) if weights else 0):
            index = xp.asarray([min(start + j, input.shape[axis] - 1) for start in starts], dtype=xp.int64)
            shape = [1] * out.ndim
            shape[axis] = sizes[k]
            column = xp.asarray([row[j] for row in weights], dtype=out.dtype).reshape(shape)
            term = xp.take(out, index, axis=axis) * column
            total = term if total is None else total + term
        out = total
    return xp.ascontiguousarray(out)


def upsample_bilinear2d_aa_grad(
    xp: Any, grad: Any, input_shape: tuple[int, ...], align_corners: bool, scales: list[Any]
) -> Any:
    """Each output gradient times ``wy * wx`` added onto its window, in output order."""
    sizes = list(grad.shape[2:])
    (ys, wy), (xs, wx) = _aa_taps(input_shape, sizes, align_corners, scales)
    height, width = input_shape[2:]
    n, c = grad.shape[:2]
    result = xp.zeros((n * c, height * width), dtype=grad.dtype)
    flat_grad = grad.reshape(n * c, sizes[0] * sizes[1])
    source, target, factor_y, factor_x = [], [], [], []
    for oh in range(sizes[0]):
        for ow in range(sizes[1]):
            for y, wy_value in enumerate(wy[oh]):
                for x, wx_value in enumerate(wx[ow]):
                    if (wy_value == 0 and y > 0) or (wx_value == 0 and x > 0):
                        continue  # a padded tap: it adds nothing
                    row, col = min(ys[oh] + y, height - 1), min(xs[ow] + x, width - 1)
                    source.append(oh * sizes[1] + ow)
                    target.append(row * width + col)
                    factor_y.append(wy_value)
                    factor_x.append(wx_value)
    if source:
        picked = flat_grad[:, xp.asarray(source, dtype=xp.int64)]
        factors = (picked * xp.asarray(factor_y, dtype=grad.dtype)) * xp.asarray(factor_x, dtype=grad.dtype)
        planes = xp.arange(n * c).reshape(-1, 1)
        add_at(xp, result, (planes, xp.asarray(target, dtype=xp.int64).reshape(1, -1)), factors)
    return result.reshape(input_shape)
