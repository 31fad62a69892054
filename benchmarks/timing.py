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


def best_times_interleaved(fns: dict[str, Callable[[], object]], rounds: int = 10, number: int = 20) -> dict[str, float]:
    """Seconds per call of each of ``fns``, the best of ``rounds`` rounds, the
    contenders taking turns within every round: a burst of load on the machine
    then hits all of them instead of whichever happened to be running, so
    their ratios hold better than separate ``best_time`` runs."""
    best = dict.fromkeys(fns, float("inf"))
    for fn in fns.values():
        fn()  # warm-up: plans compile, caches fill
    for _ in range(rounds):
        for name, fn in fns.items():
            gc.collect()
            start = time.perf_counter()
            for _ in range(number):
                fn()
            best[name] = min(best[name], (time.perf_counter() - start) / number)
    return best
