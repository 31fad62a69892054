"""Tensor factories: ``zeros``, ``ones``, ``full``, ``arange``, ``rand_like`` and ``randn_like``.

A factory makes a tensor from sizes and numbers, not from another tensor's
values, so it has no gradient: ``zeros``/``ones``/``full``/``arange`` take no
tensor input at all, and ``rand_like``/``randn_like`` read only their input's
shape and dtype (their no-gradient reason is declared with the other ``*_like``
ops in :mod:`gradview.ops.casts`).

The kernels (``kernels/factories.py``) follow PyTorch's dtype inference:
``zeros``/``ones`` give the default float, ``full`` takes its fill value's kind,
``arange`` gives int64 when start, end and step are all ints. Their shape rules
are in :mod:`gradview.ops.pointwise`, next to the dtype and device argument
helpers they share with the casts.
"""

from __future__ import annotations

from gradview.kernels import factories as kernels

from .registry import kernel

__all__: list[str] = []

# -- aten::zeros, ones, full -----------------------------------------------------------------
kernel("aten::zeros")(kernels.zeros)
kernel("aten::ones")(kernels.ones)
kernel("aten::full")(kernels.full)

# -- aten::arange ----------------------------------------------------------------------------
kernel("aten::arange")(kernels.arange)
kernel("aten::arange.start")(kernels.arange_start)
kernel("aten::arange.start_step")(kernels.arange_start_step)

# -- aten::rand_like, randn_like (values from xp.random, never PyTorch's) --------------------
kernel("aten::rand_like")(kernels.rand_like)
kernel("aten::randn_like")(kernels.randn_like)
