"""The discrete Fourier transforms whose input and result are both real, as
``torch.fft`` computes them on the CPU: the complex-to-real ``irfft``/``hfft``
family of a real input, and ``fftshift``/``ifftshift``.

PyTorch treats a real input of ``irfft``/``hfft`` as complex with a zero
imaginary part (``promote_tensor_fft``; integers first become the default
float dtype, half precision is refused on the CPU), crops or zero-pads it to
the transform's half-spectrum shape (``resize_fft_input``) and runs one
complex-to-real transform (``_fft_c2r``, pocketfft on the CPU, as
``xp.fft`` is here). The sizes follow ``canonicalize_fft_c2r_shape_and_dim_args``
in SpectralOps.cpp: the last transformed dim's output length is ``n`` (or
``s[-1]``), by default ``2 * (size - 1)``; the input keeps ``n // 2 + 1`` of it.

``hfft`` is the forward-direction transform of a Hermitian signal: for a real
input, ``conj`` is the identity, so it is ``irfft`` with the normalization's
direction swapped ("backward" scales ``irfft`` by ``1/n``, leaves ``hfft``
unscaled). The numbers agree with torch's to a few ulps: torch scales once
by the whole transform's factor, NumPy axis by axis.

The gradient of a real input (FunctionsManual.cpp's ``fft_c2r_backward``,
then the real part of the complex gradient, then the resize undone) is
:func:`c2r_backward`: ``rfft`` of the gradient, scaled as the forward was,
the bins a onesided spectrum stands for twice doubled, cropped or padded back
to the input's sizes. It is the forward map's transpose, so its own gradient
is the forward op again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .dtypes import DEFAULT_FLOAT, is_floating, is_integral
from .protocol import KernelError

__all__ = [
    "fft_irfft", "fft_hfft", "fft_irfftn", "fft_hfftn", "fft_irfft2", "fft_hfft2",
    "fft_fftshift", "fft_ifftshift", "fft_c2r_backward", "fft_c2rn_backward",
]

_SCALES = ("backward", "forward", "ortho")


def _real_input(op: str, x: Any) -> Any:
    """``promote_tensor_fft``: integers and bools compute in the default float; half is refused."""
    if is_integral(x.dtype) or x.dtype.kind == "b":
        return x.astype(DEFAULT_FLOAT)
    if not is_floating(x.dtype) or x.dtype.itemsize < 4:
        raise KernelError(f"{op}: unsupported dtype {x.dtype} (PyTorch's CPU FFT takes float and double)")
    return x


def _norm(op: str, norm: str | None, hermitian: bool) -> str:
    """The NumPy ``irfft`` norm giving torch's scaling: hfft's direction is swapped."""
    if norm is None:
        norm = "backward"
    if norm not in _SCALES:
        raise KernelError(f'{op}: invalid normalization mode: "{norm}"')
    if hermitian:
        return {"backward": "forward", "forward": "backward", "ortho": "ortho"}[norm]
    return norm


def _wrap(op: str, dim: int, rank: int) -> int:
    if rank == 0 or not -rank <= dim < rank:
        raise KernelError(f"{op}: dim {dim} is out of range for a tensor of {rank} dims")
    return dim + rank if dim < 0 else dim


def _plan(
    op: str, x: Any, s: Sequence[int] | None, dim: Sequence[int] | None, one_dim: bool
) -> tuple[list[int], list[int]]:
    """The transformed dims and their output sizes (the last is the real output length)."""
    rank = x.ndim
    if one_dim:
        dims = [_wrap(op, int(dim[0]), rank)]  # type: ignore[index]
        sizes = [2 * (x.shape[dims[0]] - 1) if s is None or s[0] is None else int(s[0])]
    else:
        if dim is not None:
            dims = [_wrap(op, int(d), rank) for d in dim]
            if len(set(dims)) != len(dims):
                raise KernelError(f"{op}: dims must be unique, got {list(dim)}")
        if s is not None:
            if dim is not None and len(dim) != len(s):
                raise KernelError(f"{op}: when given, dim and shape arguments must have the same length")
            if len(s) > rank:
                raise KernelError(f"{op}: got shape with {len(s)} values but input tensor only has {rank} dimensions")
            if dim is None:
                dims = list(range(rank - len(s), rank))
            sizes = [x.shape[d] if int(n) == -1 else int(n) for d, n in zip(dims, s, strict=True)]
            if int(s[-1]) == -1:
                sizes[-1] = 2 * (x.shape[dims[-1]] - 1)
        else:
            if dim is None:
                dims = list(range(rank))
            sizes = [x.shape[d] for d in dims]
            if sizes:
                sizes[-1] = 2 * (x.shape[dims[-1]] - 1)
        if not dims:
            raise KernelError(f"{op} must transform at least one axis")
    for n in sizes:
        if n < 1:
            raise KernelError(f"{op}: invalid number of data points ({n}) specified")
    return dims, sizes


def _c2r(op: str, xp: Any, x: Any, s: Any, dim: Any, norm: str | None, hermitian: bool, one_dim: bool) -> Any:
    x = _real_input(op, x)
    dims, sizes = _plan(op, x, s, dim, one_dim)
    scale = _norm(op, norm, hermitian)
    if one_dim:
        result = xp.fft.irfft(x, n=sizes[0], axis=dims[0], norm=scale)
    else:
        result = xp.fft.irfftn(x, s=sizes, axes=dims, norm=scale)
    return xp.ascontiguousarray(result.astype(x.dtype, copy=False))


def fft_irfft(xp: Any, self: Any, n: int | None = None, dim: int = -1, norm: str | None = None) -> Any:
    """``torch.fft.irfft`` of a real half spectrum."""
    return _c2r("fft_irfft", xp, self, [n], [dim], norm, False, True)


def fft_hfft(xp: Any, self: Any, n: int | None = None, dim: int = -1, norm: str | None = None) -> Any:
    """``torch.fft.hfft`` of a real half signal: ``irfft`` with the scaling's direction swapped."""
    return _c2r("fft_hfft", xp, self, [n], [dim], norm, True, True)


