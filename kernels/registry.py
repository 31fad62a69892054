"""The kernel registry: qualified schema name -> function ``(xp, *args)``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["KERNELS", "FAST_PATHS", "UNKNOWN_DTYPE", "GUARD_SAME_NUMERIC", "GUARD_FLOAT", "KernelError", "register", "register_fast_path", "kernel_for", "fast_path_for"]

Kernel = Callable[..., Any]
KERNELS: dict[str, Kernel] = {}

# A fast path replaces a general kernel when static facts allow it: it receives
# ``xp``, the qualified name, each input's dtype name (None when unknown or not
# a tensor) and each input's constant value (any non-number marker when not
# constant), and returns ``(callable, input positions to pass)`` or None.
#
# A dtype of ``UNKNOWN_DTYPE`` marks a tensor whose dtype the types do not say;
# a rule may then return a third element, a guard: the call is only taken when
# the run-time dtypes pass it, the general kernel runs otherwise.
FastPath = Callable[[Any, str, list[Any], list[Any]], tuple[Any, ...] | None]
UNKNOWN_DTYPE = "?"
GUARD_SAME_NUMERIC = "same numeric dtype"  # both operands: one numeric (non-bool) dtype
GUARD_FLOAT = "float dtype"  # the operand is floating point
FAST_PATHS: dict[str, FastPath] = {}


class KernelError(ValueError):
    """A kernel refused its inputs (bad shapes, bad dims); the interpreter adds the node."""


def register(*names: str) -> Callable[[Kernel], Kernel]:
    """Register a kernel under one or more qualified names (``"aten::add.Tensor"``)."""

    def decorate(fn: Kernel) -> Kernel:
        for name in names:
            if name in KERNELS:
                raise ValueError(f"kernel {name} registered twice")
            KERNELS[name] = fn
        return fn

    return decorate


def register_fast_path(*names: str) -> Callable[[FastPath], FastPath]:
    """Register a compile-time specialization for one or more qualified names."""

    def decorate(fn: FastPath) -> FastPath:
        for name in names:
            FAST_PATHS[name] = fn
        return fn

    return decorate


def kernel_for(qualified_name: str) -> Kernel | None:
    return KERNELS.get(qualified_name)


def fast_path_for(qualified_name: str) -> FastPath | None:
    return FAST_PATHS.get(qualified_name)
