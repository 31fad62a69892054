"""Convolutions (1-d, 2-d and 3-d, strided, padded, dilated, grouped, transposed) and their backward.

One routine does the work: ``_correlate`` takes every kernel-sized window of
the zero-padded input at once (``sliding_window_view``, stepping by
``stride`` between windows and by ``dilation`` inside them, a view with no
copy) and contracts windows with the weight in one ``einsum``, which NumPy
turns into a single matrix product (im2col + GEMM, as PyTorch's CPU
``slow_conv2d`` does). Everything else reduces to it:

* a **transposed** convolution is the adjoint of a convolution: spread the
  input out by ``stride`` (zeros between samples), pad it by
  ``dilation * (k - 1) - padding`` and correlate with the flipped kernel whose
  in/out channels are swapped;
* the **input gradient** of a convolution is the transposed convolution of
  ``grad_output`` (and the other way round for a transposed one);
* the **weight gradient** contracts the same windows of the input with
  ``grad_output`` (for a transposed convolution, the windows of ``grad_output``
  with the input); the **bias gradient** sums ``grad_output`` over the batch
  and the spatial dims.

Schemas: ``conv1d``/``conv2d`` (numeric or ``'same'``/``'valid'`` padding,
unbatched inputs too), ``convolution``, ``_convolution`` (what tracing
records), ``_convolution_mode`` (traced string padding), ``convolution_backward``,
``_slow_conv2d_forward`` and ``_slow_conv2d_backward`` (the pair PyTorch's
JIT differentiates). Float16 is computed in float32 and cast back; integer
tensors are convolved exactly, as PyTorch's CPU kernels do.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .dtypes import to_dtype
from .protocol import KernelError

__all__ = [
    "conv",
    "conv1d",
    "conv2d",
    "conv_backward",
    "conv_nd",
    "convolution",
    "convolution_backward",
    "convolution_mode",
    "slow_conv2d_backward",
    "slow_conv2d_forward",
    "traced_convolution",
]

_SPATIAL = "xyz"  # einsum letters of output positions
_TAPS = "ijk"  # einsum letters of kernel taps


# -- arguments --------------------------------------------------------------------------------
def _expand(op: str, name: str, value: Any, dims: int) -> list[int]:
    """A per-dim parameter: one int (or a one-element list) stands for every dim."""
    items = [value] if isinstance(value, int) else list(value)
    if len(items) == 1:
        items = items * dims
    if len(items) != dims:
        raise KernelError(f"{op}: expected {name} to be a single integer value or a list of {dims} values, got {items}")
    return [int(v) for v in items]


def _compute_dtype(dtype: Any) -> Any:
    return to_dtype("Float") if dtype == to_dtype("Half") else dtype


def _check_dtypes(op: str, input: Any, weight: Any, bias: Any) -> None:
    if input.dtype == to_dtype("Bool"):
        raise KernelError(f"{op}: bool tensors are not supported")
    for name, tensor in (("weight", weight), ("bias", bias)):
        if tensor is not None and tensor.dtype != input.dtype:
            raise KernelError(f"{op}: expected {name} of the input's dtype {input.dtype}, got {tensor.dtype}")


class _Geometry:
    """The checked parameters of one convolution call (``dims`` spatial dims)."""

    def __init__(
        self, op: str, input: Any, weight: Any, bias: Any, stride: Any, padding: Any, dilation: Any,
        transposed: bool, output_padding: Any, groups: int,
    ) -> None:
        self.dims = dims = weight.ndim - 2
        if weight.ndim < 3:
            raise KernelError(f"{op}: weight should have at least three dimensions, got shape {list(weight.shape)}")
        if input.ndim != weight.ndim:
            raise KernelError(
                f"{op}: expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight "
                f"{list(weight.shape)}, but got {input.ndim}-dimensional input of size {list(input.shape)} instead"
            )
        self.stride = _expand(op, "stride", stride, dims)
        self.padding = _expand(op, "padding", padding, dims)
        self.dilation = _expand(op, "dilation", dilation, dims)
        self.output_padding = _expand(op, "output_padding", output_padding, dims) if transposed else [0] * dims
        self.transposed, self.groups = transposed, groups
        self.kernel = [int(k) for k in weight.shape[2:]]
        if min(self.stride) <= 0:
            raise KernelError(f"{op}: non-positive stride is not supported, got {self.stride}")
        if min(self.padding) < 0:
            raise KernelError(f"{op}: negative padding is not supported, got {self.padding}")
        if min(self.dilation) <= 0:
            raise KernelError(f"{op}: dilation should be greater than zero, got {self.dilation}")
        if groups <= 0:
            raise KernelError(f"{op}: non-positive groups is not supported, got {groups}")
        if min(self.output_padding) < 0:
            raise KernelError(f"{op}: negative output_padding is not supported, got {self.output_padding}")
        for o, s, d in zip(self.output_padding, self.stride, self.dilation, strict=True):
            if o >= max(s, d):
                raise KernelError(
                    f"{op}: output padding must be smaller than either stride or dilation, got output_padding "
                    f"{self.output_padding}, stride {self.stride}, dilation {self.dilation}"
                )
        out_channels = weight.shape[1] * groups if transposed else weight.shape[0]
        in_channels = weight.shape[0] if transposed else weight.shape[1] * groups
        if weight.shape[0] % groups:
            raise KernelError(
                f"{op}: given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                f"but got weight of size {list(weight.shape)} instead"
            )
        if input.shape[1] != in_channels:
            raise KernelError(
                f"{op}: given groups={groups}, weight of size {list(weight.shape)}, expected input "
                f"{list(input.shape)} to have {in_channels} channels, but got {input.shape[1]} channels instead"
            )
        if bias is not None and tuple(bias.shape) != (out_channels,):
            raise KernelError(
                f"{op}: given weight of size {list(weight.shape)}, expected bias to be 1-dimensional with "
                f"{out_channels} elements, but got bias of size {list(bias.shape)} instead"
            )
        self.out_channels = out_channels
        spatial = [int(s) for s in input.shape[2:]]
        if not transposed:
            padded = [s + 2 * p for s, p in zip(spatial, self.padding, strict=True)]
            extent = [d * (k - 1) + 1 for d, k in zip(self.dilation, self.kernel, strict=True)]
            if any(e > p for e, p in zip(extent, padded, strict=True)):
                raise KernelError(
                    f"{op}: calculated padded input size per channel: {padded}, kernel size (dilated): {extent}; "
                    "kernel size can't be greater than actual input size"
                )
        self.output_size = [self.output_extent(i, s) for i, s in enumerate(spatial)]
        if min(self.output_size, default=1) <= 0:
            raise KernelError(f"{op}: the output would have size {self.output_size} for input {list(input.shape)}")

    def output_extent(self, i: int, size: int) -> int:
        """The output's size along spatial dim ``i`` for an input of ``size`` there."""
        s, p, d, k = self.stride[i], self.padding[i], self.dilation[i], self.kernel[i]
        if self.transposed:
            return (size - 1) * s - 2 * p + d * (k - 1) + self.output_padding[i] + 1
        return (size + 2 * p - d * (k - 1) - 1) // s + 1


