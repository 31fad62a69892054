"""Time parse_ir on every malformed case of tests/ir/test_parser_errors.py.

The issue asks for one clear error per malformed text "in under a second";
the tests assert the error and its place, this script measures the time.
Each case runs ``--repeat`` times; the table shows the best and the worst run,
and the last line the largest time any case took (its worst run), against
``--limit`` seconds (exit status 1 when over).

    .venv/bin/python benchmarks/parse_errors.py [--repeat R] [--limit S]
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root, for tests.ir

from gradview.ir import IRParseError, parse_ir
from tests.ir.test_parser_errors import CASES


def time_case(text: str | bytes, repeat: int) -> tuple[float, float, str]:
    """Best and worst wall time of ``parse_ir(text)`` over ``repeat`` runs, and the error summary."""
    times = []
    summary = ""
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        try:
            parse_ir(text)
        except IRParseError as err:
            summary = err.summary
        else:
            summary = "(no error!)"
        times.append(time.perf_counter() - start)
    return min(times), max(times), summary


def main() -> int:
    cli = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.add_argument("--repeat", type=int, default=3)
    cli.add_argument("--limit", type=float, default=1.0, help="seconds a case may take (default 1)")
    args = cli.parse_args()

    rows = []
    for case in CASES:
        text = case.values[0]
        best, worst, summary = time_case(text, args.repeat)
        rows.append((worst, best, case.id, len(text), summary))
    rows.sort(reverse=True)
    print(f"{'worst':>9} {'best':>9} {'size':>10}  case: error")
    for worst, best, name, size, summary in rows:
        print(f"{worst:>8.4f}s {best:>8.4f}s {size:>10,}  {name}: {summary[:70]}")
    worst, _, name, _, _ = rows[0]
    verdict = "under" if worst < args.limit else "OVER"
    print(f"{len(rows)} malformed cases; max time per case: {worst:.3f} s ({name}), "
          f"{verdict} the {args.limit:g} s limit")
    return 0 if worst < args.limit else 1


if __name__ == "__main__":
    sys.exit(main())
