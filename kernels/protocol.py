"""What a kernel is, and the contract of its compile-time fast paths.

A kernel is a function ``(xp, *args)``: ``xp`` is the array namespace (NumPy
or CuPy), the rest are the operator's arguments in schema order. Kernels know
nothing of graphs or op names; ``gradview.ops`` binds each overload to one.

A fast path replaces a general kernel when static facts allow it: it receives
``xp``, the qualified name, each input's dtype name (None when unknown or not
a tensor) and each input's constant value (any non-number marker when not
constant), and returns ``(callable, input positions to pass)`` or None. A
dtype of ``UNKNOWN_DTYPE`` marks a tensor whose dtype the types do not say; a
fast path may then return a third element, a guard: the call is only taken
when the run-time dtypes pass it, the general kernel runs otherwise.

Compiled code runs with NumPy's floating-point warnings off (PyTorch computes
``exp(1000) = inf`` without a word), so a fast path need not set ``errstate``
itself. A fast path's callable may carry ``inline``, a Python expression the
compiled code writes in place of the call: ``{0}``, ``{1}``, ... stand for the
arguments and ``{fn}`` for the callable itself (a hot call that usually has
nothing to do, as ``_grad_sum_to_size`` with no size, then costs no call).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["Kernel", "FastPath", "KernelError", "UNKNOWN_DTYPE", "GUARD_SAME_NUMERIC", "GUARD_FLOAT"]

Kernel = Callable[..., Any]
FastPath = Callable[[Any, str, list[Any], list[Any]], tuple[Any, ...] | None]
UNKNOWN_DTYPE = "?"
GUARD_SAME_NUMERIC = "same numeric dtype"  # both operands: one numeric (non-bool) dtype
GUARD_FLOAT = "float dtype"  # the operand is floating point


class KernelError(ValueError):
    """A kernel refused its inputs (bad shapes, bad dims); the interpreter adds the node."""