# -- the routines ---------------------------------------------------------------------------------
def _pad(xp: Any, x: Any, low: Sequence[int], high: Sequence[int]) -> Any:
    """Zero-pad the spatial dims of (N, C, *S) by ``low``/``high``; negative amounts crop."""
    crop = (slice(None), slice(None)) + tuple(
        slice(max(-lo, 0), x.shape[2 + i] - max(-hi, 0)) for i, (lo, hi) in enumerate(zip(low, high, strict=True))
    )
    x = x[crop]
    widths = [(0, 0), (0, 0)] + [(max(lo, 0), max(hi, 0)) for lo, hi in zip(low, high, strict=True)]
    return xp.pad(x, widths) if any(w != (0, 0) for w in widths) else x


def _windows(xp: Any, x: Any, kernel: Sequence[int], stride: Sequence[int], dilation: Sequence[int]) -> Any:
    """Every window of (N, C, *S) as a view (N, C, *O, *K): O steps by stride, K by dilation."""
    dims = len(kernel)
    extent = tuple(d * (k - 1) + 1 for d, k in zip(dilation, kernel, strict=True))
    view = xp.lib.stride_tricks.sliding_window_view(x, extent, axis=tuple(range(2, 2 + dims)))
    steps = tuple(slice(None, None, s) for s in stride) + tuple(slice(None, None, d) for d in dilation)
    return view[(slice(None), slice(None)) + steps]