def fft_irfftn(
    xp: Any, self: Any, s: Sequence[int] | None = None, dim: Sequence[int] | None = None, norm: str | None = None
) -> Any:
    return _c2r("fft_irfftn", xp, self, s, dim, norm, False, False)


def fft_hfftn(
    xp: Any, self: Any, s: Sequence[int] | None = None, dim: Sequence[int] | None = None, norm: str | None = None
) -> Any:
    return _c2r("fft_hfftn", xp, self, s, dim, norm, True, False)


def fft_irfft2(
    xp: Any, self: Any, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1), norm: str | None = None
) -> Any:
    return _c2r("fft_irfft2", xp, self, s, dim, norm, False, False)


def fft_hfft2(
    xp: Any, self: Any, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1), norm: str | None = None
) -> Any:
    return _c2r("fft_hfft2", xp, self, s, dim, norm, True, False)


# -- the gradient of a real input ------------------------------------------------------------------
def _resize(xp: Any, x: Any, dims: Sequence[int], sizes: Sequence[int]) -> Any:
    """Crop or zero-pad ``x`` at the end of each of ``dims`` to ``sizes`` (``resize_fft_input``)."""
    crop = [slice(None)] * x.ndim
    pad = [(0, 0)] * x.ndim
    for d, n in zip(dims, sizes, strict=True):
        if x.shape[d] > n:
            crop[d] = slice(0, n)
        else:
            pad[d] = (0, n - x.shape[d])
    return xp.pad(x[tuple(crop)], pad)


def _backward(
    op: str, xp: Any, grad: Any, self: Any, s: Any, dim: Any, norm: str | None, hermitian: bool, one_dim: bool
) -> Any:
    """``fft_c2r_backward`` taken to the real input: ``Re(rfftn(grad))``, doubled bins, resize undone."""
    x = _real_input(op, self)
    dims, sizes = _plan(op, x, s, dim, one_dim)
    scale = _norm(op, norm, hermitian)
    # irfft's scale: "backward" is 1/n, so its transpose is rfftn scaled by 1/n ("forward").
    transposed = {"backward": "forward", "forward": "backward", "ortho": "ortho"}[scale]
    spectrum = xp.fft.rfftn(grad, s=sizes, axes=dims, norm=transposed).real
    last, n = dims[-1], sizes[-1]
    doubled = n - spectrum.shape[last]
    if doubled > 0:
        index = [slice(None)] * spectrum.ndim
        index[last] = slice(1, 1 + doubled)
        spectrum[tuple(index)] *= 2
    back = _resize(xp, spectrum, dims, [x.shape[d] for d in dims])
    return xp.ascontiguousarray(back.astype(grad.dtype, copy=False))


def fft_c2r_backward(
    xp: Any, grad: Any, self: Any, n: int | None, dim: int, norm: str | None, hermitian: bool
) -> Any:
    """The gradient of ``irfft``/``hfft`` (``hermitian``) for its real input ``self``."""
    op = "fft_hfft" if hermitian else "fft_irfft"
    return _backward(op, xp, grad, self, [n], [dim], norm, hermitian, True)


def fft_c2rn_backward(
    xp: Any, grad: Any, self: Any, s: Sequence[int] | None, dim: Sequence[int] | None, norm: str | None,
    hermitian: bool,
) -> Any:
    """The gradient of ``irfft2``/``irfftn``/``hfft2``/``hfftn`` for its real input ``self``."""
    op = "fft_hfftn" if hermitian else "fft_irfftn"
    return _backward(op, xp, grad, self, s, dim, norm, hermitian, False)


# -- fftshift, ifftshift ---------------------------------------------------------------------------
def _shift(op: str, xp: Any, self: Any, dim: Sequence[int] | int | None, inverse: bool) -> Any:
    """A roll by ``size // 2`` (``(size + 1) // 2`` for the inverse) along ``dim`` (all by default)."""
    if dim is None:
        dims = list(range(self.ndim))
    else:
        dims = [_wrap(op, int(d), max(self.ndim, 1)) for d in ([dim] if isinstance(dim, int) else dim)]
    if not dims or self.ndim == 0:
        return self.copy()
    shifts = [(self.shape[d] + 1) // 2 if inverse else self.shape[d] // 2 for d in dims]
    return xp.roll(self, shifts, axis=dims).copy()


def fft_fftshift(xp: Any, self: Any, dim: Sequence[int] | int | None = None) -> Any:
    return _shift("fft_fftshift", xp, self, dim, False)


def fft_ifftshift(xp: Any, self: Any, dim: Sequence[int] | int | None = None) -> Any:
    return _shift("fft_ifftshift", xp, self, dim, True)
