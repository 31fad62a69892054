"""Fuzz gradview for N minutes: seeded mutants of every input kind through check, trace, saved and export.

    .venv/bin/python scripts/fuzz.py --minutes 30 [--seed 1] [--scale 20] [--keep DIR] [--kinds ir,saved_trace]

The same fuzzer as tests/fuzz/ (which runs a fixed minute of it in CI), taking
turns between the input kinds in rounds of a few mutants, each round from its
own seed, until the time is up; ``--scale`` sizes the expensive mutations
(nesting 200 x scale deep, long lines of 50 KB x scale). It prints one line per
kind: mutants, runs, and the runs that were ok, clean errors, tracebacks, hangs
and empty messages. Every failing mutant is saved under ``--keep`` (a new
temporary folder by default) with the command and what happened; copy it to
tests/fuzz/regressions/<kind>-<what>/ once fixed. Exit status 1 when any failed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fuzz.engine import FAILURES, KINDS, Report, fuzz  # after the path

ROUND = 8  # mutants per kind per turn


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="how long to fuzz (default 10)")
    parser.add_argument("--seed", type=int, default=1, help="the first round's seed (default 1)")
    parser.add_argument("--scale", type=int, default=20, help="size of nesting and long-line mutations (default 20)")
    parser.add_argument("--budget", type=float, default=60.0, help="seconds one command may take before it counts as a hang")
    parser.add_argument("--keep", type=Path, help="where failing mutants are saved (default: a new temporary folder)")
    parser.add_argument("--kinds", help=f"comma-separated input kinds (default all: {', '.join(KINDS)})")
    args = parser.parse_args(argv)
    kinds = args.kinds.split(",") if args.kinds else list(KINDS)
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        parser.error(f"unknown input kinds {', '.join(unknown)} (known: {', '.join(KINDS)})")
    keep = args.keep or Path(tempfile.mkdtemp(prefix="gradview-fuzz-"))
    reports = {kind: Report(kind) for kind in kinds}
    end = time.monotonic() + args.minutes * 60
    seed = args.seed
    while time.monotonic() < end:
        for kind in kinds:
            if time.monotonic() >= end:
                break
            fuzz(kind, seed, count=ROUND, scale=args.scale, budget=args.budget, keep=keep, report=reports[kind])
        seed += 1
    for report in reports.values():
        print(report.line())
        for failure in report.failures:
            print(f"  {failure}")
    failed = sum(report.counts[name] for report in reports.values() for name in FAILURES)
    total = sum(report.runs for report in reports.values())
    print(f"total: {total} runs, {failed} failed; seeds {args.seed} to {seed}; failing mutants in {keep}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