def _correlate(
    xp: Any, x: Any, weight: Any, stride: Sequence[int], low: Sequence[int], high: Sequence[int],
    dilation: Sequence[int], groups: int,
) -> Any:
    """Grouped cross-correlation of x (N, C, *S) with weight (Co, C/groups, *K), no bias."""
    dims = weight.ndim - 2
    windows = _windows(xp, _pad(xp, x, low, high), weight.shape[2:], stride, dilation)
    n, c = windows.shape[:2]
    grouped = windows.reshape(n, groups, c // groups, *windows.shape[2:])
    w = weight.reshape(groups, weight.shape[0] // groups, *weight.shape[1:])
    o, k = _SPATIAL[:dims], _TAPS[:dims]
    out = xp.einsum(f"ngc{o}{k},gmc{k}->ngm{o}", grouped, w, optimize=True)
    return out.reshape(n, weight.shape[0], *out.shape[3:])


def _transpose_weight(xp: Any, weight: Any, groups: int) -> Any:
    """(Ci, Co/groups, *K) -> (Co, Ci/groups, *K), flipped: the kernel of the adjoint convolution."""
    ci, cog = weight.shape[:2]
    w = weight.reshape(groups, ci // groups, cog, *weight.shape[2:]).swapaxes(1, 2)
    w = w.reshape(cog * groups, ci // groups, *weight.shape[2:])
    return xp.flip(w, axis=tuple(range(2, weight.ndim)))


def _transposed(
    xp: Any, x: Any, weight: Any, stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int],
    output_padding: Sequence[int], groups: int,
) -> Any:
    """Transposed convolution of x (N, Ci, *S) with weight (Ci, Co/groups, *K)."""
    n, c, *spatial = x.shape
    spread = xp.zeros((n, c, *((s - 1) * st + 1 for s, st in zip(spatial, stride, strict=True))), dtype=x.dtype)
    spread[(slice(None), slice(None)) + tuple(slice(None, None, st) for st in stride)] = x
    reach = [d * (k - 1) - p for d, k, p in zip(dilation, weight.shape[2:], padding, strict=True)]
    high = [r + o for r, o in zip(reach, output_padding, strict=True)]
    return _correlate(xp, spread, _transpose_weight(xp, weight, groups), [1] * len(reach), reach, high, dilation, groups)


def _weight_grad(
    xp: Any, x: Any, grad: Any, kernel: Sequence[int], stride: Sequence[int], padding: Sequence[int],
    dilation: Sequence[int], groups: int,
) -> Any:
    """d(sum(grad * conv(x, w))) / dw for a convolution of x (N, C, *S) giving grad (N, Co, *O)."""
    dims = len(kernel)
    windows = _windows(xp, _pad(xp, x, padding, padding), kernel, stride, dilation)
    # The windows may reach fewer positions than grad when x was cropped; they never reach more.
    windows = windows[(slice(None), slice(None)) + tuple(slice(0, s) for s in grad.shape[2:])]
    n, c = windows.shape[:2]
    grouped = windows.reshape(n, groups, c // groups, *windows.shape[2:])
    g = grad.reshape(n, groups, grad.shape[1] // groups, *grad.shape[2:])
    o, k = _SPATIAL[:dims], _TAPS[:dims]
    out = xp.einsum(f"ngc{o}{k},ngm{o}->gmc{k}", grouped, g, optimize=True)
    return out.reshape(grad.shape[1], c // groups, *kernel)


def conv_nd(xp: Any, input: Any, weight: Any, bias: Any, geometry: _Geometry) -> Any:
    """The convolution the geometry describes, bias added, for batched input."""
    dtype = input.dtype
    acc = _compute_dtype(dtype)
    x, w = input.astype(acc, copy=False), weight.astype(acc, copy=False)
    g = geometry
    if g.transposed:
        out = _transposed(xp, x, w, g.stride, g.padding, g.dilation, g.output_padding, g.groups)
    else:
        out = _correlate(xp, x, w, g.stride, g.padding, g.padding, g.dilation, g.groups)
    if bias is not None:
        out = out + bias.astype(acc, copy=False).reshape(1, -1, *([1] * g.dims))
    return xp.ascontiguousarray(out).astype(dtype, copy=False)


# -- forward schemas ---------------------------------------------------------------------------------
def convolution(
    xp: Any, input: Any, weight: Any, bias: Any, stride: Any, padding: Any, dilation: Any,
    transposed: bool, output_padding: Any, groups: int, op: str = "convolution",
) -> Any:
    _check_dtypes(op, input, weight, bias)
    geometry = _Geometry(op, input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
    return conv_nd(xp, input, weight, bias, geometry)


def traced_convolution(
    xp: Any, input: Any, weight: Any, bias: Any, stride: Any, padding: Any, dilation: Any, transposed: bool,
    output_padding: Any, groups: int, benchmark: bool, deterministic: bool, cudnn_enabled: bool,
    allow_tf32: bool = True,
) -> Any:
    """What tracing records for nn.Conv*d: convolution plus backend flags (ignored on the CPU)."""
    return convolution(
        xp, input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, "_convolution"
    )


def _batchify(op: str, input: Any, dims: int) -> tuple[Any, bool]:
    """conv1d/2d accept an unbatched (C, *S) input: add the batch dim, say to drop it."""
    if input.ndim == dims + 1:
        return input[None], True
    if input.ndim != dims + 2:
        raise KernelError(
            f"{op}: expected {dims + 1}-D (unbatched) or {dims + 2}-D (batched) input, "
            f"but got input of size {list(input.shape)}"
        )
    return input, False


def _same_padding(op: str, weight: Any, stride: Any, dilation: Any, padding: str) -> tuple[list[int], list[int]]:
    """(low, high) padding for 'valid' or 'same' (the odd extra on the high side, as PyTorch)."""
    dims = weight.ndim - 2
    if padding == "valid":
        return [0] * dims, [0] * dims
    if padding != "same":
        raise KernelError(f"{op}: invalid padding string: {padding!r} (expected 'same' or 'valid')")
    if any(s != 1 for s in _expand(op, "stride", stride, dims)):
        raise KernelError(f"{op}: padding='same' is not supported for strided convolutions")
    total = [d * (k - 1) for d, k in zip(_expand(op, "dilation", dilation, dims), weight.shape[2:], strict=True)]
    return [t // 2 for t in total], [t - t // 2 for t in total]


def _conv_mode(
    xp: Any, op: str, input: Any, weight: Any, bias: Any, stride: Any, padding: Any, dilation: Any, groups: int,
    dims: int | None = None,
) -> Any:
    """conv1d/conv2d/_convolution_mode: numeric or string padding; unbatched input where dims is given."""
    unbatched = False
    if dims is not None:
        if weight.ndim != dims + 2:
            raise KernelError(f"{op}: expected a {dims + 2}-D weight, got shape {list(weight.shape)}")
        input, unbatched = _batchify(op, input, dims)
    _check_dtypes(op, input, weight, bias)
    if isinstance(padding, str):
        low, high = _same_padding(op, weight, stride, dilation, padding)
        if low != high:  # pad the extra row/column first, then convolve symmetrically
            input = _pad(xp, input, [0] * len(low), [h - lo for lo, h in zip(low, high, strict=True)])
        padding = low
    geometry = _Geometry(op, input, weight, bias, stride, padding, dilation, False, 0, groups)
    out = conv_nd(xp, input, weight, bias, geometry)
    return out[0] if unbatched else out


def conv1d(
    xp: Any, input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
    groups: int = 1,
) -> Any:
    return _conv_mode(xp, "conv1d", input, weight, bias, stride, padding, dilation, groups, 1)


def conv2d(
    xp: Any, input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
    groups: int = 1,
) -> Any:
    return _conv_mode(xp, "conv2d", input, weight, bias, stride, padding, dilation, groups, 2)


def convolution_mode(
    xp: Any, input: Any, weight: Any, bias: Any, stride: Any, padding: str, dilation: Any, groups: int
) -> Any:
    """What tracing records for a convolution with padding='same'/'valid' (batched input only)."""
    return _conv_mode(xp, "_convolution_mode", input, weight, bias, stride, padding, dilation, groups)


def slow_conv2d_forward(
    xp: Any, self: Any, weight: Any, kernel_size: Any, bias: Any, stride: Any, padding: Any
) -> Any:
    """PyTorch's CPU conv2d kernel (no dilation, no groups), which its JIT differentiates."""
    op = "_slow_conv2d_forward"
    _check_slow(op, self, weight, kernel_size)
    return convolution(xp, self, weight, bias, stride, padding, 1, False, 0, 1, op)


def _check_slow(op: str, input: Any, weight: Any, kernel_size: Any) -> None:
    if input.ndim != 4:
        raise KernelError(f"{op}: expected 4D input tensor, but got: {list(input.shape)}")
    if weight.ndim != 4 or list(weight.shape[2:]) != _expand(op, "kernel_size", kernel_size, 2):
        raise KernelError(
            f"{op}: expected a 4-D weight whose kernel is kernel_size={list(kernel_size)}, "
            f"got weight of size {list(weight.shape)}"
        )


# -- backward ------------------------------------------------------------------------------------------
def convolution_backward(
    xp: Any, grad_output: Any, input: Any, weight: Any, bias_sizes: Any, stride: Any, padding: Any,
    dilation: Any, transposed: bool, output_padding: Any, groups: int, output_mask: Any,
    op: str = "convolution_backward",
) -> tuple[Any, Any, Any]:
    """(grad_input, grad_weight, grad_bias), None where output_mask is False."""
    _check_dtypes(op, input, weight, None)
    g = _Geometry(op, input, weight, None, stride, padding, dilation, transposed, output_padding, groups)
    expected = (input.shape[0], g.out_channels, *g.output_size)
    if tuple(grad_output.shape) != expected:
        raise KernelError(f"{op}: expected grad_output of shape {list(expected)}, got {list(grad_output.shape)}")
    dtype = grad_output.dtype
    acc = _compute_dtype(dtype)
    gy, x, w = (t.astype(acc, copy=False) for t in (grad_output, input, weight))
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        if transposed:
            grad_input = _correlate(xp, gy, w, g.stride, g.padding, g.padding, g.dilation, groups)
            # output_padding past the stride (dilation > stride) adds outputs no input reached.
            grad_input = grad_input[(slice(None), slice(None)) + tuple(slice(0, s) for s in input.shape[2:])]
        else:
            # The input positions past the last window get no gradient: output_padding covers them.
            spare = [size - ((o - 1) * s - 2 * p + d * (k - 1) + 1) for size, o, s, p, d, k in zip(
                input.shape[2:], gy.shape[2:], g.stride, g.padding, g.dilation, g.kernel, strict=True)]
            grad_input = _transposed(xp, gy, w, g.stride, g.padding, g.dilation, spare, groups)
        grad_input = xp.ascontiguousarray(grad_input).astype(dtype, copy=False)
    if output_mask[1]:
        if transposed:
            grad_weight = _weight_grad(xp, gy, x, g.kernel, g.stride, g.padding, g.dilation, groups)
        else:
            grad_weight = _weight_grad(xp, x, gy, g.kernel, g.stride, g.padding, g.dilation, groups)
        grad_weight = xp.ascontiguousarray(grad_weight).astype(dtype, copy=False)
    if output_mask[2]:
        grad_bias = xp.sum(gy, axis=(0, *range(2, gy.ndim))).astype(dtype, copy=False)
    return grad_input, grad_weight, grad_bias


def slow_conv2d_backward(
    xp: Any, grad_output: Any, self: Any, weight: Any, kernel_size: Any, stride: Any, padding: Any,
    output_mask: Any,
) -> tuple[Any, Any, Any]:
    """The backward PyTorch's JIT pairs with _slow_conv2d_forward."""
    op = "_slow_conv2d_backward"
    _check_slow(op, self, weight, kernel_size)
    return convolution_backward(
        xp, grad_output, self, weight, None, stride, padding, 1, False, 0, 1, output_mask, op
    )


def conv_backward(
    xp: Any, grad_output: Any, input: Any, weight: Any, stride: Any, padding: Any, dilation: Any, groups: int,
    output_mask: Any,
) -> tuple[Any, Any, Any]:
    """The backward of conv1d/conv2d/_convolution_mode, whatever their input: an
    unbatched input is batched for convolution_backward and its gradient unbatched
    again; padding='same' with an odd total pads one side more, which is the
    symmetric convolution with the larger padding minus its first output, so
    grad_output gets a zero there first."""
    op = "conv_backward"
    dims = weight.ndim - 2
    unbatched = input.ndim == dims + 1
    if unbatched:
        input, grad_output = input[None], grad_output[None]
    if isinstance(padding, str):
        low, high = _same_padding(op, weight, stride, dilation, padding)
        if low != high:
            front = [h - lo for lo, h in zip(low, high, strict=True)]
            grad_output = _pad(xp, grad_output, front, [0] * dims)
        padding = high
    grad_input, grad_weight, grad_bias = convolution_backward(
        xp, grad_output, input, weight, None, stride, padding, dilation, False, 0, groups, output_mask, op
    )
    if unbatched and grad_input is not None:
        grad_input = grad_input[0]
    return grad_input, grad_weight, grad_bias


def conv(
    xp: Any, input: Any, weight: Any, bias: Any, stride: Any, padding: Any, dilation: Any, groups: int
) -> Any:
    """conv1d/conv2d/conv3d by the weight's rank (unbatched input, 'same'/'valid' too): the forward
    the double backward of ``gradview::conv_backward`` convolves with."""
    return _conv_mode(xp, "conv", input, weight, bias, stride, padding, dilation, groups, weight.ndim - 2)
