"""Keep freed memory in the process for reuse, as a PyTorch process does.

A training step allocates the same arrays every step (activations, their
gradients) and frees them by the end of it. Under glibc's default settings
``malloc`` serves a block of 128 KiB or more (a 64x256 float64 array is
exactly 128 KiB) with a fresh ``mmap`` and unmaps it on ``free``, and it
returns the free memory at the top of the heap to the kernel once it passes
a threshold: every step then asks the kernel for fresh pages and pays a page
fault for each 4 KiB page it touches. PyTorch's process does not pay this
(its import alone raises glibc's thresholds, and its allocator keeps memory),
which made the same NumPy code 1.5x faster in a process that had imported
torch.

So when the runtime loads, ``keep_freed_memory`` asks glibc, once, to serve
blocks under 32 MiB from the heap, to keep up to 256 MiB of freed memory at
the top of the heap instead of trimming it, and to grow the heap 16 MiB at a
time. The memory stays owned by the process and is reused by the next
allocation of any size: results are unchanged, only fewer page faults.

Set ``GRADVIEW_KEEP_FREED_MEMORY=0`` before importing gradview to leave the
allocator as it is (also left alone: other C libraries than glibc, and a
process whose user already tuned glibc's malloc through ``MALLOC_*_``
variables or ``GLIBC_TUNABLES``).
"""

from __future__ import annotations

import ctypes
import os

__all__ = ["ENVIRONMENT_VARIABLE", "SETTINGS", "allocator_setting", "keep_freed_memory"]

ENVIRONMENT_VARIABLE = "GRADVIEW_KEEP_FREED_MEMORY"

# mallopt parameter numbers from glibc's <malloc.h>.
_M_TRIM_THRESHOLD = -1
_M_TOP_PAD = -2
_M_MMAP_THRESHOLD = -3

# (name, mallopt parameter, value). 32 MiB is the largest mmap threshold every
# glibc accepts (older ones refuse more); arrays past it are rare and big
# enough that a page fault per page is small beside the work done on them.
SETTINGS: tuple[tuple[str, int, int], ...] = (
    ("M_MMAP_THRESHOLD", _M_MMAP_THRESHOLD, 32 << 20),
    ("M_TRIM_THRESHOLD", _M_TRIM_THRESHOLD, 256 << 20),
    ("M_TOP_PAD", _M_TOP_PAD, 16 << 20),
)

# The user's own glibc malloc tuning, which we leave alone.
_USER_TUNING = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_")

_setting: str = "not applied yet"


def allocator_setting() -> str:
    """What ``keep_freed_memory`` did in this process, in words (for benchmarks and bug reports)."""
    return _setting


def keep_freed_memory(environ: dict[str, str] | None = None) -> bool:
    """Apply ``SETTINGS`` through glibc's ``mallopt``; True when every setting took.

    A no-op (False) when ``GRADVIEW_KEEP_FREED_MEMORY`` is ``0``, when the C
    library is not glibc, or when the user already tuned glibc's malloc.
    Calling it again applies the same settings again (harmless).
    """
    global _setting  # one process-wide fact, set once at load
    env = os.environ if environ is None else environ
    if env.get(ENVIRONMENT_VARIABLE, "1").strip().lower() in ("0", "false", "no", "off"):
        _setting = f"left as it is ({ENVIRONMENT_VARIABLE}={env[ENVIRONMENT_VARIABLE]})"
        return False
    if any(name in env for name in _USER_TUNING) or "glibc.malloc" in env.get("GLIBC_TUNABLES", ""):
        _setting = "left as it is (glibc's malloc already tuned through the environment)"
        return False
    mallopt = _glibc_mallopt()
    if mallopt is None:
        _setting = "left as it is (the C library is not glibc)"
        return False
    refused = [name for name, parameter, value in SETTINGS if mallopt(parameter, value) != 1]
    if refused:
        _setting = f"partly applied (glibc refused {', '.join(refused)})"
        return False
    _setting = "freed memory kept for reuse (" + ", ".join(f"{n}={v >> 20} MiB" for n, _, v in SETTINGS) + ")"
    return True


def _glibc_mallopt() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    """glibc's ``mallopt`` function, or None on another C library (musl, macOS, Windows)."""
    try:
        version = os.confstr("CS_GNU_LIBC_VERSION")  # "glibc 2.36"; only glibc answers
    except (AttributeError, ValueError, OSError):
        return None
    if not version or not version.startswith("glibc"):
        return None
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):
        return None
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return mallopt


keep_freed_memory()
