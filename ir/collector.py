"""Pause Python's cyclic garbage collector while building large graphs.

Nodes and values point at each other, so every one of them is tracked by the
cyclic collector, and its full passes over a 10,000-node graph made building
one grow faster than linearly. Work that creates many nodes at once runs
inside ``paused_gc()``; the collector is restored (and catches up) after.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_gc"]


@contextmanager
def paused_gc() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
