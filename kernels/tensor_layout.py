"""Layout ops: constant padding and the channel/space shuffles of nn.functional.

* ``constant_pad_nd``: pads (or, with negative widths, crops) the last dims, the
  pairs in ``pad`` running from the last dim backwards, as PyTorch's
  ``constant_pad_nd``; new positions hold ``value`` cast to the tensor's dtype.
* ``pixel_shuffle``/``pixel_unshuffle``: PyTorch's reshape-permute-reshape
  between ``(*, C*r*r, H, W)`` and ``(*, C, H*r, W*r)``.
* ``channel_shuffle``: ``(N, C, *)`` seen as ``(N, g, C/g, *)``, the two group
  dims swapped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .protocol import KernelError

__all__: list[str] = []


def constant_pad_nd(xp: Any, self: Any, pad: Sequence[int], value: Any = 0) -> Any:
    widths = [int(p) for p in pad]
    if len(widths) % 2:
        raise KernelError(f"constant_pad_nd: length of pad must be even but instead it equals {len(widths)}")
    if len(widths) // 2 > self.ndim:
        raise KernelError(
            f"constant_pad_nd: length of pad should be no more than twice the number of dimensions of the "
            f"input. Pad length is {len(widths)} while the input has {self.ndim} dimensions."
        )
    shape = list(self.shape)
    crop: list[slice] = [slice(None)] * self.ndim
    grow = [(0, 0)] * self.ndim
    for pair in range(len(widths) // 2):
        axis = self.ndim - 1 - pair
        before, after = widths[2 * pair], widths[2 * pair + 1]
        size = shape[axis] + before + after
        if size < 0:
            raise KernelError(
                f"constant_pad_nd: the input size {shape[axis]}, plus negative padding {before} and {after} "
                f"resulted in a negative output size, which is invalid. Check dimension {axis} of your input."
            )
        crop[axis] = slice(max(-before, 0), shape[axis] - max(-after, 0))
        grow[axis] = (max(before, 0), max(after, 0))
    cropped = self[tuple(crop)]
    fill = xp.asarray(value).astype(self.dtype)
    if not any(g != (0, 0) for g in grow):
        return cropped.copy()
    out_shape = [max(c, 0) + b + a for c, (b, a) in zip(cropped.shape, grow, strict=True)]
    out = xp.empty(out_shape, dtype=self.dtype)
    out[...] = fill
    inner = tuple(slice(b, b + c) for c, (b, _) in zip(cropped.shape, grow, strict=True))
    out[inner] = cropped
    return out


def _check_rank(op: str, self: Any) -> None:
    if self.ndim < 3:
        raise KernelError(f"{op} expects input to have at least 3 dimensions, but got input with {self.ndim} dimension(s)")


def pixel_shuffle(xp: Any, self: Any, upscale_factor: int) -> Any:
    _check_rank("pixel_shuffle", self)
    r = int(upscale_factor)
    if r <= 0:
        raise KernelError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *batch, c, h, w = self.shape
    if c % (r * r):
        raise KernelError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                          f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    n = len(batch)
    out = self.reshape(*batch, c // (r * r), r, r, h, w)
    out = out.transpose(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return out.reshape(*batch, c // (r * r), h * r, w * r)


def pixel_unshuffle(xp: Any, self: Any, downscale_factor: int) -> Any:
    _check_rank("pixel_unshuffle", self)
    r = int(downscale_factor)
    if r <= 0:
        raise KernelError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *batch, c, h, w = self.shape
    if h % r or w % r:
        raise KernelError(f"pixel_unshuffle expects height {h} and width {w} to be divisible by downscale_factor {r}")
    n = len(batch)
    out = self.reshape(*batch, c, h // r, r, w // r, r)
    out = out.transpose(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return out.reshape(*batch, c * r * r, h // r, w // r)


def channel_shuffle(xp: Any, self: Any, groups: int) -> Any:
    if self.ndim < 3:
        raise KernelError(f"channel_shuffle expects input to have at least 3 dimensions, but got input with "
                          f"{self.ndim} dimension(s)")
    g = int(groups)
    if g <= 0:
        raise KernelError(f"Number of groups to divide channels in must be positive. Value of groups:{g}")
    n, c, *rest = self.shape
    if c % g:
        raise KernelError(f"Number of channels must be divisible by groups. Got {c} channels and {g} groups.")
    out = self.reshape(n, g, c // g, *rest).swapaxes(1, 2)
    return out.reshape(self.shape).copy()
