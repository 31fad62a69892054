"""The one timing rule every benchmark uses: the best of several rounds.

The minimum over rounds is the figure least disturbed by other work on a
noisy machine; garbage is collected before each round so one round does not
pay for the last one's objects.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable


def best_time(fn: Callable[[], object], repeat: int = 1, number: int = 1) -> float:
    """Seconds per call of ``fn``: the best of ``repeat`` rounds of ``number`` calls."""
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best

