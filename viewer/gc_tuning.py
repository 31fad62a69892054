"""The cyclic garbage collector's settings while the app runs, and back after.

The trace is millions of small immutable records that live as long as the
app: freezing them keeps the collector from rescanning them (a full
collection took half a second in the middle of a key press), and the layout
worker allocates drawings by the hundred thousand, so higher thresholds keep
the collector from slowing it by a third. Both are process-wide, so
:meth:`CollectorSettings.restore` puts back what it found: tests, scripts
and notebooks run several apps in one process.

Measured on a 1,000-op chain (benchmarks/viewer.py's app figures, 2 shared
cores): with these settings all layouts were ready in 34 s and the worst
step took 168 ms; with the defaults 48 s and 1,158 ms (a collection in the
middle of a step).

What the app builds later (drawings, geometries, pictures made ahead of the
user) is frozen too, every :data:`FREEZE_EVERY_SECONDS`: with the high
thresholds alone the older generations grew to millions of objects, and
the collection of one took 2 to 5 s in the middle of a step at 5,000 ops.
Freezing moves objects to a list the collector never scans (constant time);
the price is that a reference cycle made garbage after its freeze is only
freed once the app ends (:meth:`CollectorSettings.restore` unfreezes).
"""

from __future__ import annotations

import gc

__all__ = ["CollectorSettings", "FREEZE_EVERY_SECONDS"]

_THRESHOLDS = (100_000, 50, 100)
FREEZE_EVERY_SECONDS = 1.0  # the app calls freeze_more on this timer


class CollectorSettings:
    def __init__(self) -> None:
        self._saved: tuple[int, ...] | None = None
        self._was_frozen = False

    def apply(self) -> None:
        """Freeze what exists (no collection first: on a big trace it alone
        costs most of a second) and raise the thresholds."""
        if self._saved is None:
            self._saved = gc.get_threshold()
            self._was_frozen = gc.get_freeze_count() > 0
        gc.freeze()
        gc.set_threshold(*_THRESHOLDS)

    def freeze_more(self) -> None:
        """Freeze what was built since (layouts and geometries live as long as the app)."""
        if self._saved is not None:
            gc.freeze()

    def restore(self) -> None:
        """The thresholds found before, and nothing left frozen that was not."""
        if self._saved is None:
            return
        gc.set_threshold(*self._saved)
        if not self._was_frozen:
            gc.unfreeze()
        self._saved = None
