"""The error a gradient formula raises when it cannot differentiate a node."""

from __future__ import annotations

__all__ = ["DifferentiationError"]


class DifferentiationError(ValueError):
    """A node cannot be differentiated; the message names it."""
