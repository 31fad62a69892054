"""Whether eager tensor operations record autograd graphs (``no_grad`` and friends)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["enable_grad", "is_grad_enabled", "no_grad", "set_grad_enabled"]

_state = threading.local()


def is_grad_enabled() -> bool:
    """True when eager operations on tensors that require grad record a backward graph."""
    return getattr(_state, "enabled", True)


@contextmanager
def set_grad_enabled(mode: bool) -> Iterator[None]:
    """Turn graph recording on or off inside the ``with`` block (per thread)."""
    previous = is_grad_enabled()
    _state.enabled = bool(mode)
    try:
        yield
    finally:
        _state.enabled = previous


def no_grad():  # noqa: ANN201 - a context manager
    """``with no_grad():`` runs eager operations without recording a graph."""
    return set_grad_enabled(False)


def enable_grad():  # noqa: ANN201 - a context manager
    """``with enable_grad():`` records graphs again inside a ``no_grad`` block."""
    return set_grad_enabled(True)
