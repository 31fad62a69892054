"""What a check (``b``: first divergent step, ``G``: gradient check) hands the viewer.

One :class:`CheckResult` per run of a check: the viewer shows it in place of
the previous result (its message, then its rows), so one check's table never
stays under another check's message. No Textual imports: the app renders it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

__all__ = ["CheckCancelled", "CheckResult", "CheckRow", "Status"]

# "pass": everything checked agreed; "fail": something differs or failed to run;
# "unavailable": nothing could be checked (no example inputs, no such step);
# "cancelled": stopped before the end (the check's key again, or escape).
Status = Literal["pass", "fail", "unavailable", "cancelled"]


class CheckCancelled(Exception):
    """Raised by a check's (or an export's) progress callback to stop it between units of
    work (a step, an input, a picture); its text says where."""


@dataclass(frozen=True)
class CheckRow:
    """One compared quantity: a graph output, or the gradient of one input.

    ``name`` says which (``output 0``, ``grad %w1``); ``verdict`` is
    ``"pass"``, ``"FAIL"`` or ``"skipped"``; ``note`` says why it was skipped,
    how it failed, or what else to know.
    """

    name: str
    shape: tuple[int, ...] | None
    max_abs_error: float
    max_rel_error: float
    verdict: str
    checked: int = 0
    note: str = ""


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check.

    ``check`` is ``"divergence"`` (``b``) or ``"gradient"`` (``G``). ``step``
    and ``pass_name`` name the step the result belongs to: for ``G`` the step
    that was checked, for ``b`` the first divergent step (None when every
    step agrees). ``graph`` is the graph of that step (``main``,
    ``forward 0``, ``backward 0``, ``backward executor 0``), ``what`` the
    output or gradient that differs (empty when none). ``message`` is one
    line for the status bar; ``rows`` the table under it (may be empty).
    """

    check: Literal["divergence", "gradient"]
    status: Status
    message: str
    step: int | None = None
    pass_name: str | None = None
    graph: str = ""
    what: str = ""
    max_abs_error: float = math.nan
    max_rel_error: float = math.nan
    rows: tuple[CheckRow, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status == "pass"
