"""Shared helpers for the IR tests: the conformance corpus, a small If graph, a hang guard.

A plain module (not a test file): the tests import from here instead of each
defining their own copy.
"""

from __future__ import annotations

import contextlib
import json
import signal
from collections.abc import Iterator
from pathlib import Path

# The corpus is maintained in the workplace's shared folder beside the
# checkout; tests/data/conformance is a copy, so a clone anywhere else still
# runs the oracle tests. The shared folder wins when it is there.
SHARED = Path(__file__).resolve().parents[3] / "shared"
VENDORED = Path(__file__).resolve().parents[1] / "data" / "conformance"
CONFORMANCE = SHARED / "conformance" if (SHARED / "conformance").is_dir() else VENDORED
ROUNDTRIP_DIR = CONFORMANCE / "roundtrip"
CASES_DIR = CONFORMANCE / "cases"


def corpus_paths() -> list[Path]:
    """Every conformance graph: sorted ``roundtrip/*.ir``, then sorted ``cases/*.ir``."""
    return sorted(ROUNDTRIP_DIR.glob("*.ir")) + sorted(CASES_DIR.glob("*.ir"))


def scalars_of(path: Path) -> dict[str, object]:
    """The scalar inputs a case's header comments give (``# %name = <json>`` lines)."""
    found = {}
    for line in path.read_text().splitlines():
        if not line.startswith("# %"):
            break
        name, _, value = line[3:].partition(" = ")
        found[name.strip()] = json.loads(value)
    return found


def read_graph_text(path: Path) -> str:
    """The IR text of ``path`` without the leading ``# %name = <json>`` lines of a case file.

    Only leading lines that start with ``"# "`` are dropped; the rest of the text
    (trailing newline included) is returned unchanged.
    """
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    start = 0
    while start < len(lines) and lines[start].startswith("# "):
        start += 1
    return "".join(lines[start:])


IF_GRAPH = """graph(%x : Tensor, %c : bool):
  %a : Tensor = aten::relu(%x)
  %r : Tensor = prim::If(%c)
    block0():
      %b : Tensor = aten::sigmoid(%a)
      -> (%b)
    block1():
      %d : Tensor = aten::tanh(%a)
      -> (%d)
  %e : Tensor = aten::neg(%r)
  return (%e)
"""


@contextlib.contextmanager
def hang_guard(seconds: int) -> Iterator[None]:
    """Fail with TimeoutError (instead of hanging forever) if the body runs longer than ``seconds``.

    A hang guard, not a speed assertion. Uses ``signal.alarm``, so it does nothing
    where SIGALRM is missing (Windows).
    """
    if not hasattr(signal, "SIGALRM"):  # pragma: no cover - Windows
        yield
        return

    def _timeout(signum, frame):
        raise TimeoutError(f"parse_ir did not return within {seconds} s (hang?)")

    previous = signal.signal(signal.SIGALRM, _timeout)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
