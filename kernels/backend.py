"""Array backends: NumPy on the CPU, CuPy on a GPU (and, for tests, the marker backend).

Kernels only ever call ``xp.<function>``; this module is the one place that
imports CuPy, and only when the cupy backend is asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy

__all__ = ["Backend", "get_backend", "BackendUnavailable"]


class BackendUnavailable(RuntimeError):
    """The requested backend cannot run here (no CuPy, no GPU)."""


@dataclass(frozen=True)
class Backend:
    name: str
    xp: ModuleType

    def to_device(self, value: Any) -> Any:
        """Move host arrays (and arrays inside lists/tuples) onto this backend."""
        if self.xp is numpy:
            return value
        if isinstance(value, numpy.ndarray | numpy.generic):
            return self.xp.asarray(value)
        if isinstance(value, list):
            return [self.to_device(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self.to_device(v) for v in value)
        return value

    def to_host(self, value: Any) -> Any:
        """Bring results back as NumPy arrays (0-d results stay arrays)."""
        if isinstance(value, numpy.generic):
            return numpy.asarray(value)
        if self.xp is not numpy and isinstance(value, self.xp.ndarray):
            return self.xp.asnumpy(value)
        if isinstance(value, list | tuple):
            if all(type(v) in _PLAIN_TYPES for v in value):
                return value  # sizes and other Python lists: nothing to bring back
            items = [self.to_host(v) for v in value]
            return items if isinstance(value, list) else tuple(items)
        return value

    def results_to_host(self, results: Any) -> list[Any]:
        """``to_host`` over a graph's results, skipping what is already a host value."""
        return [r if type(r) in _PLAIN_TYPES else self.to_host(r) for r in results]


# Values that are the same on the host and the device (for NumPy: also arrays).
_PLAIN_TYPES = frozenset({int, float, bool, str, type(None), numpy.ndarray})
_NUMPY = Backend("numpy", numpy)
_CACHE: dict[str, Backend] = {"numpy": _NUMPY}


def get_backend(name: str = "numpy") -> Backend:
    """The backend called ``name``: "numpy", "cupy", or "marker" (a test backend:
    NumPy arrays behind a device boundary, see marker_backend.py)."""
    backend = _CACHE.get(name)
    if backend is not None:
        return backend
    if name == "marker":
        # NumPy behind a device boundary, for tests: arrays crossing mid-graph raise.
        from .marker_backend import marker_backend  # tests only

        _CACHE[name] = marker_backend()
        return _CACHE[name]
    if name != "cupy":
        raise ValueError(f"unknown backend {name!r}: use 'numpy', 'cupy' or 'marker' (tests)")
    try:
        import cupy  # optional, GPU machines only
    except ImportError as exc:
        raise BackendUnavailable(f"backend 'cupy' needs CuPy ({exc}); install gradview[gpu]") from None
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise BackendUnavailable("backend 'cupy' needs a CUDA GPU; none is visible")
    except cupy.cuda.runtime.CUDARuntimeError as exc:
        raise BackendUnavailable(f"backend 'cupy' needs a CUDA GPU ({exc})") from None
    backend = Backend("cupy", cupy)
    _CACHE[name] = backend
    return backend
