"""The UI thread first: background threads of the app's process step aside
for a moment after each key.

Python runs one thread at a time. While layouts are computed, the app's own
background threads (drawing the steps ahead, building canvas geometries on
the layout service's pool threads) are pure Python too, and a step key's
handler got a third of the interpreter: at 5,000 ops a step took 242 ms
while they ran against 52 ms without them. Here the UI thread *claims* the
interpreter for a short while (:func:`claim`, on each step key), and the
background loops call :func:`step_aside` every few hundred items: it sleeps
(releasing the interpreter) until the claim has passed. The thread that
claimed never waits on its own claim, so code shared by both (drawing a
step) may call :func:`step_aside` anywhere.

The claim is one float written by one thread and read by others (CPython
reads and writes a float attribute atomically), so no lock is needed.
"""

from __future__ import annotations

import threading
import time

__all__ = ["claim", "step_aside", "CLAIM_SECONDS"]

CLAIM_SECONDS = 0.2  # a step's handler and the repaint of the canvas rows
_NAP = 0.01  # how long a background thread sleeps before looking again


class _Claim:
    until = 0.0  # time.monotonic() until which background threads step aside
    owner = 0  # the thread that claimed (it never steps aside for itself)


_CLAIM = _Claim()


def claim(seconds: float = CLAIM_SECONDS) -> None:
    """The calling thread (the UI thread) wants the interpreter for ``seconds``."""
    _CLAIM.owner = threading.get_ident()
    _CLAIM.until = time.monotonic() + seconds


def step_aside() -> None:
    """In a background loop: sleep while the UI thread's claim lasts."""
    if _CLAIM.until <= time.monotonic() or _CLAIM.owner == threading.get_ident():
        return
    while (left := _CLAIM.until - time.monotonic()) > 0:
        time.sleep(min(left, _NAP))
