"""The kernel registry: qualified schema name -> function ``(xp, *args)``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["KERNELS", "KernelError", "register", "kernel_for"]

Kernel = Callable[..., Any]
KERNELS: dict[str, Kernel] = {}


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


def kernel_for(qualified_name: str) -> Kernel | None:
    return KERNELS.get(qualified_name)
