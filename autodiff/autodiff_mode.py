"""Which ops symbolic autodiff takes: PyTorch's choice, or gradview's wider one.

PyTorch's JIT differentiates a fixed set of ops symbolically (its
``isDifferentiable``); every other op that needs a gradient stays outside the
DifferentiableGraphs and is differentiated by eager autograd as it runs.
gradview has gradient formulas for more ops than that (``sum``, ``cat``,
``select``, lists of tensors...), which can make bigger DifferentiableGraphs,
but then the picture is not the one PyTorch makes. So there are two modes:

* ``torch`` (the default): exactly PyTorch's set, so the slicing, the
  DifferentiableGraphs and the errors of ``differentiate`` are PyTorch's;
* ``extended``: every op gradview has a formula for, on request.

The mode decides only what ``differentiate`` and the slicer accept: a node
left outside every DifferentiableGraph still gets its gradient when the
program runs, as eager autograd gives it one in PyTorch.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["AutodiffMode", "DEFAULT_AUTODIFF_MODE", "autodiff_mode"]


class AutodiffMode(StrEnum):
    TORCH = "torch"
    EXTENDED = "extended"


DEFAULT_AUTODIFF_MODE = AutodiffMode.TORCH


def autodiff_mode(value: str | AutodiffMode | None) -> AutodiffMode:
    """The mode named by ``value`` (None: the default); a clear error for any other name."""
    if value is None:
        return DEFAULT_AUTODIFF_MODE
    try:
        return AutodiffMode(value)
    except ValueError:
        choices = ", ".join(repr(mode.value) for mode in AutodiffMode)
        raise ValueError(f"unknown autodiff mode {value!r}: expected one of {choices}") from None
